// libFuzzer target: compile_gbnf on arbitrary text must return a Grammar or
// an error, never crash; a compiled grammar must run in a matcher over the
// input's own bytes and print back to GBNF that compiles again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/check.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  met::Result<met::Grammar> g = met::compile_gbnf(text);
  if (!g.ok()) return 0;
  MET_CHECK(met::compile_gbnf(g->to_gbnf()).ok(), "printed grammar does not compile: {}", g->to_gbnf());
  static const met::TokenTrie kTrie = [] {
    std::vector<std::string> pieces;
    for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
    pieces.emplace_back("ab");
    return met::TokenTrie::from_pieces(std::move(pieces), {});
  }();
  met::GrammarMatcher m(*g, kTrie);
  std::vector<uint64_t> mask(kTrie.mask_words());
  for (size_t i = 0; i < size && i < 64; ++i) {
    m.fill_mask(mask);
    if (!m.accept_token(data[i])) break;
  }
  return 0;
}
