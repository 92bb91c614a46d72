// For the grammar fuzz targets: generates from a compiled grammar over a
// vocabulary of the 256 bytes plus "ab" and an EOG token, each token chosen
// among those fill_mask allows by the next input byte, so the fuzzer steers
// the walk through the grammar's language. The matcher must take every
// token its mask allows (MET_CHECK); an empty mask (its budget or a dead
// end) ends the walk. Used by gbnf_parser_fuzz and json_schema_fuzz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/check.h"
#include "grammar/grammar_matcher.h"

namespace met::fuzz {

inline const TokenTrie& walk_trie() {
  static const TokenTrie kTrie = [] {
    std::vector<std::string> pieces;
    for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
    pieces.emplace_back("ab");
    pieces.emplace_back("</s>");
    return TokenTrie::from_pieces(std::move(pieces), {258});
  }();
  return kTrie;
}

// Up to 64 tokens, the i-th chosen by choices[i % size] among the allowed.
// The budget is a sixteenth of the default or less, so an input near it
// costs milliseconds, not a second, and the failure paths run often.
inline void walk_grammar(const Grammar& grammar, std::span<const uint8_t> choices) {
  if (choices.empty()) return;
  const TokenTrie& trie = walk_trie();
  GrammarMatcher m(grammar, trie,
                   {.max_stacks_per_state = 256, .max_total_stacks = 1 << 16, .max_visits_per_mask = 1 << 16});
  std::vector<uint64_t> mask(trie.mask_words());
  std::vector<TokenId> allowed;
  for (size_t i = 0; i < 64 && !m.is_terminated(); ++i) {
    m.fill_mask(mask);
    allowed.clear();
    for (size_t t = 0; t < trie.vocab_size(); ++t) {
      if ((mask[t / 64] >> (t % 64)) & 1) allowed.push_back(static_cast<TokenId>(t));
    }
    if (allowed.empty()) return;  // the budget, or a grammar with no way on
    const TokenId t = allowed[choices[i % choices.size()] % allowed.size()];
    MET_CHECK(m.accept_token(t), "token {} was allowed by the mask but not accepted", t);
  }
}

}  // namespace met::fuzz
