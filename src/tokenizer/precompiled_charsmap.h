// PrecompiledCharsmap: SentencePiece's precompiled normalization rules
// (`tokenizer.ggml.precompiled_charsmap`, tokenizer.json's Precompiled
// normalizer): a darts-clone double-array trie (XCDA) over input byte strings
// whose leaves index NUL-terminated replacement strings. The layout, as
// SentencePiece and llama.cpp read it: a little-endian uint32 byte size of the
// trie, the trie's uint32 units, then the replacement strings. A unit holds a
// label (bits 0-7, bit 31 set on value units), a has-leaf flag (bit 8) and a
// base (bits 10-30, shifted left by 8 more when bit 9 is set).
// Invariants: lookups never read outside the blob; a malformed trie or string
// gives "no match" rather than a wrong read.
// Threading: immutable after parse(); any thread.
// Tested by tests/tokenizer/precompiled_charsmap_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace met {

struct CharsmapMatch {
  size_t consumed_bytes = 0;     // how much of the input the rule covers
  std::string_view replacement;  // may be empty (the input is deleted)
};

class PrecompiledCharsmap {
 public:
  // An empty blob is a charsmap that matches nothing.
  static Result<PrecompiledCharsmap> parse(std::span<const uint8_t> blob);

  bool empty() const { return units_.empty(); }
  // The longest rule matching a prefix of `text` (matching stops at a NUL
  // byte), or nullopt when none does.
  std::optional<CharsmapMatch> longest_match(std::string_view text) const;

 private:
  std::optional<uint32_t> unit(uint32_t index) const {
    if (index >= units_.size()) return std::nullopt;
    return units_[index];
  }
  std::optional<std::string_view> replacement_at(uint32_t offset) const;

  std::vector<uint32_t> units_;
  std::string replacements_;
};

}  // namespace met
