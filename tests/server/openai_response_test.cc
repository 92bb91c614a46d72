// Tests for the OpenAI response bodies and the SSE encoder.
#include "server/openai_response.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/test_tokenizer.h"

namespace met {
namespace {

using PlainJson = nlohmann::json;

ResponseMeta meta(Endpoint ep) { return ResponseMeta{ep, make_response_id(ep, 7), 1700000000, "m"}; }

FinishEvent finish(const char* reason) {
  FinishEvent f;
  f.finish_reason = reason;
  f.usage = Usage{.prompt_tokens = 5, .completion_tokens = 3, .cached_prompt_tokens = 2};
  return f;
}

// A response of one choice with `text`, no logprobs.
std::vector<ChoiceOutput> one_choice(const std::string& text, const FinishEvent& f) {
  std::vector<ChoiceOutput> c(1);
  c[0].text = text;
  c[0].finish = f;
  return c;
}

// The JSON payloads of "data: …\n\n" events.
std::vector<std::string> events_of(const std::string& sse) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < sse.size()) {
    EXPECT_EQ(sse.compare(pos, 6, "data: "), 0) << sse;
    const size_t end = sse.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << sse;
    if (end == std::string::npos) break;
    out.push_back(sse.substr(pos + 6, end - pos - 6));
    pos = end + 2;
  }
  return out;
}

TEST(OpenAiResponse, IdsNameTheEndpoint) {
  EXPECT_EQ(make_response_id(Endpoint::kCompletions, 255), "cmpl-00000000000000ff");
  EXPECT_EQ(make_response_id(Endpoint::kChatCompletions, 1).rfind("chatcmpl-", 0), 0u);
}

TEST(OpenAiResponse, UsageHasEveryOpenAiField) {
  const PlainJson u = PlainJson::parse(usage_json(finish("stop").usage).dump());
  EXPECT_EQ(u["prompt_tokens"], 5);
  EXPECT_EQ(u["completion_tokens"], 3);
  EXPECT_EQ(u["total_tokens"], 8);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 2);
  EXPECT_EQ(u["completion_tokens_details"]["reasoning_tokens"], 0);
  EXPECT_EQ(u["completion_tokens_details"]["accepted_prediction_tokens"], 0);
}

TEST(OpenAiResponse, ACompletionBodyIsATextCompletion) {
  const PlainJson j =
      PlainJson::parse(completion_body(meta(Endpoint::kCompletions), one_choice("hello", finish("length"))).dump());
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"], "cmpl-0000000000000007");
  EXPECT_EQ(j["created"], 1700000000);
  EXPECT_EQ(j["model"], "m");
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], "hello");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["usage"]["total_tokens"], 8);
}

TEST(OpenAiResponse, AChatBodyHasAnAssistantMessage) {
  const PlainJson j =
      PlainJson::parse(completion_body(meta(Endpoint::kChatCompletions), one_choice("hi", finish("stop"))).dump());
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "hi");
  EXPECT_FALSE(j["choices"][0].contains("text"));
}

TEST(OpenAiResponse, ModelsListTheOneModel) {
  const PlainJson j = PlainJson::parse(models_body("tiny", 5).dump());
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][0]["id"], "tiny");
  EXPECT_EQ(j["data"][0]["object"], "model");
}

TEST(SseEncoder, ACompletionStreamEndsWithFinishThenDone) {
  SseEncoder enc(meta(Endpoint::kCompletions), /*include_usage=*/false);
  EXPECT_EQ(enc.start(), "");
  EXPECT_EQ(enc.encode(DeltaEvent{{1}, ""}), "");  // held-back text sends nothing
  const std::string body = enc.encode(DeltaEvent{{1, 2}, "Once"}) + enc.encode(finish("length"));
  const std::vector<std::string> events = events_of(body);
  ASSERT_EQ(events.size(), 3u);
  const PlainJson first = PlainJson::parse(events[0]);
  EXPECT_EQ(first["object"], "text_completion");
  EXPECT_EQ(first["choices"][0]["text"], "Once");
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  EXPECT_FALSE(first.contains("usage"));
  EXPECT_EQ(PlainJson::parse(events[1])["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[2], "[DONE]");
}

TEST(SseEncoder, AChatStreamStartsWithTheRoleAndCanCarryUsage) {
  SseEncoder enc(meta(Endpoint::kChatCompletions), /*include_usage=*/true);
  const std::vector<std::string> events =
      events_of(enc.start() + enc.encode(DeltaEvent{{1}, "Hi"}) + enc.encode(finish("stop")));
  ASSERT_EQ(events.size(), 5u);
  const PlainJson role = PlainJson::parse(events[0]);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(role["usage"].is_null());
  EXPECT_EQ(PlainJson::parse(events[1])["choices"][0]["delta"]["content"], "Hi");
  const PlainJson last = PlainJson::parse(events[2]);
  EXPECT_TRUE(last["choices"][0]["delta"].empty());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  const PlainJson usage = PlainJson::parse(events[3]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(events[4], "[DONE]");
}

TEST(SseEncoder, AnErrorEndsTheStreamWithAnErrorEventThenDone) {
  SseEncoder enc(meta(Endpoint::kCompletions), false);
  const std::vector<std::string> events = events_of(enc.encode(ErrorEvent{"device failed"}));
  ASSERT_EQ(events.size(), 2u);
  const PlainJson err = PlainJson::parse(events[0]);
  EXPECT_EQ(err["error"]["message"], "device failed");
  EXPECT_EQ(err["error"]["type"], "server_error");
  EXPECT_EQ(events[1], "[DONE]");
}

TEST(OpenAiResponse, ABodyWithSeveralChoicesIndexesThemAndCountsThePromptOnce) {
  std::vector<ChoiceOutput> choices(2);
  choices[0].text = "one";
  choices[0].finish = finish("stop");
  choices[1].text = "two";
  choices[1].finish = finish("length");
  ResponseMeta m = meta(Endpoint::kChatCompletions);
  m.choices_per_prompt = 2;  // n = 2 of one prompt
  const PlainJson j = PlainJson::parse(completion_body(m, choices).dump());
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["choices"][1]["message"]["content"], "two");
  EXPECT_EQ(j["choices"][1]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_EQ(j["usage"]["total_tokens"], 11);
}

TEST(OpenAiResponse, AStreamOfSeveralChoicesEndsAfterTheLastFinishWithSummedUsage) {
  ResponseMeta m = meta(Endpoint::kChatCompletions);
  m.choices_per_prompt = 2;
  SseEncoder enc(m, /*include_usage=*/true, /*num_choices=*/2);
  std::string sse = enc.start();
  sse += enc.encode(1, DeltaEvent{{1}, "b"});
  sse += enc.encode(0, DeltaEvent{{2}, "a"});
  const std::string after_first = enc.encode(1, finish("stop"));
  EXPECT_EQ(after_first.find("[DONE]"), std::string::npos) << "choice 0 is still running";
  sse += after_first + enc.encode(0, finish("length"));
  const std::vector<std::string> ev = events_of(sse);
  ASSERT_EQ(ev.size(), 8u);  // 2 role chunks, 2 deltas, 2 finishes, usage, [DONE]
  EXPECT_EQ(PlainJson::parse(ev[1])["choices"][0]["index"], 1);
  EXPECT_EQ(PlainJson::parse(ev[2])["choices"][0]["delta"]["content"], "b");
  EXPECT_EQ(PlainJson::parse(ev[4])["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(PlainJson::parse(ev[6])["usage"]["completion_tokens"], 6);
  EXPECT_EQ(ev[7], "[DONE]");
}

TEST(OpenAiResponse, StreamedLogprobsTravelWithTheirDelta) {
  ResponseMeta m = meta(Endpoint::kChatCompletions);
  m.tokenizer = &testing::test_tokenizer();
  SseEncoder enc(m, false, 1, /*logprobs=*/true);
  const TokenId a = *testing::test_tokenizer().vocab().find("a");
  DeltaEvent d{{a}, "a"};
  d.logprobs.push_back(TokenLogprob{.token = a, .logprob = -0.25f, .rank = 1, .top = {}});
  const std::vector<std::string> ev = events_of(enc.encode(d));
  ASSERT_EQ(ev.size(), 1u);
  const PlainJson c = PlainJson::parse(ev[0])["choices"][0];
  EXPECT_EQ(c["logprobs"]["content"][0]["token"], "a");
  EXPECT_FLOAT_EQ(c["logprobs"]["content"][0]["logprob"].get<float>(), -0.25f);
}

}  // namespace
}  // namespace met
