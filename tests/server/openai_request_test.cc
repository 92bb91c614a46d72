// Tests for parse_openai_request: every field's type and range, each bad
// value named in `param`.
#include "server/openai_request.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace met {
namespace {

OpenAiRequest parse_ok(Endpoint ep, const std::string& body) {
  ApiResult<OpenAiRequest> r = parse_openai_request(ep, body);
  if (auto* e = std::get_if<ApiError>(&r)) ADD_FAILURE() << body << ": " << e->message;
  return std::holds_alternative<OpenAiRequest>(r) ? std::get<OpenAiRequest>(r) : OpenAiRequest{};
}

ApiError parse_error(Endpoint ep, const std::string& body) {
  ApiResult<OpenAiRequest> r = parse_openai_request(ep, body);
  if (!std::holds_alternative<ApiError>(r)) ADD_FAILURE() << body << " was accepted";
  return std::holds_alternative<ApiError>(r) ? std::get<ApiError>(r) : ApiError{};
}

TEST(OpenAiRequest, ACompletionTakesEveryField) {
  const OpenAiRequest r = parse_ok(Endpoint::kCompletions, R"({
    "model": "m", "prompt": "hi", "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "top_k": 40,
    "seed": 42, "stop": ["a", "b"], "stream": true, "stream_options": {"include_usage": true},
    "user": "u", "min_tokens": 2, "ignore_eos": true, "cache_salt": "s", "timeout": 1.5, "n": 1,
    "unknown_field": {"ignored": true}})");
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(std::get<std::string>(r.prompts[0]), "hi");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_FLOAT_EQ(r.engine.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.engine.sampling.top_p, 0.9f);
  EXPECT_EQ(r.engine.sampling.top_k, 40);
  EXPECT_EQ(r.engine.sampling.seed, 42u);
  EXPECT_EQ(r.engine.stop_strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.engine.min_tokens, 2);
  EXPECT_TRUE(r.engine.ignore_eos);
  EXPECT_EQ(r.engine.cache_salt, "s");
  ASSERT_TRUE(r.engine.timeout.has_value());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*r.engine.timeout).count(), 1500);
}

TEST(OpenAiRequest, PenaltiesAndLogitBiasReachTheSampler) {
  const OpenAiRequest r = parse_ok(Endpoint::kCompletions, R"({"prompt": "", "presence_penalty": 0.5,
      "frequency_penalty": -0.5, "repetition_penalty": 1.1, "min_p": 0.05, "logit_bias": {"7": -100, "9": 2.5},
      "logprobs": null, "echo": false, "best_of": 1, "response_format": {"type": "text"}, "tools": []})");
  EXPECT_FLOAT_EQ(r.engine.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.engine.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.engine.sampling.repetition_penalty, 1.1f);
  EXPECT_FLOAT_EQ(r.engine.sampling.min_p, 0.05f);
  ASSERT_EQ(r.engine.sampling.logit_bias.size(), 2u);
  EXPECT_EQ(r.engine.sampling.logit_bias[0].token, 7);
  EXPECT_FLOAT_EQ(r.engine.sampling.logit_bias[0].bias, -100.0f);
  EXPECT_EQ(r.engine.sampling.logit_bias[1].token, 9);
}

TEST(OpenAiRequest, PromptFormsAreTextsOrTokenIdsAndMayBeBatched) {
  using P = std::vector<CompletionPrompt>;
  using Ids = std::vector<TokenId>;
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": ["one"]})").prompts, (P{std::string("one")}));
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": [1, 2, 3]})").prompts, (P{Ids{1, 2, 3}}));
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": [[4, 5]]})").prompts, (P{Ids{4, 5}}));
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": ["a", "b"]})").prompts,
            (P{std::string("a"), std::string("b")}));
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": [[1], [2, 3]]})").prompts, (P{Ids{1}, Ids{2, 3}}));
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": "x", "stop": "end"})").engine.stop_strings,
            (std::vector<std::string>{"end"}));
}

TEST(OpenAiRequest, NullIsTheSameAsAbsent) {
  const OpenAiRequest r =
      parse_ok(Endpoint::kCompletions, R"({"prompt": "", "max_tokens": null, "temperature": null, "stop": null})");
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_TRUE(r.engine.stop_strings.empty());
}

TEST(OpenAiRequest, EachBadFieldIsNamedInParam) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"({"prompt": 5})", "prompt"},
      {R"({})", "prompt"},
      {R"({"prompt": []})", "prompt"},
      {R"({"prompt": ["a", 3]})", "prompt"},
      {R"({"prompt": [[1], []]})", "prompt"},
      {R"({"prompt": ["a", "b"], "n": 17})", "n"},
      {R"({"prompt": [1, -2]})", "prompt"},
      {R"({"prompt": [1, "a"]})", "prompt"},
      {R"({"prompt": "", "max_tokens": "7"})", "max_tokens"},
      {R"({"prompt": "", "max_tokens": 0})", "max_tokens"},
      {R"({"prompt": "", "max_tokens": 1.5})", "max_tokens"},
      {R"({"prompt": "", "max_tokens": 99999999999})", "max_tokens"},
      {R"({"prompt": "", "temperature": -1})", "temperature"},
      {R"({"prompt": "", "temperature": 3})", "temperature"},
      {R"({"prompt": "", "temperature": "hot"})", "temperature"},
      {R"({"prompt": "", "top_p": 0})", "top_p"},
      {R"({"prompt": "", "top_p": 1.5})", "top_p"},
      {R"({"prompt": "", "top_k": -2})", "top_k"},
      {R"({"prompt": "", "seed": "x"})", "seed"},
      {R"({"prompt": "", "stop": 3})", "stop"},
      {R"({"prompt": "", "stop": ["a", 3]})", "stop"},
      {R"({"prompt": "", "stream": "yes"})", "stream"},
      {R"({"prompt": "", "stream_options": 1})", "stream_options"},
      {R"({"prompt": "", "stream_options": {"include_usage": 1}})", "stream_options.include_usage"},
      {R"({"prompt": "", "user": 1})", "user"},
      {R"({"prompt": "", "min_tokens": -1})", "min_tokens"},
      {R"({"prompt": "", "max_tokens": 2, "min_tokens": 3})", "min_tokens"},
      {R"({"prompt": "", "ignore_eos": 1})", "ignore_eos"},
      {R"({"prompt": "", "cache_salt": 1})", "cache_salt"},
      {R"({"prompt": "", "timeout": 0})", "timeout"},
      {R"({"prompt": "", "timeout": "soon"})", "timeout"},
      {R"({"prompt": "", "n": 33})", "n"},
      {R"({"prompt": "", "n": 0})", "n"},
      {R"({"prompt": "", "model": 3})", "model"},
      {R"({"prompt": "", "presence_penalty": 3})", "presence_penalty"},
      {R"({"prompt": "", "frequency_penalty": -2.5})", "frequency_penalty"},
      {R"({"prompt": "", "repetition_penalty": 0})", "repetition_penalty"},
      {R"({"prompt": "", "min_p": 2})", "min_p"},
      {R"({"prompt": "", "logit_bias": [1]})", "logit_bias"},
      {R"({"prompt": "", "logit_bias": {"x": 1}})", "logit_bias"},
      {R"({"prompt": "", "logit_bias": {"5": 101}})", "logit_bias"},
      {R"({"prompt": "", "logprobs": 21})", "logprobs"},
      {R"({"prompt": "", "logprobs": true})", "logprobs"},
      {R"({"prompt": "", "echo": true})", "echo"},
      {R"({"prompt": "", "best_of": 3})", "best_of"},
      {R"({"prompt": "", "tools": [{"type": "function"}]})", "tools"},
      {R"({"prompt": "", "response_format": {"type": "yaml"}})", "response_format.type"},
  };
  for (const Case& c : cases) {
    const ApiError e = parse_error(Endpoint::kCompletions, c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << ": " << e.message;
  }
}

TEST(OpenAiRequest, CompletionsTakeTheLegacyIntegerLogprobs) {
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": "", "logprobs": 5})").engine.logprobs, 5);
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": "", "logprobs": 0})").engine.logprobs, 0);
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": ""})").engine.logprobs, std::nullopt);
}

TEST(OpenAiRequest, PromptLogprobsAreVllmsInteger) {
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": "", "prompt_logprobs": 3})").engine.prompt_logprobs, 3);
  EXPECT_EQ(parse_error(Endpoint::kCompletions, R"({"prompt": "", "prompt_logprobs": 21})").param, "prompt_logprobs");
  EXPECT_EQ(parse_error(Endpoint::kCompletions, R"({"prompt": "", "prompt_logprobs": true})").param,
            "prompt_logprobs");
}

TEST(OpenAiRequest, ChatTakesLogprobsWithTopLogprobs) {
  const std::string m = R"("messages": [{"role": "user", "content": "hi"}])";
  EXPECT_EQ(parse_ok(Endpoint::kChatCompletions, "{" + m + R"(, "logprobs": true, "top_logprobs": 20})").engine.logprobs,
            20);
  EXPECT_EQ(parse_ok(Endpoint::kChatCompletions, "{" + m + R"(, "logprobs": true})").engine.logprobs, 0);
  EXPECT_EQ(parse_ok(Endpoint::kChatCompletions, "{" + m + R"(, "logprobs": false})").engine.logprobs, std::nullopt);
  EXPECT_EQ(parse_error(Endpoint::kChatCompletions, "{" + m + R"(, "top_logprobs": 3})").param, "top_logprobs");
  EXPECT_EQ(parse_error(Endpoint::kChatCompletions, "{" + m + R"(, "logprobs": true, "top_logprobs": 21})").param,
            "top_logprobs");
  EXPECT_EQ(parse_error(Endpoint::kChatCompletions, "{" + m + R"(, "logprobs": 3})").param, "logprobs");
}

TEST(OpenAiRequest, NChoicesUpTo16AndWhetherASeedWasGiven) {
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": "", "n": 4})").n, 4);
  EXPECT_EQ(parse_ok(Endpoint::kCompletions, R"({"prompt": ""})").n, 1);
  EXPECT_FALSE(parse_ok(Endpoint::kCompletions, R"({"prompt": ""})").has_seed);
  EXPECT_TRUE(parse_ok(Endpoint::kCompletions, R"({"prompt": "", "seed": 0})").has_seed);
}

TEST(OpenAiRequest, MalformedBodiesAreRefusedWithoutAParam) {
  for (const std::string& body : {std::string("{"), std::string("[1]"), std::string("\"s\""), std::string(""),
                                  std::string("{\"prompt\": \"\xff\"}")}) {
    const ApiError e = parse_error(Endpoint::kCompletions, body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_FALSE(e.param.has_value()) << body;
  }
  EXPECT_NE(parse_error(Endpoint::kCompletions, "{\"prompt\": \"\xc3\"}").message.find("UTF-8"), std::string::npos);
}

TEST(OpenAiRequest, ChatMessagesGetStringContent) {
  const OpenAiRequest r = parse_ok(Endpoint::kChatCompletions, R"({"messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null}], "max_tokens": 5, "max_completion_tokens": 9})");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0]["content"], "be brief");
  EXPECT_EQ(r.messages[1]["content"], "a\nb");
  EXPECT_EQ(r.messages[2]["content"], "");
  EXPECT_EQ(r.max_tokens, 9);  // max_completion_tokens wins
}

TEST(OpenAiRequest, BadChatMessagesAreNamed) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"({})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": "hi"})", "messages"},
      {R"({"messages": [3]})", "messages[0]"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user", "content": 3}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "image_url"}]}]})",
       "messages[1].content"},
      {R"({"messages": [{"role": "user", "content": "a"}], "max_completion_tokens": 0})", "max_completion_tokens"},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_error(Endpoint::kChatCompletions, c.body).param, c.param) << c.body;
}

}  // namespace
}  // namespace met
