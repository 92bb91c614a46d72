// Tests for parse_responses_request: a Responses API body becomes the shared
// chat request (messages, tools, tool_choice, response_format, reasoning,
// limits), its own fields are checked and echoed, previous_response_id
// prepends a stored conversation, and errors name the Responses fields.
#include "server/responses_request.h"

#include <gtest/gtest.h>

#include <string>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

ResponsesRequest responses_ok(const std::string& body, const PreviousConversation& previous = {},
                              const ItemLookup& item = {}) {
  ApiResult<ResponsesRequest> r = parse_responses_request(body, previous, item);
  if (const auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << body << " -> " << e->message;
    return {};
  }
  return std::move(std::get<ResponsesRequest>(r));
}

ApiError responses_error(const std::string& body, const PreviousConversation& previous = {}) {
  ApiResult<ResponsesRequest> r = parse_responses_request(body, previous);
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << body << " parsed";
    return {};
  }
  return std::get<ApiError>(r);
}

TEST(ResponsesRequest, AStringInputIsAUserMessageAfterTheInstructions) {
  const ResponsesRequest r = responses_ok(R"({"model": "m", "input": "Hi", "instructions": "Be brief."})");
  EXPECT_EQ(r.chat.endpoint, Endpoint::kChatCompletions);
  EXPECT_EQ(r.chat.messages, (Json::array({Json{{"role", "system"}, {"content", "Be brief."}},
                                           Json{{"role", "user"}, {"content", "Hi"}}})));
  EXPECT_EQ(r.conversation, (Json::array({Json{{"type", "message"}, {"role", "user"}, {"content", "Hi"}}})))
      << "instructions are not part of the conversation a follow-up continues";
  EXPECT_TRUE(r.store);
  EXPECT_FALSE(r.chat.stream);
}

TEST(ResponsesRequest, ItemsBecomeChatTurnsWithOneAssistantMessagePerTurn) {
  const ResponsesRequest r = responses_ok(R"({"input": [
      {"role": "developer", "content": "Use tools."},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Look."}]},
      {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
      {"type": "function_call", "call_id": "call_b", "name": "get_time", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "call_a", "output": "rain"},
      {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "noon"}]},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Rain at noon."}]},
      {"role": "user", "content": "Thanks"}]})");
  const Json& m = r.chat.messages;
  ASSERT_EQ(m.size(), 7u) << m.dump(2);
  EXPECT_EQ(m[0], (Json{{"role", "system"}, {"content", "Use tools."}}));
  EXPECT_EQ(m[1], (Json{{"role", "user"}, {"content", "Weather?"}}));
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["reasoning_content"], "Look.");
  ASSERT_EQ(m[2]["tool_calls"].size(), 2u);
  EXPECT_EQ(m[2]["tool_calls"][0], (Json{{"id", "call_a"}, {"type", "function"},
                                         {"function", Json{{"name", "get_weather"},
                                                           {"arguments", "{\"city\":\"Oslo\"}"}}}}));
  EXPECT_EQ(m[3], (Json{{"role", "tool"}, {"tool_call_id", "call_a"}, {"content", "rain"}, {"name", "get_weather"}}));
  EXPECT_EQ(m[4]["content"], "noon");
  EXPECT_EQ(m[5], (Json{{"role", "assistant"}, {"content", "Rain at noon."}}));
  EXPECT_EQ(m[6], (Json{{"role", "user"}, {"content", "Thanks"}}));
}

TEST(ResponsesRequest, FlatFunctionToolsAndANamedToolChoiceTakeChatsShape) {
  const ResponsesRequest r = responses_ok(R"({"input": "x", "tool_choice": {"type": "function", "name": "f"},
      "tools": [{"type": "function", "name": "f", "description": "d", "strict": true,
                 "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}]})");
  ASSERT_EQ(r.chat.agent.tools.size(), 1u);
  EXPECT_EQ(r.chat.agent.tools[0]["function"]["name"], "f");
  EXPECT_EQ(r.chat.agent.tools[0]["function"]["parameters"]["properties"]["a"]["type"], "integer");
  EXPECT_EQ(r.chat.agent.tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(r.chat.agent.tool_choice_name, "f");
  EXPECT_EQ(r.echo["tools"][0]["name"], "f") << "the response echoes the flat shape";
  EXPECT_EQ(r.echo["tool_choice"]["name"], "f");
  EXPECT_EQ(responses_ok(R"({"input": "x", "tools": [{"type": "function", "name": "f"}], "tool_choice": "required"})")
                .chat.agent.tool_choice,
            ToolChoice::kRequired);
}

TEST(ResponsesRequest, ToolsOtherThanFunctionsAreRefusedByName) {
  const ApiError e = responses_error(R"({"input": "x", "tools": [{"type": "web_search"}]})");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "tools[0].type");
  EXPECT_NE(e.message.find("web_search"), std::string::npos) << e.message;
  EXPECT_EQ(responses_error(R"({"input": "x", "tools": [{"type": "function"}]})").param, "tools[0].name");
  EXPECT_EQ(responses_error(R"({"input": "x", "tools": [{"type": "function", "name": "f"}],
                            "tool_choice": {"type": "function", "name": "g"}})").param,
            "tool_choice");
}

TEST(ResponsesRequest, TextFormatBecomesTheResponseFormat) {
  const ResponsesRequest r = responses_ok(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "p",
      "strict": true, "schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}}})");
  EXPECT_EQ(r.chat.agent.constraint, OutputConstraint::kJsonSchema);
  EXPECT_EQ(r.chat.agent.schema["properties"]["n"]["type"], "integer");
  EXPECT_TRUE(r.chat.agent.strict);
  EXPECT_EQ(r.echo["text"]["format"]["name"], "p");
  EXPECT_EQ(responses_ok(R"({"input": "x", "text": {"format": {"type": "json_object"}}})").chat.agent.constraint,
            OutputConstraint::kJsonObject);
  EXPECT_EQ(responses_ok(R"({"input": "x"})").echo["text"], (Json{{"format", Json{{"type", "text"}}}}));
  EXPECT_EQ(responses_error(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "p"}}})").param,
            "text.format.schema");
  EXPECT_EQ(responses_error(R"({"input": "x", "text": {"format": {"type": "yaml"}}})").param, "text.format.type");
}

TEST(ResponsesRequest, ReasoningEffortAndSummaryMapOntoChatsKnobs) {
  const ResponsesRequest r = responses_ok(R"({"input": "x", "reasoning": {"effort": "low", "summary": "auto"}})");
  EXPECT_EQ(r.chat.agent.reasoning_effort, "low");
  EXPECT_TRUE(r.reasoning_summary);
  EXPECT_EQ(r.echo["reasoning"], (Json{{"effort", "low"}, {"summary", "auto"}}));
  const ResponsesRequest none = responses_ok(R"({"input": "x", "reasoning": {"effort": "none"}})");
  EXPECT_EQ(none.chat.agent.chat_template_kwargs["enable_thinking"], false);
  EXPECT_FALSE(none.reasoning_summary);
  EXPECT_EQ(responses_error(R"({"input": "x", "reasoning": {"effort": "extreme"}})").param, "reasoning.effort");
  EXPECT_EQ(responses_error(R"({"input": "x", "reasoning": {"summary": "long"}})").param, "reasoning.summary");
}

TEST(ResponsesRequest, LimitsAndSamplingCarryOverAndTheirErrorsNameResponsesFields) {
  const ResponsesRequest r = responses_ok(
      R"({"input": "x", "max_output_tokens": 40, "temperature": 0.2, "top_p": 0.9, "stream": true, "seed": 4})");
  EXPECT_EQ(r.chat.max_tokens, 40);
  EXPECT_FLOAT_EQ(r.chat.engine.sampling.temperature, 0.2f);
  EXPECT_TRUE(r.chat.stream);
  EXPECT_TRUE(r.chat.has_seed);
  EXPECT_EQ(r.echo["max_output_tokens"], 40);
  EXPECT_EQ(r.echo["temperature"], 0.2);
  EXPECT_EQ(responses_error(R"({"input": "x", "max_output_tokens": 0})").param, "max_output_tokens");
  EXPECT_EQ(responses_error(R"({"input": "x", "temperature": 9})").param, "temperature");
  EXPECT_EQ(responses_error(R"({"input": "x", "stream": "yes"})").param, "stream");
}

TEST(ResponsesRequest, TheResponsesOwnFieldsAreCheckedAndEchoed) {
  const ResponsesRequest r = responses_ok(R"({"input": "x", "store": false, "metadata": {"k": "v"},
      "truncation": "auto", "parallel_tool_calls": false, "user": "u1"})");
  EXPECT_FALSE(r.store);
  EXPECT_EQ(r.echo["store"], false);
  EXPECT_EQ(r.echo["metadata"], (Json{{"k", "v"}}));
  EXPECT_EQ(r.echo["truncation"], "auto");
  EXPECT_EQ(r.echo["parallel_tool_calls"], false);
  EXPECT_EQ(r.echo["user"], "u1");
  const Json defaults = responses_ok(R"({"input": "x"})").echo;
  EXPECT_EQ(defaults["store"], true);
  EXPECT_EQ(defaults["truncation"], "disabled");
  EXPECT_EQ(defaults["tool_choice"], "auto");
  EXPECT_TRUE(defaults["instructions"].is_null());
  EXPECT_TRUE(defaults["previous_response_id"].is_null());
  EXPECT_EQ(responses_error(R"({"input": "x", "store": 1})").param, "store");
  EXPECT_EQ(responses_error(R"({"input": "x", "truncation": "middle"})").param, "truncation");
  EXPECT_EQ(responses_error(R"({"input": "x", "metadata": {"k": 1}})").param, "metadata");
  EXPECT_EQ(responses_error(R"({"input": "x", "background": true})").param, "background");
}

TEST(ResponsesRequest, BadInputIsA400NamingTheItem) {
  EXPECT_EQ(responses_error(R"({"model": "m"})").param, "input");
  EXPECT_EQ(responses_error(R"({"input": 3})").param, "input");
  EXPECT_EQ(responses_error(R"({"input": []})").param, "input");
  EXPECT_EQ(responses_error(R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]})")
                .param,
            "input[0].content[0]");
  EXPECT_EQ(responses_error(R"({"input": ["Hi", {"role": "user", "content": "a"}]})").param, "input[0]");
  EXPECT_EQ(responses_error(R"({"input": [{"role": "user", "content": "a"}, {"type": "item_reference", "id": "x"}]})")
                .param,
            "input[1].id")
      << "an item_reference needs a kept item";
  EXPECT_EQ(responses_error(R"({"input": [{"type": "computer_call_output", "id": "x"}]})").param, "input[0].type");
  EXPECT_EQ(responses_error(R"({"input": [{"role": "robot", "content": "a"}]})").param, "input[0].role");
  EXPECT_EQ(responses_error(R"({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]})").param,
            "input[0].call_id");
  EXPECT_EQ(responses_error("{\"input\": \"\xff\"}").status, 400);
  EXPECT_EQ(responses_error("[1]").status, 400);
}

TEST(ResponsesRequest, AnItemReferenceBecomesTheKeptItem) {
  auto item = [](const std::string& id) -> std::optional<Json> {
    if (id != "msg_7") return std::nullopt;
    return Json{{"type", "message"}, {"id", "msg_7"}, {"role", "assistant"},
                {"content", Json::array({Json{{"type", "output_text"}, {"text", "Earlier."}}})}};
  };
  const ResponsesRequest r = responses_ok(
      R"({"input": [{"role": "user", "content": "Hi"}, {"type": "item_reference", "id": "msg_7"},
                    {"role": "user", "content": "And?"}]})",
      {}, item);
  ASSERT_EQ(r.chat.messages.size(), 3u);
  EXPECT_EQ(r.chat.messages[1], (Json{{"role", "assistant"}, {"content", "Earlier."}}));
  EXPECT_EQ(r.conversation[1]["id"], "msg_7") << "kept as the item itself";
  EXPECT_EQ(responses_error(R"({"input": [{"type": "item_reference", "id": "msg_8"}]})", {}).param, "input[0].id");
}

TEST(ResponsesRequest, APreviousResponsesConversationComesFirst) {
  const Json earlier = Json::array({Json{{"type", "message"}, {"role", "user"}, {"content", "Hi"}},
                                    Json{{"type", "message"}, {"role", "assistant"}, {"id", "msg_1"},
                                         {"content", Json::array({Json{{"type", "output_text"}, {"text", "Hello"},
                                                                       {"annotations", Json::array()}}})}}});
  auto previous = [&](const std::string& id) -> std::optional<Json> {
    if (id == "resp_1") return earlier;
    return std::nullopt;
  };
  const ResponsesRequest r =
      responses_ok(R"({"input": "And?", "previous_response_id": "resp_1", "instructions": "New rules."})", previous);
  const Json& m = r.chat.messages;
  ASSERT_EQ(m.size(), 4u) << m.dump(2);
  EXPECT_EQ(m[0]["content"], "New rules.");
  EXPECT_EQ(m[2], (Json{{"role", "assistant"}, {"content", "Hello"}}));
  EXPECT_EQ(m[3]["content"], "And?");
  EXPECT_EQ(r.conversation.size(), 3u);
  EXPECT_EQ(r.echo["previous_response_id"], "resp_1");
  const ApiError e = responses_error(R"({"input": "x", "previous_response_id": "resp_9"})", previous);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "previous_response_id");
  EXPECT_NE(e.message.find("not found"), std::string::npos);
}

}  // namespace
}  // namespace met
