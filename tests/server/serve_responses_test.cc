// `met serve` end to end for the Responses API (POST /v1/responses, GET
// /v1/responses/{id}) over real sockets on random-weight chat models: a
// string input, streaming with its event order, stored responses and
// previous_response_id chains, forced function calls of a thinking model as
// reasoning and function_call items (and their function_call_output
// follow-up), json_schema text.format, and 400s naming Responses fields.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using RJson = nlohmann::json;
using testing::http_call;
using testing::ServeProcess;
using testing::serve_args;

RJson post_responses(const ServeProcess& s, const RJson& body, int want_status = 200) {
  auto r = http_call(s.port(), "POST", "/v1/responses", body.dump());
  EXPECT_TRUE(r.has_value());
  if (!r) return RJson();
  EXPECT_EQ(r->status, want_status) << body << " -> " << r->body;
  return RJson::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

struct NamedEvent {
  std::string type;
  RJson data;
};

// The SSE body's events ("event: T" then "data: JSON"), checked for framing.
std::vector<NamedEvent> responses_events(const std::string& body) {
  std::vector<NamedEvent> out;
  size_t at = 0;
  while (at < body.size()) {
    const size_t end = body.find("\n\n", at);
    if (end == std::string::npos) break;
    const std::string block = body.substr(at, end - at);
    at = end + 2;
    const size_t nl = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    if (nl == std::string::npos) continue;
    out.push_back(NamedEvent{block.substr(7, nl - 7), RJson::parse(block.substr(nl + 7), nullptr, false)});
    EXPECT_EQ(out.back().data["type"], out.back().type);
  }
  return out;
}

// The stream's final response, after checking the events' order: numbered
// from 0, created and in_progress first, each item added before its deltas
// and done after them, and one terminal event last.
RJson check_stream(const std::vector<NamedEvent>& events) {
  EXPECT_GE(events.size(), 3u);
  if (events.size() < 3) return RJson();
  EXPECT_EQ(events[0].type, "response.created");
  EXPECT_EQ(events[1].type, "response.in_progress");
  int open_index = -1;
  for (size_t i = 0; i < events.size(); ++i) {
    const NamedEvent& e = events[i];
    EXPECT_EQ(e.data["sequence_number"], i) << e.type;
    if (e.type == "response.output_item.added") {
      EXPECT_EQ(open_index, -1) << "one item at a time";
      open_index = e.data["output_index"].get<int>();
    } else if (e.type == "response.output_item.done") {
      EXPECT_EQ(e.data["output_index"], open_index);
      open_index = -1;
    } else if (e.data.contains("output_index")) {
      EXPECT_EQ(e.data["output_index"], open_index) << e.type << " belongs to the open item";
    }
  }
  EXPECT_EQ(open_index, -1);
  const std::string last = events.back().type;
  EXPECT_TRUE(last == "response.completed" || last == "response.incomplete") << last;
  return events.back().data["response"];
}

std::string output_text(const RJson& response) {
  std::string text;
  for (const RJson& item : response["output"]) {
    if (item["type"] != "message") continue;
    for (const RJson& part : item["content"]) text += part["text"].get<std::string>();
  }
  return text;
}

TEST(ServeResponses, AStringInputIsAnsweredKeptAndContinued) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  const RJson first = post_responses(server, {{"model", "m"}, {"input", "hello"}, {"instructions", "Be brief."},
                                              {"max_output_tokens", 8}, {"temperature", 0},
                                              {"metadata", {{"k", "v"}}}});
  EXPECT_EQ(first["object"], "response");
  const std::string id = first["id"];
  EXPECT_EQ(id.rfind("resp_", 0), 0u);
  EXPECT_TRUE(first["status"] == "completed" || first["status"] == "incomplete") << first;
  if (first["status"] == "incomplete") {
    EXPECT_EQ(first["incomplete_details"]["reason"], "max_output_tokens");
  }
  ASSERT_EQ(first["output"].size(), 1u) << first;
  EXPECT_EQ(first["output"][0]["type"], "message");
  EXPECT_EQ(first["output"][0]["role"], "assistant");
  EXPECT_EQ(first["instructions"], "Be brief.");
  EXPECT_EQ(first["metadata"]["k"], "v");
  EXPECT_EQ(first["usage"]["output_tokens"].get<int>() + first["usage"]["input_tokens"].get<int>(),
            first["usage"]["total_tokens"].get<int>());
  EXPECT_LE(first["usage"]["output_tokens"].get<int>(), 8);

  auto got = http_call(server.port(), "GET", "/v1/responses/" + id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(RJson::parse(got->body), first) << "GET gives the stored response";

  const RJson second = post_responses(server, {{"input", "and then?"}, {"previous_response_id", id},
                                               {"max_output_tokens", 4}, {"temperature", 0}});
  EXPECT_EQ(second["previous_response_id"], id);
  EXPECT_TRUE(second["instructions"].is_null()) << "instructions are not carried over";
  EXPECT_GT(second["usage"]["input_tokens"].get<int>(), first["usage"]["input_tokens"].get<int>())
      << "the earlier turn is part of the prompt";
  const RJson items = RJson::array({RJson{{"role", "user"}, {"content", "hello"}},
                                    RJson{{"type", "item_reference"}, {"id", first["output"][0]["id"]}},
                                    RJson{{"role", "user"}, {"content", "and then?"}}});
  const RJson referenced = post_responses(server, {{"input", items}, {"max_output_tokens", 4}, {"temperature", 0}});
  EXPECT_EQ(referenced["usage"]["input_tokens"], second["usage"]["input_tokens"])
      << "an item_reference to the first output makes the chain's prompt";
  const RJson third = post_responses(server, {{"input", "more"}, {"previous_response_id", second["id"]},
                                              {"max_output_tokens", 4}, {"store", false}});
  EXPECT_GT(third["usage"]["input_tokens"].get<int>(), second["usage"]["input_tokens"].get<int>());
  EXPECT_EQ(http_call(server.port(), "GET", "/v1/responses/" + third["id"].get<std::string>())->status, 404)
      << "store: false keeps nothing";

  const RJson unknown = post_responses(server, {{"input", "x"}, {"previous_response_id", "resp_nope"}}, 400);
  EXPECT_EQ(unknown["error"]["param"], "previous_response_id");
  EXPECT_NE(unknown["error"]["message"].get<std::string>().find("not found"), std::string::npos);
  EXPECT_EQ(http_call(server.port(), "GET", "/v1/responses/resp_nope")->status, 404);
}

TEST(ServeResponses, AStreamSendsTheDocumentedEventsAndKeepsItsFinalResponse) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  const RJson req = {{"input", RJson::array({RJson{{"role", "user"}, {"content", "tell me"}}})},
                     {"max_output_tokens", 12}, {"temperature", 0}, {"stream", true}};
  auto s = http_call(server.port(), "POST", "/v1/responses", req.dump());
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->status, 200) << s->body;
  EXPECT_EQ(s->body.find("[DONE]"), std::string::npos);
  const std::vector<NamedEvent> events = responses_events(s->body);
  const RJson final_response = check_stream(events);
  std::string deltas;
  for (const NamedEvent& e : events) {
    if (e.type == "response.output_text.delta") deltas += e.data["delta"].get<std::string>();
  }
  EXPECT_EQ(deltas, output_text(final_response));
  EXPECT_EQ(events[2].type, "response.output_item.added");
  EXPECT_EQ(events[3].type, "response.content_part.added");

  RJson whole = req;
  whole.erase("stream");
  const RJson body = post_responses(server, whole);
  EXPECT_EQ(output_text(body), output_text(final_response)) << "greedy: streamed and whole agree";
  auto got = http_call(server.port(), "GET", "/v1/responses/" + final_response["id"].get<std::string>());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(RJson::parse(got->body), final_response);
}

// A thinking model under tool_choice "required" thinks, then calls: a
// reasoning item (with its summary, asked for) and function_call items, and
// a follow-up sends the calls' outputs.
TEST(ServeResponses, AThinkingModelsForcedCallsAreReasoningAndFunctionCallItems) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja");
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_template_model(dir, "r1.gguf", tmpl)));
  ASSERT_NE(server.port(), 0) << server.error();
  const RJson tools = RJson::parse(R"([{"type": "function", "name": "get_weather", "parameters":
      {"type": "object", "properties": {"city": {"enum": ["Paris", "Oslo"]}}, "required": ["city"]}}])");
  RJson req = {{"input", "weather?"}, {"tools", tools}, {"tool_choice", "required"}, {"max_output_tokens", 120},
               {"temperature", 1.0}, {"seed", 3}, {"thinking_budget", 5},
               {"reasoning", {{"effort", "low"}, {"summary", "auto"}}},
               {"chat_template_kwargs", {{"enable_thinking", true}}}};
  const RJson r = post_responses(server, req);
  ASSERT_GE(r["output"].size(), 2u) << r;
  const RJson& reasoning = r["output"][0];
  EXPECT_EQ(reasoning["type"], "reasoning") << r;
  const std::string thought = reasoning["content"][0]["text"];
  EXPECT_EQ(thought.find("</think>"), std::string::npos);
  EXPECT_EQ(reasoning["summary"][0]["text"], thought);
  EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 5);
  RJson follow_up = RJson::array();
  for (size_t i = 1; i < r["output"].size(); ++i) {
    const RJson& call = r["output"][i];
    ASSERT_EQ(call["type"], "function_call") << r;
    EXPECT_EQ(call["name"], "get_weather");
    EXPECT_EQ(call["call_id"].get<std::string>().rfind("call_", 0), 0u);
    const RJson args = RJson::parse(call["arguments"].get<std::string>(), nullptr, false);
    ASSERT_TRUE(args.is_object()) << call;
    EXPECT_TRUE(args["city"] == "Paris" || args["city"] == "Oslo") << call;
    follow_up.push_back({{"type", "function_call_output"}, {"call_id", call["call_id"]}, {"output", "sunny"}});
  }
  const RJson next = post_responses(server, {{"input", follow_up}, {"previous_response_id", r["id"]},
                                             {"tools", tools}, {"max_output_tokens", 6}});
  EXPECT_EQ(next["object"], "response") << next;

  req["stream"] = true;
  auto s = http_call(server.port(), "POST", "/v1/responses", req.dump());
  ASSERT_TRUE(s.has_value());
  const std::vector<NamedEvent> events = responses_events(s->body);
  const RJson streamed = check_stream(events);
  ASSERT_GE(streamed["output"].size(), 2u) << s->body;
  EXPECT_EQ(streamed["output"][0]["type"], "reasoning");
  size_t summary_deltas = 0, argument_deltas = 0;
  std::string arguments;
  for (const NamedEvent& e : events) {
    summary_deltas += e.type == "response.reasoning_summary_text.delta" ? 1 : 0;
    if (e.type != "response.function_call_arguments.delta" || e.data["output_index"] != 1) continue;
    ++argument_deltas;
    arguments += e.data["delta"].get<std::string>();
  }
  EXPECT_GE(summary_deltas, 1u);
  EXPECT_GT(argument_deltas, 1u) << "arguments stream in pieces";
  EXPECT_EQ(arguments, streamed["output"][1]["arguments"]);
}

TEST(ServeResponses, AJsonSchemaTextFormatHoldsTheOutput) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  const RJson schema = RJson::parse(R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
      "age": {"type": "integer", "minimum": 0, "maximum": 99}}, "required": ["name", "age"],
      "additionalProperties": false})");
  for (int seed = 1; seed <= 3; ++seed) {
    const RJson r = post_responses(server, {{"input", "a person"}, {"max_output_tokens", 200}, {"temperature", 1.0},
                                            {"seed", seed},
                                            {"text", {{"format", {{"type", "json_schema"}, {"name", "person"},
                                                                  {"schema", schema}, {"strict", true}}}}}});
    EXPECT_EQ(r["text"]["format"]["name"], "person");
    const RJson out = RJson::parse(output_text(r), nullptr, false);
    ASSERT_TRUE(out.is_object()) << r;
    EXPECT_TRUE(out["name"].is_string()) << out;
    EXPECT_TRUE(out["age"].is_number_integer()) << out;
  }
}

TEST(ServeResponses, BadRequestsAre400sNamingTheResponsesField) {
  testing::TempDir dir;
  ServeProcess server(serve_args(testing::make_small_model(dir, "chat.gguf", 600)));
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(post_responses(server, RJson::parse(R"({"input": "x", "tools": [{"type": "web_search"}]})"), 400)
                ["error"]["param"],
            "tools[0].type");
  EXPECT_EQ(post_responses(server, {{"input", "x"}, {"max_output_tokens", 0}}, 400)["error"]["param"],
            "max_output_tokens");
  EXPECT_EQ(post_responses(server, {{"model", "m"}}, 400)["error"]["param"], "input");
  const RJson image = RJson::parse(R"({"input": [{"role": "user", "content": [{"type": "input_image"}]}]})");
  EXPECT_EQ(post_responses(server, image, 400)["error"]["param"],
            "input[0].content[0]");
  std::string long_input;
  for (int i = 0; i < 6000; ++i) long_input += "tok ";
  const RJson over = post_responses(server, {{"input", long_input}, {"max_output_tokens", 2}}, 400);
  EXPECT_EQ(over["error"]["code"], "context_length_exceeded") << over;
  EXPECT_EQ(over["error"]["param"], "input") << "a prompt over the context is the input's fault";
  EXPECT_EQ(http_call(server.port(), "GET", "/v1/responses")->status, 405);
  EXPECT_EQ(http_call(server.port(), "POST", "/responses", R"({"input": "x", "max_output_tokens": 2})")->status, 200)
      << "the route answers without /v1 too";
}

}  // namespace
}  // namespace met
