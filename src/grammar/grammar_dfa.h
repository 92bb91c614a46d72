// GrammarDfa: the grammar's pushdown automaton, determinized lazily over
// bytes. A parse stack is a node (position, parent) interned in a pool, so
// equal stacks are equal ids and a set of stacks is a sorted id vector. A DFA
// state is (set of stacks whose top is a char set or the empty stack, UTF-8
// prefix of an unfinished code point), interned too; a state id therefore
// names a matcher state exactly, and equal states share transitions and
// cached masks. Transitions are memoized in 256-entry rows, allocated when a
// state is first stepped from; past `max_rows` rows all rows are dropped
// (states stay, so ids remain valid) to bound memory.
// An ambiguous grammar can multiply stacks byte by byte (2^n after n bytes
// of `x ::= "a" x "1" | "a" x "2" | ""`), so a budget bounds the stacks one
// state may hold (the start state's included: nested optional repetitions
// reach a million stacks without reading a byte) and those all states hold
// together, the nodes one step may visit and those all steps of one walk
// (one token's mask) may visit; a step past it is kDead and failure() says
// why (a failed start is kDead too).
// Cost: a memoized step is one array read; a new one expands the stacks.
// Invariants: state ids are never reused; kDead is never interned; a state
// with no stacks is never interned (it is kDead).
// Threading: one thread at a time (owned by one GrammarMatcher).
// Tested by tests/grammar/grammar_matcher_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace met {

struct DfaLimits {
  size_t max_rows = 16384;                      // memo rows of 1 KiB
  size_t max_stacks_per_state = 4096;           // parse stacks in one state
  size_t max_total_stacks = size_t{1} << 23;    // over all states (4 bytes each)
  // Grammar nodes visited between start_walk() calls (about 50 ns each): a
  // fresh mask of a JSON schema at a 152k vocab visits ~125k.
  size_t max_visits_per_walk = size_t{1} << 22;
};

class GrammarDfa {
 public:
  using StateId = uint32_t;
  static constexpr StateId kDead = 0xFFFFFFFF;
  static constexpr StateId kUnknown = 0xFFFFFFFE;  // a row entry not computed yet
  using Row = std::array<StateId, 256>;

  GrammarDfa(const Grammar& grammar, DfaLimits limits);

  StateId start() const { return start_; }
  // The state after `byte`, or kDead.
  StateId step(StateId s, uint8_t byte) {
    Row& r = row(s);
    StateId& next = r[byte];
    if (next == kUnknown) next = compute_step(s, byte);
    return next;
  }
  // The memo row of `s` (allocated on demand): stable until drop_rows_if_full().
  Row& row(StateId s) {
    if (!rows_[s]) allocate_row(s);
    return *rows_[s];
  }
  StateId compute_step(StateId s, uint8_t byte);

  // The root is complete and no code point is half-read.
  bool is_accepting(StateId s) const { return states_[s].accepting && states_[s].utf8_prefix == 0; }
  // Accepting, and no byte can follow.
  bool must_end(StateId s) const { return is_accepting(s) && states_[s].stacks.size() == 1; }
  size_t num_states() const { return states_.size(); }
  // Set once a step went past the budget (that step and every later new one
  // are kDead; start() too if it was the start): what was exceeded.
  const std::optional<std::string>& failure() const { return failure_; }
  // Whether failure() is about stacks (ambiguity) rather than visits (work).
  bool failed_on_stacks() const { return failed_on_stacks_; }
  // Drops every memo row when more than max_rows exist. Call between walks.
  void drop_rows_if_full();
  // Starts a walk: the steps computed from now on share max_visits_per_walk.
  void start_walk() { walk_visits_left_ = limits_.max_visits_per_walk; }

 private:
  struct State {
    std::vector<uint32_t> stacks;  // sorted node ids; kEmptyStack means the root is done
    uint32_t utf8_prefix = 0;
    bool accepting = false;
  };
  static constexpr uint32_t kEmptyStack = 0;

  static size_t state_hash(uint32_t utf8_prefix, const std::vector<uint32_t>& stacks);

  uint32_t node(uint32_t pos, uint32_t parent);
  // Starts a step's expansions: they share one seen-set (the stacks a node
  // expands to do not depend on how it was reached) and one visit budget.
  void begin_expansion();
  bool expand(uint32_t start_node, std::vector<uint32_t>& out);
  StateId intern(std::vector<uint32_t> stacks, uint32_t utf8_prefix);
  bool over_budget(size_t num_stacks);
  void allocate_row(StateId s);

  const Grammar& grammar_;
  DfaLimits limits_;
  size_t num_rows_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> nodes_;  // (position, parent node)
  std::unordered_map<uint64_t, uint32_t> node_ids_;
  std::vector<State> states_;
  std::unordered_multimap<size_t, StateId> state_ids_;  // by state_hash()
  size_t total_stacks_ = 0;
  std::optional<std::string> failure_;
  bool failed_on_stacks_ = false;
  std::vector<std::unique_ptr<Row>> rows_;
  std::vector<uint32_t> scratch_todo_;
  std::vector<uint32_t> scratch_seen_;
  uint32_t seen_epoch_ = 0;
  size_t visits_left_ = 0;       // this step's
  size_t walk_visits_left_ = 0;  // this walk's
  StateId start_ = kDead;
};

}  // namespace met
