// GrammarMatcher: history of DFA states, the trie walk behind fill_mask and
// the mask cache in front of it. Tested by tests/grammar/grammar_matcher_test.cc.
#include "grammar/grammar_matcher.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/check.h"

namespace met {

GrammarMatcher::GrammarMatcher(const Grammar& grammar, const TokenTrie& trie, MatcherOptions options)
    : trie_(&trie),
      dfa_(std::make_unique<GrammarDfa>(
          grammar, DfaLimits{options.max_dfa_rows, options.max_stacks_per_state, options.max_total_stacks,
                             options.max_visits_per_mask})),
      cache_(options.mask_cache_entries, trie.mask_words()) {
  history_.push_back({dfa_->start(), false});
  note_failure();  // a start past the budget
  size_t max_depth = 1;
  for (const TokenTrie::Node& n : trie.nodes()) max_depth = std::max<size_t>(max_depth, n.depth + 1);
  walk_states_.resize(max_depth);
  walk_rows_.resize(max_depth);
}

GrammarDfa::StateId GrammarMatcher::advance(GrammarDfa::StateId s, std::string_view bytes) {
  dfa_->start_walk();
  for (char c : bytes) {
    s = dfa_->step(s, static_cast<uint8_t>(c));
    if (s == GrammarDfa::kDead) {
      note_failure();
      return s;
    }
  }
  return s;
}

void GrammarMatcher::note_failure() {
  if (failure_.has_value() || !dfa_->failure().has_value()) return;
  if (dfa_->failed_on_stacks()) {
    failure_ = fmt::format(
        "the grammar is too ambiguous to follow after {} output tokens: {} (a rule whose alternatives or "
        "repetitions read the same text in several ways multiplies the parse stacks with each byte)",
        num_steps(), *dfa_->failure());
  } else {
    failure_ = fmt::format(
        "the grammar costs too much to follow after {} output tokens: {} (rules that may be empty, nested "
        "deeper with each byte, are looked past at every step)",
        num_steps(), *dfa_->failure());
  }
}

bool GrammarMatcher::accept_token(TokenId id) {
  if (failure_.has_value() || is_terminated() || id < 0 || static_cast<size_t>(id) >= trie_->vocab_size()) return false;
  const GrammarDfa::StateId now = history_.back().state;
  if (trie_->is_eog(id)) {
    if (!dfa_->is_accepting(now)) return false;
    history_.push_back({now, true});
    return true;
  }
  const std::string_view bytes = trie_->bytes(id);
  if (bytes.empty()) return false;
  const GrammarDfa::StateId next = advance(now, bytes);
  if (next == GrammarDfa::kDead) return false;
  history_.push_back({next, false});
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (failure_.has_value() || is_terminated()) return false;
  const GrammarDfa::StateId next = advance(history_.back().state, bytes);
  if (next == GrammarDfa::kDead) return false;
  history_.push_back({next, false});
  return true;
}

bool GrammarMatcher::is_accepting() const {
  return !failure_.has_value() && !is_terminated() && dfa_->is_accepting(history_.back().state);
}
bool GrammarMatcher::must_end() const {
  return !failure_.has_value() && !is_terminated() && dfa_->must_end(history_.back().state);
}
bool GrammarMatcher::is_terminated() const { return history_.back().terminated; }

void GrammarMatcher::rollback(size_t num) {
  MET_CHECK(num <= num_steps(), "rollback of {} steps, only {} taken", num, num_steps());
  history_.resize(history_.size() - num);
}

void GrammarMatcher::fill_mask(std::span<uint64_t> allowed_bits) {
  MET_CHECK(allowed_bits.size() >= trie_->mask_words(), "mask of {} words, vocab needs {}", allowed_bits.size(),
            trie_->mask_words());
  std::fill(allowed_bits.begin(), allowed_bits.end(), 0);
  if (failure_.has_value() || is_terminated()) return;
  const GrammarDfa::StateId s = history_.back().state;
  const std::span<uint64_t> mask = allowed_bits.first(trie_->mask_words());
  if (std::span<const uint64_t> hit = cache_.find(s); !hit.empty()) {
    std::copy(hit.begin(), hit.end(), mask.begin());
    return;
  }
  dfa_->drop_rows_if_full();
  dfa_->start_walk();
  walk_trie(s, mask);
  note_failure();
  if (failure_.has_value()) {
    std::fill(mask.begin(), mask.end(), 0);
    return;
  }
  if (dfa_->is_accepting(s)) {
    for (TokenId id : trie_->eog_ids()) mask[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64);
  }
  if (std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; })) {
    // A dead end: a character no token spells, or a class that matches none.
    failure_ = fmt::format("no token of the vocabulary continues the grammar after {} output tokens", num_steps());
    return;
  }
  cache_.insert(s, mask);
}

// One preorder scan; a dead prefix skips its subtree. Rows are looked up by
// depth so the common case is one array read per node.
void GrammarMatcher::walk_trie(GrammarDfa::StateId s, std::span<uint64_t> allowed_bits) {
  const std::span<const TokenTrie::Node> nodes = trie_->nodes();
  const std::span<const TokenId> tokens = trie_->tokens();
  walk_states_[0] = s;
  walk_rows_[0] = &dfa_->row(s);
  const auto n = static_cast<uint32_t>(nodes.size());
  for (uint32_t i = 1; i < n;) {
    const TokenTrie::Node& node = nodes[i];
    const uint32_t parent_depth = node.depth - 1u;
    GrammarDfa::StateId& slot = (*walk_rows_[parent_depth])[node.byte];
    if (slot == GrammarDfa::kUnknown) slot = dfa_->compute_step(walk_states_[parent_depth], node.byte);
    const GrammarDfa::StateId next = slot;
    if (next == GrammarDfa::kDead) {
      i = node.subtree_end;
      continue;
    }
    for (uint32_t k = 0; k < node.num_tokens; ++k) {
      const auto id = static_cast<uint32_t>(tokens[node.first_token + k]);
      allowed_bits[id / 64] |= uint64_t{1} << (id % 64);
    }
    if (node.subtree_end > i + 1) {
      walk_states_[node.depth] = next;
      walk_rows_[node.depth] = next == walk_states_[parent_depth] ? walk_rows_[parent_depth] : &dfa_->row(next);
    }
    ++i;
  }
}

}  // namespace met
