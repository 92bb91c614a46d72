// Tests for src/tokenizer/incremental_detokenizer.h.
#include "tokenizer/incremental_detokenizer.h"

#include <random>

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

constexpr TokenId byte_token(uint8_t b) { return 3 + b; }  // tiny_spm's <0xNN>

// <unk> <s> </s> <0x00>..<0xFF> "▁Hello" "▁world" "!" "Hel" "lo"
Tokenizer spm() {
  return testing::tiny_tokenizer(testing::tiny_spm({"\xE2\x96\x81Hello", "\xE2\x96\x81world", "!", "Hel", "lo"}));
}
constexpr TokenId kHello = 259, kWorld = 260, kBang = 261, kHel = 262, kLo = 263;

std::string run(IncrementalDetokenizer& d, std::initializer_list<TokenId> ids, std::vector<std::string>* steps = nullptr) {
  std::string all;
  for (TokenId id : ids) {
    const DetokenizerStep step = d.push(id);
    if (steps) steps->push_back(step.text);
    all += step.text;
  }
  return all;
}

TEST(IncrementalDetokenizer, HoldsACharacterSplitAcrossByteTokensUntilComplete) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {});
  std::vector<std::string> steps;
  run(d, {byte_token(0xE2), byte_token(0x82), byte_token(0xAC), kBang}, &steps);
  EXPECT_EQ(steps, (std::vector<std::string>{"", "", "\xE2\x82\xAC", "!"}));
}

TEST(IncrementalDetokenizer, ByteThatCanNeverCompleteBecomesAReplacementCharacter) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {});
  std::vector<std::string> steps;
  run(d, {byte_token(0xE2), kBang, byte_token(0x80)}, &steps);
  EXPECT_EQ(steps, (std::vector<std::string>{"", "\xEF\xBF\xBD!", "\xEF\xBF\xBD"}));
}

TEST(IncrementalDetokenizer, IncompleteCharacterAtTheEndIsFlushedAsReplacement) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {});
  EXPECT_EQ(run(d, {kBang, byte_token(0xF0), byte_token(0x9F)}), "!");
  EXPECT_EQ(d.finish().text, "\xEF\xBF\xBD");
  EXPECT_EQ(d.push(kBang).text, "");  // finished
}

TEST(IncrementalDetokenizer, LeadingSpaceIsDroppedOnlyAtTheStartOfASequence) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer start(tokenizer, {.at_sequence_start = true});
  EXPECT_EQ(run(start, {1, kHello, kWorld}), "Hello world");  // BOS renders nothing
  IncrementalDetokenizer continuation(tokenizer, {});
  EXPECT_EQ(run(continuation, {kHello, kWorld}), " Hello world");
}

TEST(IncrementalDetokenizer, SpecialTokensRenderOnlyWhenAsked) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer skip(tokenizer, {});
  EXPECT_EQ(run(skip, {kHel, 2}), "Hel");
  IncrementalDetokenizer render(tokenizer, {.skip_special = false});
  EXPECT_EQ(run(render, {kHel, 2}), "Hel</s>");
}

TEST(IncrementalDetokenizer, TextThatMayBeginAStopStringIsWithheldThenReleased) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {.stop_strings = {"Hello!"}});
  std::vector<std::string> steps;
  run(d, {kWorld, kHel, kLo, kWorld}, &steps);
  EXPECT_EQ(steps, (std::vector<std::string>{" world", "", "", "Hello world"}));
  EXPECT_FALSE(d.stopped());
}

TEST(IncrementalDetokenizer, StopAcrossTokensIsReportedWithTheTextBeforeIt) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {.stop_strings = {"nope", "lo!"}});
  EXPECT_EQ(d.push(kWorld).text, " world");
  EXPECT_EQ(d.push(kHel).text, "He");  // "l" may begin "lo!"
  EXPECT_EQ(d.push(kLo).text, "l");   // "lo" may too
  const DetokenizerStep step = d.push(kBang);
  EXPECT_EQ(step.text, "");
  ASSERT_TRUE(step.stop.has_value());
  EXPECT_EQ(*step.stop, 1u);
  EXPECT_TRUE(d.stopped());
  EXPECT_EQ(d.push(kWorld).text, "");
  EXPECT_EQ(d.finish().text, "");
}

TEST(IncrementalDetokenizer, StopInsideOneTokenKeepsTheTextBeforeIt) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {.stop_strings = {"wor"}});
  const DetokenizerStep step = d.push(kWorld);
  EXPECT_EQ(step.text, " ");
  EXPECT_EQ(step.stop, 0u);
}

TEST(IncrementalDetokenizer, HeldTextIsReleasedAtFinish) {
  const Tokenizer tokenizer = spm();
  IncrementalDetokenizer d(tokenizer, {.stop_strings = {"Hello!"}});
  EXPECT_EQ(run(d, {kHello}), " ");
  const DetokenizerStep last = d.finish();
  EXPECT_EQ(last.text, "Hello");
  EXPECT_FALSE(last.stop.has_value());
}

TEST(IncrementalDetokenizer, PushingIntoACallersStringAppendsWhatPushReturns) {
  const Tokenizer tokenizer = spm();
  DetokenizerOptions o;
  o.stop_strings = {"world!"};
  IncrementalDetokenizer by_step(tokenizer, o);
  IncrementalDetokenizer into(tokenizer, o);
  std::string text = "kept:";
  for (TokenId id : {kHel, kLo, byte_token(0xE2), byte_token(0x82), byte_token(0xAC), kWorld, kBang, kHello}) {
    const DetokenizerStep step = by_step.push(id);
    const size_t before = text.size();
    EXPECT_EQ(into.push(id, text), step.stop);
    EXPECT_EQ(text.substr(before), step.text);
  }
  EXPECT_EQ(text, "kept:Hello\xE2\x82\xAC ");
  EXPECT_TRUE(into.stopped());
}

TEST(IncrementalDetokenizer, StreamedTextEqualsDecodeOfTheWholeSequence) {
  const Tokenizer tokenizer = testing::synthetic_tokenizer(VocabKind::kSpm);
  std::mt19937 rng(1);
  std::uniform_int_distribution<TokenId> pick(0, static_cast<TokenId>(tokenizer.vocab().size()) - 1);
  for (int round = 0; round < 50; ++round) {
    std::vector<TokenId> ids(40);
    for (TokenId& id : ids) id = pick(rng);
    IncrementalDetokenizer d(tokenizer, {.at_sequence_start = true});
    std::string streamed;
    for (TokenId id : ids) streamed += d.push(id).text;
    streamed += d.finish().text;
    EXPECT_EQ(streamed, tokenizer.decode(ids));
  }
}

}  // namespace
}  // namespace met
