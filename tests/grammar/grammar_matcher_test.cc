// Tests GrammarMatcher: strings accepted and rejected for each GBNF feature,
// tokens that split UTF-8 characters, end-of-generation, rollback, and masks
// on a small vocabulary.
#include "grammar/grammar_matcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "grammar/grammar_testing.h"

namespace met {
namespace {

using testing::gbnf;
using testing::grammar_matches;

struct FeatureCase {
  const char* grammar;
  std::vector<const char*> accepted;
  std::vector<const char*> rejected;
};

TEST(GrammarMatcher, AcceptsExactlyTheLanguageOfEachFeature) {
  const FeatureCase cases[] = {
      {R"(root ::= "abc")", {"abc"}, {"", "ab", "abcd", "abd"}},
      {R"(root ::= "a" | "bc" | )", {"a", "bc", ""}, {"b", "abc"}},
      {R"(root ::= [a-c0-9_]+)", {"a", "c9_", "000"}, {"", "d", "A"}},
      {R"(root ::= [^"\\]*)", {"", "abc", "\xC3\xA9"}, {"\"", "\\"}},
      {R"(root ::= . .)", {"ab", "\xE2\x82\xAC!", "\xF0\x9F\x98\x80\n"}, {"a", "abc"}},
      {R"(root ::= ("ab")* "c"?)", {"", "ab", "abab", "ababc", "c"}, {"a", "abc c", "cab"}},
      {R"(root ::= "x"{2} "y"{1,3} "z"{2,})", {"xxyzz", "xxyyyzzzz"}, {"xyzz", "xxzz", "xxyyyyzz", "xxyz"}},
      {R"(root ::= "a"{,2})", {"", "a", "aa"}, {"aaa"}},
      {"root ::= \"[\" inner? \"]\"\ninner ::= root+", {"[]", "[[]]", "[[][[]]]"}, {"[", "[]]", "]["}},
      {R"(root ::= "\u00E9" [\U0001F600-\U0001F64F])", {"\xC3\xA9\xF0\x9F\x98\x80"}, {"e\xF0\x9F\x98\x80", "\xC3\xA9"}},
      {"root ::= \"a\" # comment\n  | \"b\"", {"a", "b"}, {"ab"}},
  };
  for (const FeatureCase& c : cases) {
    const Grammar g = gbnf(c.grammar);
    for (const char* s : c.accepted) EXPECT_TRUE(grammar_matches(g, s)) << c.grammar << " should accept '" << s << "'";
    for (const char* s : c.rejected) EXPECT_FALSE(grammar_matches(g, s)) << c.grammar << " should reject '" << s << "'";
  }
}

TEST(GrammarMatcher, RejectsInvalidUtf8EvenWhereAnyCharIsAllowed) {
  const Grammar g = gbnf("root ::= .*");
  EXPECT_TRUE(grammar_matches(g, "\xE2\x82\xAC"));
  EXPECT_FALSE(grammar_matches(g, "\xE2\x82"));       // incomplete: not accepting
  EXPECT_FALSE(grammar_matches(g, "\xC0\x80"));       // overlong
  EXPECT_FALSE(grammar_matches(g, "\xED\xA0\x80"));   // surrogate
  EXPECT_FALSE(grammar_matches(g, "\x80"));           // stray continuation byte
}

// Tokens: 0 "a", 1 "b", 2 "\xC3" (first half of é), 3 "\xA9" (second half),
// 4 "ab", 5 "<ctl>" (control: no bytes), 6 EOG, 7 "\xC3\xA9b".
TokenTrie small_trie() {
  return TokenTrie::from_pieces({"a", "b", "\xC3", "\xA9", "ab", "", "</s>", "\xC3\xA9" "b"}, {6});
}

std::vector<TokenId> allowed(GrammarMatcher& m, const TokenTrie& trie) {
  std::vector<uint64_t> mask(trie.mask_words());
  m.fill_mask(mask);
  std::vector<TokenId> out;
  for (size_t t = 0; t < trie.vocab_size(); ++t) {
    if ((mask[t / 64] >> (t % 64)) & 1) out.push_back(static_cast<TokenId>(t));
  }
  return out;
}

TEST(GrammarMatcher, TokensMayEndInsideACharacter) {
  const TokenTrie trie = small_trie();
  const Grammar g = gbnf(R"(root ::= "a" "\u00E9" "b")");
  GrammarMatcher m(g, trie);
  EXPECT_EQ(allowed(m, trie), (std::vector<TokenId>{0}));
  ASSERT_TRUE(m.accept_token(0));
  EXPECT_EQ(allowed(m, trie), (std::vector<TokenId>{2, 7}));
  ASSERT_TRUE(m.accept_token(2));
  EXPECT_FALSE(m.is_accepting());
  EXPECT_EQ(allowed(m, trie), (std::vector<TokenId>{3}));
  ASSERT_TRUE(m.accept_token(3));
  ASSERT_TRUE(m.accept_token(1));
  EXPECT_TRUE(m.is_accepting());
  EXPECT_TRUE(m.must_end());
  EXPECT_EQ(allowed(m, trie), (std::vector<TokenId>{6}));
}

TEST(GrammarMatcher, EndOfGenerationOnlyWhenAcceptingAndThenNothing) {
  const TokenTrie trie = small_trie();
  const Grammar g = gbnf(R"(root ::= "a"+)");
  GrammarMatcher m(g, trie);
  EXPECT_FALSE(m.accept_token(6));
  ASSERT_TRUE(m.accept_token(0));
  EXPECT_EQ(allowed(m, trie), (std::vector<TokenId>{0, 6}));
  EXPECT_FALSE(m.must_end());
  ASSERT_TRUE(m.accept_token(6));
  EXPECT_TRUE(m.is_terminated());
  EXPECT_TRUE(allowed(m, trie).empty());
  EXPECT_FALSE(m.accept_token(0));
  m.rollback(1);
  EXPECT_FALSE(m.is_terminated());
  EXPECT_TRUE(m.accept_token(0));
}

TEST(GrammarMatcher, ControlTokensAndOutOfRangeIdsAreNeverAccepted) {
  const TokenTrie trie = small_trie();
  const Grammar g = gbnf("root ::= .*");
  GrammarMatcher m(g, trie);
  EXPECT_FALSE(m.accept_token(5));
  EXPECT_FALSE(m.accept_token(-1));
  EXPECT_FALSE(m.accept_token(100));
  EXPECT_EQ(m.num_steps(), 0u);
}

TEST(GrammarMatcher, RejectedTokenLeavesTheStateUnchanged) {
  const TokenTrie trie = small_trie();
  const Grammar g = gbnf(R"(root ::= "ab")");
  GrammarMatcher m(g, trie);
  EXPECT_FALSE(m.accept_token(1));
  EXPECT_EQ(m.num_steps(), 0u);
  EXPECT_TRUE(m.accept_token(4));
  EXPECT_TRUE(m.is_accepting());
}

TEST(GrammarMatcher, RollbackRestoresEarlierStatesExactly) {
  const TokenTrie trie = small_trie();
  const Grammar g = gbnf(R"(root ::= ("a" "b")* "\u00E9"?)");
  GrammarMatcher m(g, trie);
  const std::vector<TokenId> at_start = allowed(m, trie);
  ASSERT_TRUE(m.accept_token(0));
  const std::vector<TokenId> after_a = allowed(m, trie);
  ASSERT_TRUE(m.accept_token(1));
  ASSERT_TRUE(m.accept_token(2));
  EXPECT_EQ(m.num_steps(), 3u);
  m.rollback(2);
  EXPECT_EQ(allowed(m, trie), after_a);
  m.rollback(1);
  EXPECT_EQ(allowed(m, trie), at_start);
  EXPECT_TRUE(m.is_accepting());
}

TEST(GrammarMatcher, MaskCacheGivesTheSameMasksAsComputing) {
  const TokenTrie trie = small_trie();
  const Grammar g = gbnf(R"(root ::= ("a" | "b" | "\u00E9")*)");
  GrammarMatcher cached(g, trie, {.mask_cache_entries = 2});
  GrammarMatcher uncached(g, trie, {.mask_cache_entries = 0});
  for (TokenId t : {0, 1, 4, 2, 3, 0, 7, 1}) {
    EXPECT_EQ(allowed(cached, trie), allowed(uncached, trie));
    ASSERT_TRUE(cached.accept_token(t));
    ASSERT_TRUE(uncached.accept_token(t));
  }
}

TEST(GrammarMatcher, ADeadEndNoTokenCanContinueFailsTheMatcherSayingWhere) {
  const TokenTrie trie = small_trie();  // no token spells "z"
  for (const char* text : {R"(root ::= "a" "z")", R"(root ::= "a" [^\x00-\U0010FFFF])"}) {
    const Grammar g = gbnf(text);
    GrammarMatcher m(g, trie);
    EXPECT_EQ(allowed(m, trie), (std::vector<TokenId>{0}));
    ASSERT_TRUE(m.accept_token(0));
    EXPECT_FALSE(m.failure().has_value()) << "found when a mask is asked for";
    EXPECT_TRUE(allowed(m, trie).empty());
    ASSERT_TRUE(m.failure().has_value()) << text;
    EXPECT_NE(m.failure()->find("no token of the vocabulary continues the grammar after 1 output tokens"),
              std::string::npos)
        << *m.failure();
  }
}

TEST(GrammarMatcher, AcceptBytesIsOneStep) {
  const Grammar g = gbnf(R"(root ::= "hello" " world"?)");
  GrammarMatcher m(g, testing::byte_trie());
  EXPECT_TRUE(m.accept_bytes("hello"));
  EXPECT_TRUE(m.is_accepting());
  EXPECT_FALSE(m.accept_bytes(" there"));
  EXPECT_EQ(m.num_steps(), 1u);
  m.rollback(1);
  EXPECT_FALSE(m.is_accepting());
}

// Each "a" may close with "1" or "2" later: after n a's there are 2^n
// pending sequences of closers, and a state holds 3 * 2^n parse stacks (for
// each sequence: its next closer, or either alternative's next "a").
constexpr const char* kDoublingGrammar = "root ::= x\nx ::= \"a\" x \"1\" | \"a\" x \"2\" | \"\"";

TEST(GrammarMatcher, AmbiguityWithinTheBudgetIsFollowedExactly) {
  const Grammar g = gbnf(kDoublingGrammar);
  EXPECT_TRUE(grammar_matches(g, "aaaa1221"));
  EXPECT_TRUE(grammar_matches(g, "aaaaaaaaaa2222222222"));
  EXPECT_FALSE(grammar_matches(g, "aaaa122"));
  EXPECT_FALSE(grammar_matches(g, "aaa1221"));
  GrammarMatcher m(g, testing::byte_trie(), {.max_stacks_per_state = 48});
  EXPECT_TRUE(m.accept_bytes("aaaa"));  // 48 stacks: at the limit, not past it
  EXPECT_FALSE(m.failure().has_value());
  EXPECT_TRUE(m.accept_bytes("2"));  // fewer again
  m.rollback(1);
  EXPECT_FALSE(m.accept_bytes("a"));
  ASSERT_TRUE(m.failure().has_value());
  EXPECT_NE(m.failure()->find("more than 48 parse stacks in one state"), std::string::npos) << *m.failure();
}

TEST(GrammarMatcher, AGrammarTooAmbiguousToFollowFailsClearlyAndStaysFailed) {
  const Grammar g = gbnf(kDoublingGrammar);
  const TokenTrie& trie = testing::byte_trie();
  GrammarMatcher m(g, trie);  // the default budget
  std::vector<uint64_t> mask(trie.mask_words());
  size_t accepted = 0;
  for (; accepted < 64; ++accepted) {
    m.fill_mask(mask);
    if (m.failure().has_value() || !m.accept_token('a')) break;
  }
  ASSERT_TRUE(m.failure().has_value()) << "2^64 stacks cannot be followed";
  EXPECT_LT(accepted, 20u) << "the default budget is thousands of stacks, not millions";
  EXPECT_NE(m.failure()->find("too ambiguous"), std::string::npos) << *m.failure();
  EXPECT_NE(m.failure()->find("parse stacks"), std::string::npos) << *m.failure();
  m.fill_mask(mask);
  EXPECT_TRUE(std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; })) << "nothing is allowed";
  EXPECT_FALSE(m.accept_token('a'));
  EXPECT_FALSE(m.accept_token('1'));
  // Another matcher on the same grammar and trie is untouched.
  GrammarMatcher other(g, trie);
  EXPECT_TRUE(other.accept_bytes("aa"));
  EXPECT_TRUE(other.accept_bytes("12"));
  EXPECT_TRUE(other.is_accepting());
}

TEST(GrammarMatcher, AStartStatePastTheBudgetFailsAtOnce) {
  // Every way to skip through nested optional repetitions is its own stack:
  // a million before the first byte.
  const Grammar g = gbnf(R"(root ::= (("a"{0,100}){0,100}){0,100} "b")");
  GrammarMatcher m(g, testing::byte_trie());
  ASSERT_TRUE(m.failure().has_value());
  EXPECT_NE(m.failure()->find("after 0 output tokens"), std::string::npos) << *m.failure();
  std::vector<uint64_t> mask(testing::byte_trie().mask_words());
  m.fill_mask(mask);
  EXPECT_TRUE(std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; }));
  EXPECT_FALSE(m.accept_token('a'));
  EXPECT_FALSE(m.is_accepting());
  EXPECT_FALSE(m.must_end());
}

TEST(GrammarMatcher, TheVisitBudgetBoundsAStepThatPopsThroughDeepRepetitions) {
  // After n letters n empty e's are pending, and each step looks past them
  // all for the ".": n visits.
  const Grammar g = gbnf("root ::= x \".\"\nx ::= [a-z] x e | \"\"\ne ::= \"\"");
  GrammarMatcher tight(g, testing::byte_trie(), {.max_stacks_per_state = 4});  // 256 visits
  size_t accepted = 0;
  while (accepted < 2000 && tight.accept_bytes("q")) ++accepted;
  ASSERT_TRUE(tight.failure().has_value());
  EXPECT_NE(tight.failure()->find("grammar nodes visited in one step"), std::string::npos) << *tight.failure();
  EXPECT_LT(accepted, 300u);
  GrammarMatcher roomy(g, testing::byte_trie());
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(roomy.accept_bytes("q")) << i;
  EXPECT_TRUE(roomy.accept_bytes("."));
  EXPECT_TRUE(roomy.is_accepting());
}

TEST(GrammarMatcher, TheVisitBudgetOfOneMaskBoundsItsWholeTrieWalk) {
  // Each letter pushes a pending "e" that may be empty, so every step of the
  // walk looks past all of them: steps cost more as the output grows.
  const Grammar g = gbnf("root ::= x \".\"\nx ::= [a-z] x e | \"\"\ne ::= \"\"");
  const TokenTrie& trie = testing::byte_trie();
  GrammarMatcher m(g, trie, {.mask_cache_entries = 0, .max_visits_per_mask = 20000});
  std::vector<uint64_t> mask(trie.mask_words());
  size_t accepted = 0;
  for (; accepted < 2000; ++accepted) {
    m.fill_mask(mask);  // 27 new steps (26 letters and "."), each visiting about `accepted` nodes
    if (m.failure().has_value() || !m.accept_token('a' + static_cast<int>(accepted % 26))) break;
  }
  ASSERT_TRUE(m.failure().has_value());
  EXPECT_NE(m.failure()->find("more than 20000 grammar nodes visited for one token"), std::string::npos)
      << *m.failure();
  EXPECT_EQ(m.failure()->find("the grammar costs too much to follow after "), 0u) << *m.failure();
  EXPECT_GT(accepted, 300u) << "each step alone stays within its own budget";
  EXPECT_LT(accepted, 1000u);
}

TEST(GrammarMatcher, TheBudgetOnAllStatesFailsAGrammarWhoseStatesKeepMultiplying) {
  // Few stacks per state, but each byte of a bounded repetition is a new state.
  const Grammar g = gbnf("root ::= [a-z]{0,500}");
  GrammarMatcher small(g, testing::byte_trie(), {.max_total_stacks = 200});
  bool failed = false;
  for (int i = 0; i < 500 && !failed; ++i) failed = !small.accept_bytes("q");
  ASSERT_TRUE(small.failure().has_value());
  EXPECT_NE(small.failure()->find("200"), std::string::npos) << *small.failure();
  GrammarMatcher roomy(g, testing::byte_trie());
  EXPECT_TRUE(roomy.accept_bytes(std::string(500, 'q')));
  EXPECT_TRUE(roomy.is_accepting());
}

}  // namespace
}  // namespace met
