// Tests for the Messages API request translation: system and content blocks
// become chat messages, tools and tool_choice function tools, thinking the
// template's switch and budget; errors name Anthropic's fields.
#include "server/messages_request.h"

#include <gtest/gtest.h>

#include <string>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

Json translate_ok(const std::string& body, MessagesCall call = MessagesCall::kCreate) {
  ApiResult<Json> r = translate_messages_body(Json::parse(body), call);
  if (const auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << body << " -> " << e->message;
    return Json();
  }
  return std::get<Json>(r);
}

// The error parse_messages_request gives `body` (an empty error when it parses).
ApiError messages_error(const std::string& body, MessagesCall call = MessagesCall::kCreate) {
  ApiResult<OpenAiRequest> r = parse_messages_request(body, call);
  if (const auto* e = std::get_if<ApiError>(&r)) return *e;
  ADD_FAILURE() << body << " parsed";
  return ApiError{};
}

TEST(MessagesRequest, SystemAndContentBlocksBecomeChatMessages) {
  const Json chat = translate_ok(R"({"model": "m", "max_tokens": 64,
      "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
      "messages": [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": [
          {"type": "thinking", "thinking": "Use the tool.", "signature": "sig"},
          {"type": "redacted_thinking", "data": "xx"},
          {"type": "text", "text": "Let me check."},
          {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18C"}]},
          {"type": "text", "text": "And tomorrow?"}]}]})");
  const Json want = Json::parse(R"([
      {"role": "system", "content": "Be brief.\nBe kind."},
      {"role": "user", "content": "What is the weather in Paris?"},
      {"role": "assistant", "content": "Let me check.", "reasoning_content": "Use the tool.",
       "tool_calls": [{"id": "toolu_1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "toolu_1", "content": "18C"},
      {"role": "user", "content": "And tomorrow?"}])");
  EXPECT_EQ(chat["messages"], want);
  EXPECT_EQ(chat["max_tokens"], 64);
  EXPECT_EQ(chat["model"], "m");
}

TEST(MessagesRequest, AFailedToolResultSaysSo) {
  const Json chat = translate_ok(R"({"max_tokens": 8, "messages": [{"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "t", "content": "no such city", "is_error": true}]}]})");
  EXPECT_EQ(chat["messages"][0]["content"], "Error: no such city");
}

TEST(MessagesRequest, ToolsToolChoiceThinkingAndSamplingTranslate) {
  const Json chat = translate_ok(R"({"max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
      "tools": [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}],
      "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
      "thinking": {"type": "enabled", "budget_tokens": 2048},
      "stop_sequences": ["END"], "temperature": 0.5, "top_p": 0.9, "top_k": 20, "stream": true,
      "metadata": {"user_id": "u1"}})");
  EXPECT_EQ(chat["tools"], Json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "description": "Weather.", "parameters": {"type": "object"}}}])"));
  EXPECT_EQ(chat["tool_choice"], Json::parse(R"({"type": "function", "function": {"name": "get_weather"}})"));
  EXPECT_EQ(chat["parallel_tool_calls"], false);
  EXPECT_EQ(chat["chat_template_kwargs"], Json::parse(R"({"enable_thinking": true})"));
  EXPECT_EQ(chat["thinking_budget"], 2048);
  EXPECT_EQ(chat["stop"], Json::parse(R"(["END"])"));
  EXPECT_EQ(chat["temperature"], 0.5);
  EXPECT_EQ(chat["top_p"], 0.9);
  EXPECT_EQ(chat["top_k"], 20);
  EXPECT_EQ(chat["stream"], true);
  EXPECT_FALSE(chat.contains("metadata"));
}

TEST(MessagesRequest, ToolChoiceTypesMapToChatOnes) {
  const std::string head = R"({"max_tokens": 1, "messages": [{"role": "user", "content": "x"}],
      "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": )";
  EXPECT_EQ(translate_ok(head + R"({"type": "auto"}})")["tool_choice"], "auto");
  EXPECT_EQ(translate_ok(head + R"({"type": "any"}})")["tool_choice"], "required");
  EXPECT_EQ(translate_ok(head + R"({"type": "none"}})")["tool_choice"], "none");
  const Json off = translate_ok(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "x"}],
                                 "thinking": {"type": "disabled"}})");
  EXPECT_EQ(off["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_FALSE(off.contains("thinking_budget"));
}

TEST(MessagesRequest, TheParsedRequestIsAChatRequestWithTheSameRules) {
  ApiResult<OpenAiRequest> r = parse_messages_request(
      R"({"max_tokens": 7, "stop_sequences": ["a", "b"], "thinking": {"type": "enabled", "budget_tokens": 9},
          "messages": [{"role": "user", "content": "hi"}]})",
      MessagesCall::kCreate);
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(r)) << std::get<ApiError>(r).message;
  const OpenAiRequest& req = std::get<OpenAiRequest>(r);
  EXPECT_EQ(req.endpoint, Endpoint::kChatCompletions);
  EXPECT_EQ(req.max_tokens, 7);
  EXPECT_EQ(req.engine.stop_strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(req.agent.thinking_budget, 9);
  EXPECT_EQ(req.messages.size(), 1u);
}

TEST(MessagesRequest, MaxTokensIsRequiredToCreateButNotToCount) {
  const std::string body = R"({"messages": [{"role": "user", "content": "hi"}]})";
  const ApiError e = messages_error(body);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "max_tokens");
  EXPECT_TRUE(std::holds_alternative<OpenAiRequest>(parse_messages_request(body, MessagesCall::kCountTokens)));
}

TEST(MessagesRequest, ImagesAndDocumentsAreRefusedNamingTheBlock) {
  const ApiError e = messages_error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": [
      {"type": "text", "text": "what is this?"},
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}]})");
  EXPECT_EQ(e.param, "messages[0].content[1].type");
  EXPECT_NE(e.message.find("image"), std::string::npos) << e.message;
  EXPECT_EQ(messages_error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "tool_result",
      "tool_use_id": "t", "content": [{"type": "image", "source": {}}]}]}]})").param,
            "messages[0].content[0].content[0]");
}

TEST(MessagesRequest, MalformedMessagesAreRefusedNamingTheField) {
  auto param = [](const std::string& messages) {
    return messages_error(R"({"max_tokens": 1, "messages": )" + messages + "}").param.value_or("");
  };
  EXPECT_EQ(param(R"("hi")"), "messages");
  EXPECT_EQ(param("[]"), "messages");
  EXPECT_EQ(param(R"([{"role": "tool", "content": "x"}])"), "messages[0].role");
  EXPECT_EQ(param(R"([{"role": "user"}])"), "messages[0].content");
  EXPECT_EQ(param(R"([{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f"}]}])"),
            "messages[0].content[0].type");
  EXPECT_EQ(param(R"([{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f",
                                                            "input": [1]}]}])"),
            "messages[0].content[0].input");
  EXPECT_EQ(param(R"([{"role": "user", "content": [{"type": "tool_result"}]}])"),
            "messages[0].content[0].tool_use_id");
}

TEST(MessagesRequest, ErrorsFromTheSharedRulesNameAnthropicFields) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "x"}])";
  auto e = [&](const std::string& fields) { return messages_error("{" + msgs + ", " + fields + "}"); };
  EXPECT_EQ(e(R"("max_tokens": 1, "stop_sequences": "END")").param, "stop_sequences") << "an array, unlike 'stop'";
  const ApiError stop = e(R"("max_tokens": 1, "stop_sequences": ["END", 1])");
  EXPECT_EQ(stop.param, "stop_sequences");
  EXPECT_NE(stop.message.find("'stop_sequences'"), std::string::npos) << stop.message;
  EXPECT_EQ(stop.message.find("'stop'"), std::string::npos) << stop.message;
  EXPECT_EQ(e(R"("max_tokens": 0)").param, "max_tokens");
  EXPECT_EQ(e(R"("max_tokens": 1, "temperature": 7)").param, "temperature");
  EXPECT_EQ(e(R"("max_tokens": 1, "top_k": "many")").param, "top_k");
  EXPECT_EQ(e(R"("max_tokens": 1, "tools": [{"name": "", "input_schema": {}}])").param, "tools[0].name");
  EXPECT_EQ(e(R"("max_tokens": 1, "tools": [{"name": "f", "input_schema": 3}])").param, "tools[0].input_schema");
  EXPECT_EQ(e(R"("max_tokens": 1, "tools": [{"name": "f"}])").param, "tools[0].input_schema");
  EXPECT_EQ(e(R"("max_tokens": 1, "tools": [{"type": "web_search_20250305", "name": "web_search"}])").param,
            "tools[0].type");
  EXPECT_EQ(e(R"("max_tokens": 1, "tools": [{"name": "f", "input_schema": {}}],
                 "tool_choice": {"type": "tool", "name": "g"})").param,
            "tool_choice");
  EXPECT_EQ(e(R"("max_tokens": 1, "tool_choice": {"type": "sometimes"})").param, "tool_choice.type");
  EXPECT_EQ(e(R"("max_tokens": 1, "thinking": {"type": "enabled", "budget_tokens": -5})").param,
            "thinking.budget_tokens");
  EXPECT_EQ(e(R"("max_tokens": 1, "thinking": {"type": "enabled"})").param, "thinking.budget_tokens");
  EXPECT_EQ(e(R"("max_tokens": 1, "thinking": "on")").param, "thinking.type");
  EXPECT_EQ(e(R"("max_tokens": 1, "system": 5)").param, "system");
  EXPECT_EQ(e(R"("max_tokens": 1, "metadata": "x")").param, "metadata");
}

TEST(MessagesRequest, ABodyThatIsNotAJsonObjectIsA400) {
  EXPECT_EQ(messages_error("not json").status, 400);
  EXPECT_EQ(messages_error("[1]").status, 400);
  EXPECT_EQ(messages_error("\"\xff\"").status, 400);
}

}  // namespace
}  // namespace met
