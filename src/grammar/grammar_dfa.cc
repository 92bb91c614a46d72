// GrammarDfa: stack interning, expansion of rule references and the byte
// step. Tested by tests/grammar/grammar_matcher_test.cc.
#include "grammar/grammar_dfa.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/check.h"
#include "grammar/utf8_prefix.h"

namespace met {

size_t GrammarDfa::state_hash(uint32_t utf8_prefix, const std::vector<uint32_t>& stacks) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ utf8_prefix;
  for (uint32_t v : stacks) h = (h ^ v) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h);
}

GrammarDfa::GrammarDfa(const Grammar& grammar, DfaLimits limits) : grammar_(grammar), limits_(limits) {
  nodes_.push_back({0, 0});  // kEmptyStack
  std::vector<uint32_t> stacks;
  start_walk();
  begin_expansion();
  bool within = true;
  for (uint32_t alt : grammar_.rule(grammar_.root()).alternatives) {
    within = within && expand(node(alt, kEmptyStack), stacks);
  }
  start_ = within ? intern(std::move(stacks), 0) : kDead;
  MET_CHECK(start_ != kDead || failure_.has_value(), "a checked grammar always has a start state");
}

uint32_t GrammarDfa::node(uint32_t pos, uint32_t parent) {
  const uint64_t key = (uint64_t{pos} << 32) | parent;
  auto [it, inserted] = node_ids_.emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({pos, parent});
  return it->second;
}

// Nodes one step may visit per stack a state may hold: a step that looks
// past a deep stack of rules that may be empty visits one node per level.
constexpr size_t kVisitsPerStack = 64;

void GrammarDfa::begin_expansion() {
  ++seen_epoch_;
  visits_left_ = kVisitsPerStack * limits_.max_stacks_per_state;
}

// Appends to `out` every stack reachable from `start_node` without consuming
// input whose top is a char set (or the empty stack), skipping nodes this
// step has seen. Without left recursion this terminates; the seen-set bounds
// the work by distinct nodes. False (failure_ set) past the budget.
bool GrammarDfa::expand(uint32_t start_node, std::vector<uint32_t>& out) {
  scratch_todo_.assign(1, start_node);
  while (!scratch_todo_.empty()) {
    const uint32_t n = scratch_todo_.back();
    scratch_todo_.pop_back();
    if (scratch_seen_.size() <= n) scratch_seen_.resize(nodes_.size() * 2, 0);
    if (scratch_seen_[n] == seen_epoch_) continue;
    scratch_seen_[n] = seen_epoch_;
    if (visits_left_ == 0 || walk_visits_left_ == 0) {
      failure_ = visits_left_ == 0 ? fmt::format("more than {} grammar nodes visited in one step",
                                                 kVisitsPerStack * limits_.max_stacks_per_state)
                                   : fmt::format("more than {} grammar nodes visited for one token",
                                                 limits_.max_visits_per_walk);
      return false;
    }
    --visits_left_;
    --walk_visits_left_;
    if (n == kEmptyStack || grammar_.element(nodes_[n].first).kind == ElementKind::kChars) {
      if (out.size() == limits_.max_stacks_per_state) {
        failure_ = fmt::format("more than {} parse stacks in one state", limits_.max_stacks_per_state);
        failed_on_stacks_ = true;
        return false;
      }
      out.push_back(n);
      continue;
    }
    const auto [pos, parent] = nodes_[n];
    const GrammarElement& e = grammar_.element(pos);
    switch (e.kind) {
      case ElementKind::kChars:
        break;  // output above
      case ElementKind::kEnd:
        scratch_todo_.push_back(parent);
        break;
      case ElementKind::kRuleRef: {
        const uint32_t cont = grammar_.element(pos + 1).kind == ElementKind::kEnd ? parent : node(pos + 1, parent);
        for (uint32_t alt : grammar_.rule(e.value).alternatives) scratch_todo_.push_back(node(alt, cont));
        break;
      }
    }
  }
  return true;
}

// Records the first excess; true when a new state of `num_stacks` stacks
// would go past the budget (or an earlier one did).
bool GrammarDfa::over_budget(size_t num_stacks) {
  if (failure_.has_value()) return true;
  if (num_stacks > limits_.max_stacks_per_state) {
    failure_ = fmt::format("{} parse stacks in one state (limit {})", num_stacks, limits_.max_stacks_per_state);
  } else if (total_stacks_ + num_stacks > limits_.max_total_stacks) {
    failure_ = fmt::format("{} parse stacks over {} states (limit {})", total_stacks_ + num_stacks,
                           states_.size() + 1, limits_.max_total_stacks);
  }
  failed_on_stacks_ = failure_.has_value();
  return failure_.has_value();
}

GrammarDfa::StateId GrammarDfa::intern(std::vector<uint32_t> stacks, uint32_t utf8_prefix) {
  if (stacks.empty()) return kDead;
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  const size_t hash = state_hash(utf8_prefix, stacks);
  for (auto [it, end] = state_ids_.equal_range(hash); it != end; ++it) {
    const State& s = states_[it->second];
    if (s.utf8_prefix == utf8_prefix && s.stacks == stacks) return it->second;
  }
  if (over_budget(stacks.size())) return kDead;
  const auto id = static_cast<StateId>(states_.size());
  const bool accepting = stacks.front() == kEmptyStack;
  total_stacks_ += stacks.size();
  states_.push_back({std::move(stacks), utf8_prefix, accepting});
  rows_.emplace_back();
  state_ids_.emplace(hash, id);
  return id;
}

GrammarDfa::StateId GrammarDfa::compute_step(StateId s, uint8_t byte) {
  const Utf8Step u = utf8_step(states_[s].utf8_prefix, byte);
  std::vector<uint32_t> next;
  switch (u.kind) {
    case Utf8Step::Kind::kInvalid:
      return kDead;
    case Utf8Step::Kind::kPartial: {
      const Utf8Completions c = utf8_completions(u.prefix);
      for (uint32_t n : states_[s].stacks) {
        if (n == kEmptyStack) continue;
        const CharSet& set = grammar_.char_set(grammar_.element(nodes_[n].first).value);
        for (int i = 0; i < c.num_ranges; ++i) {
          if (set.intersects(c.ranges[i].lo, c.ranges[i].hi)) {
            next.push_back(n);
            break;
          }
        }
      }
      return intern(std::move(next), u.prefix);
    }
    case Utf8Step::Kind::kComplete:
      break;
  }
  if (failure_.has_value()) return kDead;
  begin_expansion();
  for (uint32_t n : states_[s].stacks) {  // expand() grows nodes_, never states_
    if (n == kEmptyStack) continue;
    const auto [pos, parent] = nodes_[n];
    if (!grammar_.char_set(grammar_.element(pos).value).contains(u.code_point)) continue;
    if (!expand(node(pos + 1, parent), next)) return kDead;
  }
  return intern(std::move(next), 0);
}

void GrammarDfa::allocate_row(StateId s) {
  rows_[s] = std::make_unique<Row>();
  rows_[s]->fill(kUnknown);
  ++num_rows_;
}

void GrammarDfa::drop_rows_if_full() {
  if (num_rows_ <= limits_.max_rows) return;
  for (auto& r : rows_) r.reset();
  num_rows_ = 0;
}

}  // namespace met

