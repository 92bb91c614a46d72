// Tests for the logprobs JSON shapes of chat and completions responses.
#include "server/logprobs_json.h"

#include <gtest/gtest.h>

#include <limits>

#include "testing/test_tokenizer.h"

namespace met {
namespace {

using PlainJson = nlohmann::json;

// A token whose piece is plain text, and one more.
TokenId token_for(const std::string& text) { return *testing::test_tokenizer().vocab().find(text); }

TokenLogprob entry(TokenId t, float lp, std::vector<TopLogprob> top) {
  return TokenLogprob{.token = t, .logprob = lp, .rank = 1, .top = std::move(top)};
}

TEST(LogprobsJson, ChatEntriesCarryTokenLogprobBytesAndTopLogprobs) {
  const Tokenizer& tok = testing::test_tokenizer();
  const TokenId a = token_for("a"), b = token_for("b");
  const std::vector<TokenLogprob> entries = {entry(a, -0.5f, {{a, -0.5f}, {b, -1.5f}})};
  const PlainJson j = PlainJson::parse(chat_logprobs_json(entries, tok).dump());
  ASSERT_EQ(j["content"].size(), 1u);
  const PlainJson& e = j["content"][0];
  EXPECT_EQ(e["token"], "a");
  EXPECT_FLOAT_EQ(e["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(e["bytes"], PlainJson::array({97}));
  ASSERT_EQ(e["top_logprobs"].size(), 2u);
  EXPECT_EQ(e["top_logprobs"][1]["token"], "b");
  EXPECT_FLOAT_EQ(e["top_logprobs"][1]["logprob"].get<float>(), -1.5f);
  EXPECT_EQ(e["top_logprobs"][1]["bytes"], PlainJson::array({98}));
}

TEST(LogprobsJson, MinusInfinityIsWrittenAsMinus9999) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<TokenLogprob> entries = {entry(token_for("a"), -inf, {})};
  const PlainJson j = PlainJson::parse(chat_logprobs_json(entries, testing::test_tokenizer()).dump());
  EXPECT_EQ(j["content"][0]["logprob"], -9999.0);
}

TEST(LogprobsJson, CompletionsUseTheLegacyShapeWithTheSampledTokenAlwaysInTopLogprobs) {
  const Tokenizer& tok = testing::test_tokenizer();
  const TokenId a = token_for("a"), b = token_for("b");
  const std::vector<TokenLogprob> entries = {entry(a, -0.5f, {{b, -0.2f}}), entry(b, -0.2f, {{b, -0.2f}})};
  size_t offset = 10;
  const PlainJson j = PlainJson::parse(completion_logprobs_json(entries, tok, offset).dump());
  EXPECT_EQ(j["tokens"], PlainJson::array({"a", "b"}));
  EXPECT_FLOAT_EQ(j["token_logprobs"][0].get<float>(), -0.5f);
  EXPECT_EQ(j["top_logprobs"][0].size(), 2u) << "logprobs: 1 lists the top one plus the sampled one";
  EXPECT_FLOAT_EQ(j["top_logprobs"][0]["a"].get<float>(), -0.5f);
  EXPECT_EQ(j["top_logprobs"][1].size(), 1u);
  EXPECT_EQ(j["text_offset"], PlainJson::array({10, 11}));
  EXPECT_EQ(offset, 12u);
}

TEST(LogprobsJson, PromptLogprobsStartWithNullThenMapIdsToLogprobRankAndText) {
  const Tokenizer& tok = testing::test_tokenizer();
  const TokenId a = token_for("a"), b = token_for("b");
  const std::vector<TokenLogprob> entries = {
      TokenLogprob{.token = a, .logprob = -2.0f, .rank = 2, .top = {{b, -0.1f}, {a, -2.0f}}}};
  const PlainJson j = PlainJson::parse(prompt_logprobs_json(entries, tok).dump());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_TRUE(j[0].is_null());
  const PlainJson& m = j[1];
  EXPECT_EQ(m.size(), 2u);
  EXPECT_FLOAT_EQ(m[std::to_string(a)]["logprob"].get<float>(), -2.0f);
  EXPECT_EQ(m[std::to_string(a)]["rank"], 2);
  EXPECT_EQ(m[std::to_string(a)]["decoded_token"], "a");
  EXPECT_EQ(m[std::to_string(b)]["rank"], 1);
}

}  // namespace
}  // namespace met
