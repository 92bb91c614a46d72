// GrammarMatcher: where one sequence stands in a Grammar, and which tokens
// may come next.
//
//   TokenTrie trie = TokenTrie::build(tokenizer);            // once per model
//   Result<Grammar> g = compile_json_schema(schema);          // once per request
//   GrammarMatcher m(*g, trie);                               // one per sequence
//   m.fill_mask(bits);            // bit t set: token t may be sampled now
//   m.accept_token(sampled);      // false: the token breaks the grammar
//   m.rollback(k);                // undo the last k accepted tokens (speculation)
//
// Tokens are matched by their bytes; a token may end inside a UTF-8
// character and the next one finish it. End-of-generation tokens are allowed
// exactly when is_accepting(); accepting one terminates the matcher (nothing
// more is allowed until a rollback). Control tokens are never allowed.
//
// Cost: fill_mask() is one scan of the token trie that skips every subtree
// whose prefix the grammar rejects; each trie node costs one memoized
// transition. Masks are cached per state (LRU, MatcherOptions), so a state
// seen before costs a copy of vocab/8 bytes. accept_token() costs one
// memoized transition per byte; rollback() is O(k). Memory grows with the
// distinct states visited (stack nodes, states) plus at most max_dfa_rows KiB
// of transition rows and mask_cache_entries * vocab/8 bytes of masks. New
// transitions are bounded by MatcherOptions' budget: parse stacks per state
// and in all (4 bytes each), grammar nodes visited per step and per call.
//
// A grammar too ambiguous to follow within MatcherOptions' budget (see
// GrammarDfa), or one that reaches a dead end (no token of the vocabulary
// continues it, and it is not complete), fails the matcher for good:
// failure() says where and why,
// fill_mask() allows nothing, accept_token() takes nothing. The caller ends
// the sequence with that message; nothing else is affected.
//
// Invariants: history_ holds the state after each accepted step, so rollback
// restores an exact earlier state; a failed accept changes nothing.
// Threading: one thread at a time; the Grammar and TokenTrie it borrows are
// immutable, must outlive it, and may be shared by many matchers.
// Tested by tests/grammar/grammar_matcher_test.cc, mask_test.cc and
// random_generation_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/grammar_dfa.h"
#include "grammar/mask_cache.h"
#include "grammar/token_trie.h"

namespace met {

struct MatcherOptions {
  size_t mask_cache_entries = 64;  // 0 disables the mask cache
  size_t max_dfa_rows = 16384;     // 1 KiB each
  // The budget on parse stacks (DfaLimits): past it the matcher fails.
  size_t max_stacks_per_state = DfaLimits{}.max_stacks_per_state;
  size_t max_total_stacks = DfaLimits{}.max_total_stacks;
  size_t max_visits_per_mask = DfaLimits{}.max_visits_per_walk;  // fill_mask's (or an accept's) work
};

class GrammarMatcher {
 public:
  GrammarMatcher(const Grammar& grammar, const TokenTrie& trie, MatcherOptions options = {});
  GrammarMatcher(GrammarMatcher&&) noexcept = default;
  GrammarMatcher& operator=(GrammarMatcher&&) noexcept = default;

  // Advances by one token; false (and no change) when the grammar rejects it.
  bool accept_token(TokenId id);
  // Advances by raw bytes as one step (for forced text); false and no change
  // when rejected.
  bool accept_bytes(std::string_view bytes);

  // The root rule is complete (no half-read character): EOG tokens allowed.
  bool is_accepting() const;
  // Accepting and nothing else can follow: generation should end now.
  bool must_end() const;
  // An EOG token was accepted.
  bool is_terminated() const;
  // Set when a step went past the budget or a mask found a dead end: the
  // message for the request's client.
  const std::optional<std::string>& failure() const { return failure_; }

  // Sets bit t of `allowed_bits` (word t/64, bit t%64) for every token that
  // accept_token would take now, clears every other bit.
  // REQUIRES: allowed_bits.size() >= trie.mask_words().
  void fill_mask(std::span<uint64_t> allowed_bits);

  // Steps accepted since construction, minus those rolled back.
  size_t num_steps() const { return history_.size() - 1; }
  // Undoes the last `num` accepted steps. REQUIRES: num <= num_steps().
  void rollback(size_t num);

 private:
  struct Step {
    GrammarDfa::StateId state;
    bool terminated;
  };
  GrammarDfa::StateId advance(GrammarDfa::StateId s, std::string_view bytes);
  // Copies the DFA's failure, with where it happened, into failure_.
  void note_failure();
  void walk_trie(GrammarDfa::StateId s, std::span<uint64_t> allowed_bits);

  const TokenTrie* trie_;
  std::unique_ptr<GrammarDfa> dfa_;
  MaskCache cache_;
  std::vector<Step> history_;  // history_[0]: the start; back(): now
  std::vector<GrammarDfa::StateId> walk_states_;  // state at each trie depth
  std::vector<GrammarDfa::Row*> walk_rows_;
  std::optional<std::string> failure_;
};

}  // namespace met
