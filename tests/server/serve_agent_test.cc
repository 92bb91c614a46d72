// `met serve` end to end for issues 8 and 9: logprobs in both shapes and
// prompt logprobs, sampler fields, n choices, structured output (GBNF, JSON
// Schema checked by python3-jsonschema when present) and forced tool calls,
// over real sockets on stories260K and a random-weight chat model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <set>
#include <string>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using PlainJson = nlohmann::json;
using testing::http_call;
using testing::ServeProcess;
using testing::serve_args;
using testing::sse_data;

PlainJson post(const ServeProcess& s, const std::string& path, const std::string& body, int want_status = 200) {
  auto r = http_call(s.port(), "POST", path, body);
  EXPECT_TRUE(r.has_value());
  if (!r) return PlainJson();
  EXPECT_EQ(r->status, want_status) << body << " -> " << r->body;
  return PlainJson::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

// Whether `instance` validates against `schema` by python3-jsonschema; nullopt
// when python3 or the module is missing.
std::optional<bool> python_validates(const PlainJson& schema, const PlainJson& instance, const testing::TempDir& dir) {
  const std::string s = dir.file("schema.json"), i = dir.file("instance.json");
  std::ofstream(s) << schema.dump();
  std::ofstream(i) << instance.dump();
  auto r = testing::run_command("python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])),"
                                " json.load(open(sys.argv[1])))' " + s + " " + i);
  if (r.err.find("No module named") != std::string::npos || r.exit_code == 127) return std::nullopt;
  return r.exit_code == 0;
}

TEST(ServeAgent, CompletionLogprobsComeInTheLegacyShapeAndPromptLogprobsInVllms) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson j = post(server, "/v1/completions",
                      R"({"prompt": "Once upon a time", "max_tokens": 6, "temperature": 0, "logprobs": 2,
                          "prompt_logprobs": 1})");
  const PlainJson& c = j["choices"][0];
  const PlainJson& lp = c["logprobs"];
  ASSERT_TRUE(lp.is_object()) << j;
  ASSERT_EQ(lp["tokens"].size(), lp["token_logprobs"].size());
  ASSERT_EQ(lp["tokens"].size(), lp["top_logprobs"].size());
  EXPECT_EQ(lp["tokens"].size(), j["usage"]["completion_tokens"].get<size_t>());
  for (size_t i = 0; i < lp["tokens"].size(); ++i) {
    EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
    const PlainJson& top = lp["top_logprobs"][i];
    EXPECT_GE(top.size(), 2u);
    EXPECT_TRUE(top.contains(lp["tokens"][i].get<std::string>())) << "the sampled token is always listed";
    if (i > 0) {
      EXPECT_GT(lp["text_offset"][i], lp["text_offset"][i - 1]);
    }
  }
  const PlainJson& plp = c["prompt_logprobs"];
  ASSERT_TRUE(plp.is_array()) << j;
  EXPECT_EQ(plp.size(), j["usage"]["prompt_tokens"].get<size_t>());
  EXPECT_TRUE(plp[0].is_null());
  EXPECT_GE(plp[1].size(), 1u);
}

TEST(ServeAgent, SamplerFieldsAreValidatedOverHttp) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(post(server, "/v1/completions", R"({"prompt": "", "dry_base": 0.5})", 400)["error"]["param"], "dry_base");
  EXPECT_EQ(post(server, "/v1/completions", R"({"prompt": "", "logit_bias": {"100000": 1}})", 400)["error"]["param"],
            "logit_bias");
  const PlainJson ok = post(server, "/v1/completions",
                       R"({"prompt": "Once", "max_tokens": 8, "temperature": 0.9, "seed": 3, "min_p": 0.05,
                           "typical_p": 0.9, "top_n_sigma": 2, "xtc_probability": 0.5, "dry_multiplier": 0.8,
                           "dry_sequence_breakers": ["\n", "."], "lz_penalty": 0.2, "bad_words": ["Lily"],
                           "repetition_penalty": 1.1})");
  EXPECT_EQ(ok["choices"][0]["text"].get<std::string>().find("Lily"), std::string::npos);
}

TEST(ServeAgent, NChoicesAreSeparateSequencesOfOneResponse) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson j = post(server, "/v1/completions",
                      R"({"prompt": "Once upon a time", "max_tokens": 12, "temperature": 1.0, "seed": 5, "n": 3})");
  ASSERT_EQ(j["choices"].size(), 3u) << j;
  std::set<std::string> texts;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["choices"][i]["index"], i);
    texts.insert(j["choices"][i]["text"].get<std::string>());
  }
  EXPECT_GT(texts.size(), 1u) << "choices draw differently";
  EXPECT_LE(j["usage"]["completion_tokens"].get<int>(), 36);

  auto s = http_call(server.port(), "POST", "/v1/completions",
                     R"({"prompt": "Once", "max_tokens": 5, "n": 2, "stream": true, "temperature": 0})");
  ASSERT_TRUE(s.has_value());
  const std::vector<std::string> events = sse_data(s->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), "[DONE]");
  std::set<int> finished;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const PlainJson e = PlainJson::parse(events[i]);
    if (!e["choices"].empty() && !e["choices"][0]["finish_reason"].is_null()) {
      finished.insert(e["choices"][0]["index"].get<int>());
    }
  }
  EXPECT_EQ(finished, (std::set<int>{0, 1}));
}

// A request without temperature samples at the API's documented 1.0, so
// n: 2 gives two different choices (each its own seed), in both endpoints.
TEST(ServeAgent, WithoutATemperatureNChoicesDiffer) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson c = post(server, "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 24,
      "seed": 1, "n": 2})");
  ASSERT_EQ(c["choices"].size(), 2u) << c;
  EXPECT_NE(c["choices"][0]["text"], c["choices"][1]["text"]) << c;
  testing::TempDir dir;
  ServeProcess chat(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(chat.port(), 0) << chat.error();
  const PlainJson j = post(chat, "/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}],
      "max_tokens": 16, "seed": 1, "n": 2})");
  ASSERT_EQ(j["choices"].size(), 2u) << j;
  EXPECT_NE(j["choices"][0]["message"]["content"], j["choices"][1]["message"]["content"]) << j;
  // Explicitly greedy stays greedy: both choices are the same.
  const PlainJson g = post(server, "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 24,
      "seed": 1, "n": 2, "temperature": 0})");
  EXPECT_EQ(g["choices"][0]["text"], g["choices"][1]["text"]) << g;
}

TEST(ServeAgent, BatchedPromptsGiveNChoicesEachInPromptOrder) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson one = post(server, "/v1/completions", R"({"prompt": "The dog", "max_tokens": 6, "temperature": 0})");
  const PlainJson j = post(server, "/v1/completions",
                      R"({"prompt": ["Once upon a time", "The dog"], "max_tokens": 6, "temperature": 0, "n": 2})");
  ASSERT_EQ(j["choices"].size(), 4u) << j;
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(j["choices"][i]["index"], i);
  EXPECT_EQ(j["choices"][2]["text"], one["choices"][0]["text"]) << "choices 2 and 3 are the second prompt's";
  EXPECT_EQ(j["choices"][3]["text"], one["choices"][0]["text"]);
  EXPECT_NE(j["choices"][0]["text"], j["choices"][2]["text"]);
  EXPECT_EQ(j["usage"]["prompt_tokens"].get<int>(),
            post(server, "/tokenize", R"({"prompt": "Once upon a time"})")["count"].get<int>() +
                one["usage"]["prompt_tokens"].get<int>())
      << "each prompt counted once";
}

TEST(ServeAgent, AGbnfGrammarHoldsACompletion) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  for (int seed = 1; seed <= 4; ++seed) {
    const PlainJson j = post(server, "/v1/completions",
                        R"({"prompt": "Was it", "max_tokens": 20, "temperature": 1.5, "seed": )" +
                            std::to_string(seed) + R"(, "grammar": "root ::= (\"yes\" | \"no\") \".\""})");
    const std::string text = j["choices"][0]["text"].get<std::string>();
    EXPECT_TRUE(text == "yes." || text == "no.") << text;
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  }
  EXPECT_EQ(post(server, "/v1/completions", R"({"prompt": "", "grammar": "root ::= missing"})", 400)["error"]["param"],
            "grammar");
}

// A grammar whose parse stacks multiply with each byte (each printable byte
// may later close with any of eight digits) fails its request with a 400
// naming the field, streamed or not, as does one with a dead end, and the
// server goes on serving.
TEST(ServeAgent, AGrammarTooAmbiguousToFollowIsA400AndTheServerServesOn) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  std::string gbnf = R"(root ::= x\nx ::= \"\")";
  for (char d = '1'; d <= '8'; ++d) gbnf += std::string(R"( | [ -~] x \")") + d + R"(\")";
  const std::string body = R"({"prompt": "Once upon a time", "max_tokens": 40, "grammar": ")" + gbnf + "\"";
  const PlainJson j = post(server, "/v1/completions", body + "}", 400);
  EXPECT_EQ(j["error"]["param"], "grammar") << j;
  EXPECT_EQ(j["error"]["type"], "invalid_request_error") << j;
  EXPECT_NE(j["error"]["message"].get<std::string>().find("too ambiguous"), std::string::npos) << j;
  auto s = http_call(server.port(), "POST", "/v1/completions", body + R"(, "stream": true})");
  ASSERT_TRUE(s.has_value());
  const std::vector<std::string> events = sse_data(s->body);
  ASSERT_GE(events.size(), 2u) << s->body;
  EXPECT_EQ(events.back(), "[DONE]");
  const PlainJson frame = PlainJson::parse(events[events.size() - 2], nullptr, false);
  ASSERT_TRUE(frame.is_object()) << s->body;
  EXPECT_EQ(frame["error"]["param"], "grammar") << s->body;
  // A dead end (a class that matches no character) is the request's fault too.
  const std::string dead_end = R"("root ::= \"a\" [^\\x00-\\U0010FFFF]")";
  const PlainJson dead =
      post(server, "/v1/completions", R"({"prompt": "Once", "max_tokens": 5, "grammar": )" + dead_end + "}", 400);
  EXPECT_EQ(dead["error"]["param"], "grammar") << dead;
  EXPECT_NE(dead["error"]["message"].get<std::string>().find("no token of the vocabulary continues"), std::string::npos)
      << dead;
  const PlainJson ok = post(server, "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 5})");
  EXPECT_EQ(ok["usage"]["completion_tokens"], 5) << ok;
}

TEST(ServeAgent, JsonSchemaOutputOfARandomChatModelAlwaysValidates) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson schema = PlainJson::parse(R"({"type": "object", "properties": {
      "name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
      "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3}},
      "required": ["name", "age"], "additionalProperties": false})");
  for (int seed = 1; seed <= 5; ++seed) {
    PlainJson req = {{"messages", PlainJson::array({PlainJson{{"role", "user"}, {"content", "give me a person"}}})},
                {"max_tokens", 300}, {"temperature", 1.0}, {"seed", seed},
                {"response_format", PlainJson{{"type", "json_schema"},
                                         {"json_schema", PlainJson{{"name", "person"}, {"schema", schema}}}}}};
    const PlainJson j = post(server, "/v1/chat/completions", req.dump());
    const std::string content = j["choices"][0]["message"]["content"].get<std::string>();
    const PlainJson out = PlainJson::parse(content, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << "seed " << seed << ": " << content;
    EXPECT_TRUE(out.contains("name") && out["name"].is_string()) << content;
    EXPECT_TRUE(out.contains("age") && out["age"].is_number_integer()) << content;
    if (std::optional<bool> v = python_validates(schema, out, dir)) {
      EXPECT_TRUE(*v) << content;
    }
  }
}

TEST(ServeAgent, ANamedToolChoiceForcesACallWhoseArgumentsFollowTheSchema) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson tools = PlainJson::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters":
      {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10}}, "required": ["city"]}}}])");
  PlainJson req = {{"messages", PlainJson::array({PlainJson{{"role", "user"}, {"content", "weather?"}}})},
              {"max_tokens", 200}, {"temperature", 1.0}, {"seed", 1}, {"tools", tools},
              {"tool_choice", PlainJson{{"type", "function"}, {"function", PlainJson{{"name", "get_weather"}}}}}};
  const PlainJson j = post(server, "/v1/chat/completions", req.dump());
  const PlainJson& msg = j["choices"][0]["message"];
  ASSERT_EQ(msg["tool_calls"].size(), 1u) << j;
  EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(msg["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
  const PlainJson args = PlainJson::parse(msg["tool_calls"][0]["function"]["arguments"].get<std::string>(), nullptr, false);
  ASSERT_TRUE(args.is_object()) << msg;
  EXPECT_TRUE(args["city"].is_string());
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
}

TEST(ServeAgent, ChatLogprobsStreamWithEachDelta) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  auto s = http_call(server.port(), "POST", "/v1/chat/completions",
                     R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 6, "temperature": 0,
                         "logprobs": true, "top_logprobs": 3, "stream": true})");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->status, 200) << s->body;
  size_t entries = 0;
  for (const std::string& e : sse_data(s->body)) {
    if (e == "[DONE]") break;
    const PlainJson j = PlainJson::parse(e);
    if (j["choices"].empty()) continue;
    const PlainJson& lp = j["choices"][0]["logprobs"];
    if (!lp.is_object()) continue;
    for (const PlainJson& entry : lp["content"]) {
      ++entries;
      EXPECT_TRUE(entry["token"].is_string());
      EXPECT_TRUE(entry["bytes"].is_array());
      EXPECT_LE(entry["logprob"].get<double>(), 0.0);
      EXPECT_EQ(entry["top_logprobs"].size(), 3u);
    }
  }
  EXPECT_GE(entries, 1u);
}

TEST(ServeAgent, AThinkingBudgetEndsReasoningExactlyOnARandomReasoningModel) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja");
  testing::TempDir dir;
  const std::string model = testing::make_template_model(dir, "r1.gguf", tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string req = R"({"messages": [{"role": "user", "content": "think"}], "max_tokens": 12,
      "temperature": 1.0, "seed": 2, "ignore_eos": true, "thinking_budget": 5,
      "chat_template_kwargs": {"enable_thinking": true})";
  const PlainJson j = post(server, "/v1/chat/completions", req + "}");
  const PlainJson& msg = j["choices"][0]["message"];
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 5) << "this template thinks only when "
                                                                                "enable_thinking is passed: " << j;
  ASSERT_TRUE(msg.contains("reasoning_content")) << j;
  EXPECT_EQ(msg["reasoning_content"].get<std::string>().find("</think>"), std::string::npos);
  EXPECT_EQ(msg["content"].get<std::string>().find("</think>"), std::string::npos) << "markup never reaches content";

  auto s = http_call(server.port(), "POST", "/v1/chat/completions", req + R"(, "stream": true})");
  ASSERT_TRUE(s.has_value());
  std::string reasoning;
  for (const std::string& e : sse_data(s->body)) {
    if (e == "[DONE]") break;
    const PlainJson c = PlainJson::parse(e);
    if (c["choices"].empty()) continue;
    const PlainJson& d = c["choices"][0]["delta"];
    if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
  }
  EXPECT_EQ(reasoning, msg["reasoning_content"].get<std::string>()) << "streamed and whole agree";
}

// A thinking model under a forced tool_choice thinks first, then writes the
// calls' JSON: the reasoning is reasoning_content, never part of a call or
// content, and a streamed "required" call's arguments come in pieces.
TEST(ServeAgent, ForcedToolCallsOfAThinkingModelKeepReasoningApart) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja");
  testing::TempDir dir;
  const std::string model = testing::make_template_model(dir, "r1.gguf", tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson tools = PlainJson::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters":
      {"type": "object", "properties": {"city": {"enum": ["Paris", "Oslo"]}}, "required": ["city"]}}}])");
  const PlainJson named = {{"type", "function"}, {"function", PlainJson{{"name", "get_weather"}}}};
  for (const PlainJson& choice : {PlainJson("required"), named}) {
    PlainJson req = {{"messages", PlainJson::array({PlainJson{{"role", "user"}, {"content", "weather?"}}})},
                     {"max_tokens", 120}, {"temperature", 1.0}, {"seed", 3}, {"tools", tools},
                     {"tool_choice", choice}, {"thinking_budget", 5},
                     {"chat_template_kwargs", PlainJson{{"enable_thinking", true}}}};
    const PlainJson j = post(server, "/v1/chat/completions", req.dump());
    const PlainJson& msg = j["choices"][0]["message"];
    ASSERT_TRUE(msg.contains("reasoning_content")) << j;
    EXPECT_EQ(msg["reasoning_content"].get<std::string>().find("</think>"), std::string::npos) << j;
    EXPECT_TRUE(msg["content"].is_null() || msg["content"] == "") << "no call text in content: " << j;
    ASSERT_GE(msg["tool_calls"].size(), 1u) << j;
    for (const PlainJson& call : msg["tool_calls"]) {
      EXPECT_EQ(call["function"]["name"], "get_weather");
      const PlainJson args = PlainJson::parse(call["function"]["arguments"].get<std::string>(), nullptr, false);
      ASSERT_TRUE(args.is_object()) << call;
      EXPECT_TRUE(args["city"] == "Paris" || args["city"] == "Oslo") << call;
    }
    const std::string reason = j["choices"][0]["finish_reason"];
    EXPECT_TRUE(reason == "tool_calls" || reason == "length") << reason;

    req["stream"] = true;
    auto s = http_call(server.port(), "POST", "/v1/chat/completions", req.dump());
    ASSERT_TRUE(s.has_value());
    std::string reasoning, content, first_args;
    size_t first_pieces = 0, calls = 0;
    bool first_begun = false;
    for (const std::string& e : sse_data(s->body)) {
      if (e == "[DONE]") break;
      const PlainJson c = PlainJson::parse(e);
      if (c["choices"].empty()) continue;
      const PlainJson& d = c["choices"][0]["delta"];
      if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
      if (d.contains("content") && d["content"].is_string()) content += d["content"].get<std::string>();
      if (!d.contains("tool_calls")) continue;
      const PlainJson& call = d["tool_calls"][0];
      if (call.contains("id")) ++calls;
      if (call["index"] != 0) continue;
      EXPECT_EQ(call.contains("id"), !first_begun) << "the name comes first, once: " << e;
      first_begun = true;
      const std::string piece = call["function"]["arguments"];
      if (!piece.empty()) ++first_pieces;
      first_args += piece;
    }
    EXPECT_EQ(reasoning, msg["reasoning_content"].get<std::string>()) << "streamed and whole agree";
    EXPECT_EQ(content, "");
    EXPECT_EQ(calls, msg["tool_calls"].size());
    EXPECT_EQ(first_args, msg["tool_calls"][0]["function"]["arguments"].get<std::string>());
    EXPECT_GT(first_pieces, 1u) << "arguments stream in pieces: " << choice;
  }
}

// Clients send a tool call's arguments back as OpenAI's JSON string; the
// Qwen3.5 template iterates them as a mapping, so they reach it as an object
// (before, the template refused the request).
TEST(ServeAgent, AToolCallHistoryWithStringArgumentsRendersForAMappingTemplate) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen3.5-4B.jinja");
  testing::TempDir dir;
  const std::string model = testing::make_template_model(dir, "q35.gguf", tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson req = PlainJson::parse(R"({"max_tokens": 4, "messages": [
      {"role": "user", "content": "weather in Oslo?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "rain"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})");
  const PlainJson j = post(server, "/v1/chat/completions", req.dump());
  EXPECT_EQ(j["object"], "chat.completion") << j;
  auto t = http_call(server.port(), "POST", "/tokenize", PlainJson{{"messages", req["messages"]}}.dump());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->status, 200) << t->body;
}

TEST(ServeAgent, StrictToolArgumentsHoldUnderToolChoiceAutoOnAHermesModel) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  testing::TempDir dir;
  const std::string model = testing::make_template_model(dir, "qwen.gguf", tmpl);
  auto id = testing::run_command(testing::met_binary() + " tokenize " + testing::shell_quote(model) +
                                 " --special --text '<tool_call>'");
  ASSERT_EQ(id.exit_code, 0) << id.err;
  const std::string call_token = id.out.substr(0, id.out.find_first_of(" \n"));
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson tools = PlainJson::parse(R"([{"type": "function", "function": {"name": "set_alarm", "strict": true,
      "parameters": {"type": "object", "properties": {"hour": {"type": "integer", "minimum": 0, "maximum": 23}},
                     "required": ["hour"], "additionalProperties": false}}}])");
  for (int seed = 1; seed <= 3; ++seed) {
    // The bias makes this random model open a call at once; the grammar makes the call valid.
    PlainJson req = {{"messages", PlainJson::array({PlainJson{{"role", "user"}, {"content", "wake me"}}})},
                {"max_tokens", 150}, {"temperature", 1.0}, {"seed", seed}, {"tools", tools},
                {"logit_bias", PlainJson{{call_token, 100}}}};
    const PlainJson j = post(server, "/v1/chat/completions", req.dump());
    const PlainJson& msg = j["choices"][0]["message"];
    ASSERT_TRUE(msg.contains("tool_calls")) << j;
    ASSERT_GE(msg["tool_calls"].size(), 1u) << j;
    const PlainJson& call = msg["tool_calls"][0]["function"];
    EXPECT_EQ(call["name"], "set_alarm");
    const PlainJson args = PlainJson::parse(call["arguments"].get<std::string>(), nullptr, false);
    ASSERT_TRUE(args.is_object()) << call;
    ASSERT_TRUE(args.contains("hour") && args["hour"].is_number_integer()) << call;
    EXPECT_LE(args["hour"].get<int>(), 23);
    EXPECT_EQ(args.size(), 1u) << call;
  }
}

}  // namespace
}  // namespace met
