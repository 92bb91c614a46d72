// OpenAI's harmony chat format end to end: `met serve` over a real socket on a
// random-weight gpt-oss model made with gpt-oss's own template
// (../shared/chat-templates/openai-gpt-oss-120b.jinja). The prompt a request
// renders (system, developer, tools as the template's TypeScript namespace,
// history, the generation prompt, markers as single control tokens), the
// turn's end at <|return|> and <|call|>, and the output split into
// reasoning_content, content and tool_calls, streamed and whole. A random
// model writes no harmony of itself: met writes the headers it controls (the
// analysis a thinking budget or a forced call opens, the answer's header
// after it) and the test bans the model's own stray markers with logit_bias,
// so every marker in an output is met's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace serve_harmony_test {
namespace {

using Json = nlohmann::json;
using testing::http_call;
using testing::ServeProcess;
using testing::serve_args;
using testing::sse_data;

constexpr const char* kTemplate = "chat-templates/openai-gpt-oss-120b.jinja";
const char* const kMarkers[] = {"<|start|>", "<|channel|>", "<|message|>", "<|end|>",
                                "<|return|>", "<|call|>", "<|constrain|>"};
// The text between the markers of "<|start|>assistant<|channel|>final<|message|>".
const std::vector<std::string> kFinalHeader = {"assistant", "final"};

// A small random-weight gpt-oss model (MoE, windowed layers) with `tmpl`.
std::string make_gpt_oss(const testing::TempDir& dir, const std::string& tmpl) {
  return testing::make_small_model(dir, "gpt-oss.gguf", 700,
                                   "--arch gpt-oss --experts 4 --experts-used 2 --sliding-window 8 "
                                   "--chat-template " + testing::shell_quote(tmpl));
}

// The ids `text` encodes to with its markers parsed (`met tokenize --special`).
std::vector<int> token_ids(const std::string& model, const std::string& text) {
  const auto r = testing::run_command(testing::met_binary() + " tokenize " + testing::shell_quote(model) +
                                      " --special --json --text " + testing::shell_quote(text));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json ids = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  return ids.is_array() ? ids.get<std::vector<int>>() : std::vector<int>{};
}

// The one id `marker` is, or -1 (a failed expectation) when it is not one token.
int marker_id(const std::string& model, const std::string& marker) {
  const std::vector<int> ids = token_ids(model, marker);
  EXPECT_EQ(ids.size(), 1u) << marker << " is one token of the vocabulary";
  return ids.size() == 1 ? ids[0] : -1;
}

Json post(const ServeProcess& s, const std::string& path, const Json& body) {
  auto r = http_call(s.port(), "POST", path, body.dump());
  EXPECT_TRUE(r.has_value());
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << body << " -> " << r->body;
  return Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

// The prompt `request` renders, as ids and as text with its markers.
struct Rendered {
  std::vector<int> ids;
  std::string text;
};

Rendered render(const ServeProcess& s, const Json& request) {
  Rendered out;
  const Json t = post(s, "/tokenize", request);
  if (!t.contains("tokens")) return out;
  out.ids = t["tokens"].get<std::vector<int>>();
  const Json d = post(s, "/detokenize", Json{{"tokens", out.ids}});
  if (d.contains("prompt")) out.text = d["prompt"].get<std::string>();
  return out;
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// Each marker in `r.text` is one token of `r.ids`, never spelled in pieces.
void expect_markers_are_single_tokens(const std::string& model, const Rendered& r) {
  for (const char* marker : kMarkers) {
    const int id = marker_id(model, marker);
    const auto count = static_cast<size_t>(std::count(r.ids.begin(), r.ids.end(), id));
    EXPECT_EQ(count, occurrences(r.text, marker)) << marker << " in " << r.text;
  }
}

// logit_bias banning every marker and the vocab's other non-ending control
// token: the random model writes none of them, so every marker is met's.
Json ban_markers(const std::string& model) {
  Json bias = Json::object();
  for (const char* marker : kMarkers) bias[std::to_string(marker_id(model, marker))] = -100;
  bias[std::to_string(marker_id(model, "<|im_start|>"))] = -100;
  return bias;
}

// An output as its tokens spell it (logprobs): the runs of text between
// tokens that have none (the markers, control tokens), and how many tokens
// came before the first marker.
struct Spelled {
  std::vector<std::string> runs;
  size_t tokens_before_markup = 0;
};

Spelled spelled(const Json& choice) {
  Spelled out;
  out.runs.emplace_back();
  if (!choice.contains("logprobs") || !choice["logprobs"].is_object()) return out;
  for (const Json& entry : choice["logprobs"]["content"]) {
    const std::string token = entry["token"].get<std::string>();
    if (token.empty()) {
      out.runs.emplace_back();
    } else {
      out.runs.back() += token;
      out.tokens_before_markup += out.runs.size() == 1 ? 1 : 0;
    }
  }
  return out;
}

// The runs of a reasoning ended by met's "<|end|>" + `header` (from
// "<|start|>"): the reasoning, then the header's text between its markers,
// then the answer.
std::vector<std::string> expected_runs(const std::string& reasoning, const std::vector<std::string>& header,
                                       const std::string& answer) {
  std::vector<std::string> runs = {reasoning, ""};
  runs.insert(runs.end(), header.begin(), header.end());
  runs.push_back(answer);
  return runs;
}

// A streamed chat choice's deltas, folded.
struct Streamed {
  std::string reasoning;
  std::string content;
  std::vector<std::string> call_names;
  std::vector<std::string> call_arguments;
  size_t argument_pieces = 0;
  std::string finish_reason;
};

Streamed stream(const ServeProcess& s, Json request) {
  request["stream"] = true;
  request.erase("logprobs");
  Streamed out;
  auto r = http_call(s.port(), "POST", "/v1/chat/completions", request.dump());
  EXPECT_TRUE(r.has_value());
  if (!r) return out;
  for (const std::string& e : sse_data(r->body)) {
    if (e == "[DONE]") break;
    const Json c = Json::parse(e);
    if (c["choices"].empty()) continue;
    const Json& choice = c["choices"][0];
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      out.finish_reason = choice["finish_reason"].get<std::string>();
    }
    const Json& d = choice["delta"];
    if (d.contains("reasoning_content")) out.reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("content") && d["content"].is_string()) out.content += d["content"].get<std::string>();
    if (!d.contains("tool_calls")) continue;
    const Json& call = d["tool_calls"][0];
    const auto index = call["index"].get<size_t>();
    if (index >= out.call_arguments.size()) {
      out.call_names.push_back(call["function"].value("name", ""));
      out.call_arguments.emplace_back();
    }
    const std::string piece = call["function"].value("arguments", "");
    out.argument_pieces += piece.empty() ? 0 : 1;
    out.call_arguments[index] += piece;
  }
  return out;
}

void expect_no_markup(const Json& message) {
  for (const char* field : {"content", "reasoning_content"}) {
    if (!message.contains(field) || !message[field].is_string()) continue;
    EXPECT_EQ(message[field].get<std::string>().find("<|"), std::string::npos) << field << ": " << message;
  }
}

const Json kWeatherTools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather",
    "description": "Weather now", "parameters": {"type": "object", "properties": {
      "city": {"type": "string", "description": "City name"}, "days": {"type": "integer"}},
    "required": ["city"]}}}])");

TEST(ServeHarmony, TheChatPromptIsHarmonyWithItsMarkersAsSingleControlTokens) {
  MET_REQUIRE_SHARED(tmpl, kTemplate);
  testing::TempDir dir;
  const std::string model = make_gpt_oss(dir, tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const Json request = {{"messages", Json::parse(R"([{"role": "system", "content": "Be brief."},
                                                     {"role": "user", "content": "weather in Oslo?"}])")},
                        {"tools", kWeatherTools}, {"reasoning_effort", "high"}};
  const Rendered r = render(server, request);
  EXPECT_EQ(r.text.rfind("<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
                         "Knowledge cutoff: 2024-06\nCurrent date: ", 0), 0u) << r.text;
  EXPECT_NE(r.text.find("\n\nReasoning: high\n\n# Valid channels: analysis, commentary, final. Channel must be "
                        "included for every message.\nCalls to these tools must go to the commentary channel: "
                        "'functions'.<|end|>"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("<|start|>developer<|message|># Instructions\n\nBe brief.\n\n# Tools\n\n## functions\n\n"
                        "namespace functions {\n\n// Weather now\ntype get_weather = (_: {\n// City name\n"
                        "city: string,\ndays?: number,\n}) => any;\n\n} // namespace functions<|end|>"),
            std::string::npos) << "the system message becomes the developer's instructions: " << r.text;
  const std::string tail = "<|start|>user<|message|>weather in Oslo?<|end|><|start|>assistant";
  ASSERT_GE(r.text.size(), tail.size());
  EXPECT_EQ(r.text.substr(r.text.size() - tail.size()), tail) << "the generation prompt ends the prompt";
  expect_markers_are_single_tokens(model, r);

  Json chat = request;
  chat["max_tokens"] = 1;
  const Json j = post(server, "/v1/chat/completions", chat);
  EXPECT_EQ(j["usage"]["prompt_tokens"], r.ids.size()) << "a chat request renders that prompt";
}

// Before met knew harmony, <|end|> (which only closes the analysis) ended
// generation and <|return|> and <|call|> did not.
TEST(ServeHarmony, ReturnAndCallEndTheTurnAndEndOnlyAMessage) {
  MET_REQUIRE_SHARED(tmpl, kTemplate);
  testing::TempDir dir;
  const std::string model = make_gpt_oss(dir, tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  for (const char* end : {"<|return|>", "<|call|>"}) {
    const Json j = post(server, "/v1/chat/completions",
                        {{"messages", Json::array({Json{{"role", "user"}, {"content", "hi"}}})}, {"max_tokens", 8},
                         {"logit_bias", Json{{std::to_string(marker_id(model, end)), 100}}}});
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop") << end << ": " << j;
    EXPECT_EQ(j["usage"]["completion_tokens"], 1) << end;
    EXPECT_EQ(j["choices"][0]["message"]["content"], "") << "an end's text is not output";
  }
  const Json j = post(server, "/v1/chat/completions",
                      {{"messages", Json::array({Json{{"role", "user"}, {"content", "hi"}}})}, {"max_tokens", 8},
                       {"logit_bias", Json{{std::to_string(marker_id(model, "<|end|>")), 100}}}});
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length") << j;
}

Json user_turn(const std::string& text) {
  return Json::array({Json{{"role", "user"}, {"content", text}}});
}

// The thinking budget on harmony: met opens the analysis, then ends it after
// exactly that many tokens with harmony's "<|end|><|start|>assistant
// <|channel|>final<|message|>", so the answer is content (the R1 template's
// test in serve_agent_test.cc does the same with </think>).
TEST(ServeHarmony, AThinkingBudgetEndsTheAnalysisWithHarmonysFinalHeader) {
  MET_REQUIRE_SHARED(tmpl, kTemplate);
  testing::TempDir dir;
  const std::string model = make_gpt_oss(dir, tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const Json req = {{"messages", user_turn("think")}, {"max_tokens", 40}, {"min_tokens", 30},
                    {"temperature", 1.0}, {"seed", 2}, {"thinking_budget", 5},
                    {"logit_bias", ban_markers(model)}, {"logprobs", true}};
  const Json j = post(server, "/v1/chat/completions", req);
  const Json& msg = j["choices"][0]["message"];
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 5) << j;
  ASSERT_TRUE(msg.contains("reasoning_content")) << j;
  ASSERT_TRUE(msg["content"].is_string()) << j;
  EXPECT_NE(msg["content"], "") << "the answer follows the analysis (<|end|> ends no turn)";
  expect_no_markup(msg);
  const Spelled out = spelled(j["choices"][0]);
  EXPECT_EQ(out.tokens_before_markup, 5u) << "the budget's tokens, then met's markup";
  ASSERT_EQ(out.runs.size(), 5u) << j;
  EXPECT_EQ(std::vector<std::string>(out.runs.begin() + 1, out.runs.end() - 1),
            std::vector<std::string>({"", "assistant", "final"}))
      << "<|end|><|start|>assistant<|channel|>final<|message|>";
  const Rendered prompt = render(server, req);
  EXPECT_TRUE(prompt.text.ends_with("<|start|>user<|message|>think<|end|><|start|>assistant<|channel|>analysis"
                                    "<|message|>")) << "met opens the analysis message: " << prompt.text;
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt.ids.size());

  const Streamed s = stream(server, req);
  EXPECT_EQ(s.reasoning, msg["reasoning_content"]) << "streamed and whole agree";
  EXPECT_EQ(s.content, msg["content"]);
}

// A forced tool call on harmony is written as gpt-oss writes calls: after the
// analysis, "<|start|>assistant<|channel|>commentary to=functions.NAME
// <|constrain|>json<|message|>" and the arguments by grammar; "required"
// writes the calls' array as a commentary message. Whether a budget or the
// model (here made to by logit_bias) ends the analysis, met writes the header.
TEST(ServeHarmony, AForcedToolCallIsWrittenInHarmonysCommentaryForm) {
  MET_REQUIRE_SHARED(tmpl, kTemplate);
  testing::TempDir dir;
  const std::string model = make_gpt_oss(dir, tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const Json tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "description": "Weather now", "parameters": {"type": "object",
        "properties": {"city": {"enum": ["Paris", "Oslo"]}}, "required": ["city"]}}}])");
  const Json named = {{"type", "function"}, {"function", Json{{"name", "get_weather"}}}};
  Json by_model = ban_markers(model);
  by_model[std::to_string(marker_id(model, "<|end|>"))] = 100;  // the model ends its analysis at once
  struct Case {
    Json tool_choice;
    std::optional<int> budget;
    Json bias;
    std::vector<std::string> header;
  };
  const std::vector<std::string> named_header = {"assistant", "commentary to=functions.get_weather ", "json"};
  for (const Case& c : {Case{named, 3, ban_markers(model), named_header}, Case{named, std::nullopt, by_model,
                                                                                 named_header},
                        Case{"required", 3, ban_markers(model), {"assistant", "commentary"}}}) {
    Json req = {{"messages", user_turn("weather?")}, {"max_tokens", 200}, {"temperature", 1.0}, {"seed", 3},
                {"tools", tools}, {"tool_choice", c.tool_choice}, {"logit_bias", c.bias}, {"logprobs", true}};
    if (c.budget) req["thinking_budget"] = *c.budget;
    const Json j = post(server, "/v1/chat/completions", req);
    const Json& msg = j["choices"][0]["message"];
    ASSERT_TRUE(msg.contains("tool_calls")) << j;
    ASSERT_EQ(msg["tool_calls"].size(), 1u) << j;
    const Json& call = msg["tool_calls"][0]["function"];
    EXPECT_EQ(call["name"], "get_weather");
    const Json args = Json::parse(call["arguments"].get<std::string>(), nullptr, false);
    EXPECT_TRUE(args.is_object() && (args["city"] == "Paris" || args["city"] == "Oslo")) << call;
    EXPECT_TRUE(msg["content"].is_null()) << "no call text in content: " << j;
    EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
    EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], c.budget.value_or(0));
    EXPECT_EQ(msg.contains("reasoning_content"), c.budget.has_value()) << j;
    expect_no_markup(msg);
    const Spelled out = spelled(j["choices"][0]);
    ASSERT_GE(out.runs.size(), 2u);
    EXPECT_EQ(out.tokens_before_markup, static_cast<size_t>(c.budget.value_or(0)));
    const std::string answer = c.tool_choice == named ? call["arguments"].get<std::string>() : out.runs.back();
    EXPECT_EQ(out.runs, expected_runs(out.runs[0], c.header, answer)) << j;
    EXPECT_EQ(answer.rfind(c.tool_choice == named ? "{" : "[{", 0), 0u) << "the arguments, or the calls' array";
    const std::string reasoning = msg.value("reasoning_content", "");

    const Streamed s = stream(server, req);
    EXPECT_EQ(s.reasoning, reasoning) << "streamed and whole agree";
    EXPECT_EQ(s.content, "");
    ASSERT_EQ(s.call_arguments.size(), 1u);
    EXPECT_EQ(s.call_names[0], "get_weather");
    EXPECT_EQ(s.call_arguments[0], call["arguments"]);
    EXPECT_GT(s.argument_pieces, 1u) << "arguments stream in pieces";
    EXPECT_EQ(s.finish_reason, "tool_calls");
  }
}

// response_format on harmony: the JSON is the final message, after analysis.
TEST(ServeHarmony, AResponseFormatHoldsTheFinalMessage) {
  MET_REQUIRE_SHARED(tmpl, kTemplate);
  testing::TempDir dir;
  const std::string model = make_gpt_oss(dir, tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const Json schema = Json::parse(R"({"type": "object", "properties": {"city": {"enum": ["Paris", "Oslo"]}},
                                      "required": ["city"], "additionalProperties": false})");
  const Json req = {{"messages", user_turn("where?")}, {"max_tokens", 200}, {"temperature", 1.0}, {"seed", 4},
                    {"thinking_budget", 3}, {"logit_bias", ban_markers(model)}, {"logprobs", true},
                    {"response_format", Json{{"type", "json_schema"},
                                             {"json_schema", Json{{"name", "place"}, {"schema", schema}}}}}};
  const Json j = post(server, "/v1/chat/completions", req);
  const Json& msg = j["choices"][0]["message"];
  ASSERT_TRUE(msg.contains("reasoning_content") && msg["content"].is_string()) << j;
  const Json out = Json::parse(msg["content"].get<std::string>(), nullptr, false);
  EXPECT_TRUE(out.is_object() && (out["city"] == "Paris" || out["city"] == "Oslo")) << j;
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
  const Spelled spelt = spelled(j["choices"][0]);
  EXPECT_EQ(spelt.tokens_before_markup, 3u);
  ASSERT_FALSE(spelt.runs.empty());
  const std::vector<std::string> expected = expected_runs(spelt.runs[0], kFinalHeader, "");
  EXPECT_EQ(std::vector<std::string>(spelt.runs.begin(), spelt.runs.end() - 1),
            std::vector<std::string>(expected.begin(), expected.end() - 1)) << j;
  EXPECT_EQ(Json::parse(spelt.runs.back(), nullptr, false), out) << "the final message's body is the JSON";
  const Streamed s = stream(server, req);
  EXPECT_EQ(s.reasoning, msg["reasoning_content"]);
  EXPECT_EQ(s.content, msg["content"]);
}

// History as the template expects it: a tool-call turn's reasoning_content is
// its analysis while the turn is in progress (the template reads `thinking`)
// and is dropped once a final answer follows; the call in the recipient form
// with object arguments; the tool result from functions.NAME to assistant.
TEST(ServeHarmony, AToolCallTurnAndItsResultRenderAsHarmonyHistory) {
  MET_REQUIRE_SHARED(tmpl, kTemplate);
  testing::TempDir dir;
  const std::string model = make_gpt_oss(dir, tmpl);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  Json messages = Json::parse(R"([{"role": "user", "content": "weather in Oslo?"},
      {"role": "assistant", "content": null, "reasoning_content": "Need the tool.",
       "tool_calls": [{"id": "call_1", "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "rain"}])");
  const std::string call = "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
                           "{\"city\": \"Oslo\"}<|call|><|start|>functions.get_weather to=assistant<|channel|>"
                           "commentary<|message|>\"rain\"<|end|>";
  const Rendered open = render(server, {{"messages", messages}, {"tools", kWeatherTools}});
  const std::string open_tail = "<|start|>user<|message|>weather in Oslo?<|end|><|start|>assistant<|channel|>"
                                "analysis<|message|>Need the tool.<|end|>" + call + "<|start|>assistant";
  ASSERT_GE(open.text.size(), open_tail.size()) << open.text;
  EXPECT_EQ(open.text.substr(open.text.size() - open_tail.size()), open_tail);
  expect_markers_are_single_tokens(model, open);

  messages.push_back(Json{{"role", "assistant"}, {"content", "It rains."}, {"reasoning_content", "Tool said rain."}});
  messages.push_back(Json{{"role", "user"}, {"content", "and tomorrow?"}});
  const Json request = {{"messages", messages}, {"tools", kWeatherTools}};
  const Rendered later = render(server, request);
  const std::string later_tail = "<|start|>user<|message|>weather in Oslo?<|end|>" + call +
                                 "<|start|>assistant<|channel|>final<|message|>It rains.<|end|>"
                                 "<|start|>user<|message|>and tomorrow?<|end|><|start|>assistant";
  ASSERT_GE(later.text.size(), later_tail.size()) << later.text;
  EXPECT_EQ(later.text.substr(later.text.size() - later_tail.size()), later_tail) << "earlier analysis dropped";
  EXPECT_EQ(later.text.find("Tool said rain."), std::string::npos);
  expect_markers_are_single_tokens(model, later);

  Json chat = request;
  chat["max_tokens"] = 4;
  const Json j = post(server, "/v1/chat/completions", chat);
  EXPECT_EQ(j["usage"]["prompt_tokens"], later.ids.size()) << j;
}

}  // namespace
}  // namespace serve_harmony_test
}  // namespace met
