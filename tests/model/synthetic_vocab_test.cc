// Tests for synthetic vocabularies (src/model/synthetic_vocab.h).
#include "model/synthetic_vocab.h"

#include <set>
#include <unordered_set>

#include <gtest/gtest.h>

namespace met {
namespace {

SyntheticVocab make(VocabKind kind, uint32_t size, uint64_t seed = 1) {
  SyntheticVocabOptions o;
  o.kind = kind;
  o.size = size;
  o.seed = seed;
  auto v = make_synthetic_vocab(o);
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return std::move(v).value();
}

TEST(SyntheticVocab, SpmHasExactSizeAndDistinctTokens) {
  SyntheticVocab v = make(VocabKind::kSpm, 4000);
  ASSERT_EQ(v.tokens.size(), 4000u);
  EXPECT_EQ(v.scores.size(), 4000u);
  EXPECT_EQ(v.token_types.size(), 4000u);
  EXPECT_EQ(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), 4000u);
}

TEST(SyntheticVocab, FurtherControlTokensAreAppendedOnceAndCountTowardsTheSize) {
  for (VocabKind kind : {VocabKind::kSpm, VocabKind::kBpe}) {
    SyntheticVocabOptions o;
    o.kind = kind;
    o.size = 1000;
    o.control_tokens = {"<think>", "</think>", "<|im_start|>", "<think>", "[TOOL_CALLS]"};
    auto v = make_synthetic_vocab(o);
    ASSERT_TRUE(v.ok()) << v.status().to_string();
    ASSERT_EQ(v->tokens.size(), 1000u);
    const std::vector<std::string> tail(v->tokens.end() - 3, v->tokens.end());
    EXPECT_EQ(tail, (std::vector<std::string>{"<think>", "</think>", "[TOOL_CALLS]"}));
    for (size_t i = v->tokens.size() - 3; i < v->tokens.size(); ++i) {
      EXPECT_EQ(v->token_types[i], static_cast<int32_t>(TokenKind::kControl)) << v->tokens[i];
    }
    EXPECT_EQ(std::set<std::string>(v->tokens.begin(), v->tokens.end()).size(), 1000u);
  }
}

TEST(SyntheticVocab, TooManyControlTokensForTheSizeAreRefused) {
  SyntheticVocabOptions o;
  o.size = kMinSyntheticVocab;
  for (int i = 0; i < 400; ++i) o.control_tokens.push_back("<|t" + std::to_string(i) + "|>");
  EXPECT_FALSE(make_synthetic_vocab(o).ok());
}

TEST(SyntheticVocab, SpmHasSpecialsAndByteFallbackTokens) {
  SyntheticVocab v = make(VocabKind::kSpm, 1000);
  EXPECT_EQ(v.tokens[v.unk_id], "<unk>");
  EXPECT_EQ(v.tokens[v.bos_id], "<s>");
  EXPECT_EQ(v.tokens[v.eos_id], "</s>");
  EXPECT_EQ(v.tokens[v.eot_id], "<|im_end|>");
  EXPECT_EQ(v.tokens[3], "<0x00>");
  EXPECT_EQ(v.tokens[3 + 0x41], "<0x41>");
  EXPECT_EQ(v.token_types[3 + 0xFF], static_cast<int32_t>(TokenKind::kByte));
  EXPECT_TRUE(v.add_bos);
}

TEST(SyntheticVocab, SpmLearnsEnglishWordsFromItsText) {
  SyntheticVocab v = make(VocabKind::kSpm, 2000);
  std::unordered_set<std::string> tokens(v.tokens.begin(), v.tokens.end());
  EXPECT_TRUE(tokens.contains("\xe2\x96\x81" "the"));  // "▁the"
  EXPECT_TRUE(tokens.contains("\xe2\x96\x81" "and"));
}

TEST(SyntheticVocab, SpmScoresRankMergesInOrder) {
  SyntheticVocab v = make(VocabKind::kSpm, 1500);
  // Pieces after the byte tokens have strictly decreasing scores.
  for (size_t i = 260; i + 3 < v.tokens.size(); ++i) EXPECT_GT(v.scores[i], v.scores[i + 1]);
}

TEST(SyntheticVocab, BpeMergesJoinExistingTokensIntoTokens) {
  SyntheticVocab v = make(VocabKind::kBpe, 3000);
  ASSERT_EQ(v.tokens.size(), 3000u);
  std::unordered_set<std::string> tokens(v.tokens.begin(), v.tokens.end());
  ASSERT_EQ(v.merges.size(), 3000u - 256u - 3u);
  for (const std::string& m : v.merges) {
    const size_t space = m.find(' ');
    ASSERT_NE(space, std::string::npos) << m;
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    EXPECT_TRUE(tokens.contains(left)) << m;
    EXPECT_TRUE(tokens.contains(right)) << m;
    EXPECT_TRUE(tokens.contains(left + right)) << m;
  }
  EXPECT_EQ(v.tokens[v.eos_id], "<|endoftext|>");
}

TEST(SyntheticVocab, BpeByteSymbolsFollowGpt2Mapping) {
  const auto& sym = byte_level_symbols();
  EXPECT_EQ(sym['A'], "A");
  EXPECT_EQ(sym[' '], "\xc4\xa0");   // U+0120 "Ġ"
  EXPECT_EQ(sym['\n'], "\xc4\x8a");  // U+010A "Ċ"
  EXPECT_EQ(std::set<std::string>(sym.begin(), sym.end()).size(), 256u);
}

TEST(SyntheticVocab, IsDeterministicForASeed) {
  EXPECT_EQ(make(VocabKind::kBpe, 2000, 7).tokens, make(VocabKind::kBpe, 2000, 7).tokens);
  EXPECT_NE(make(VocabKind::kBpe, 2000, 7).tokens, make(VocabKind::kBpe, 2000, 8).tokens);
}

TEST(SyntheticVocab, RefusesTooSmallASize) {
  SyntheticVocabOptions o;
  o.size = 100;
  auto v = make_synthetic_vocab(o);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("minimum of 512"), std::string::npos);
}

}  // namespace
}  // namespace met
