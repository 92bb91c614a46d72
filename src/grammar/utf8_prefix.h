// Utf8Prefix: byte-at-a-time UTF-8 decoding for the grammar matcher, whose
// grammar is over code points while tokens end mid-character. A prefix state
// is one uint32 (0 = between characters) so it can be part of a DFA state key.
// Decoding is strict (no overlong forms, surrogates or values past U+10FFFF):
// a byte that can never complete a valid character is rejected at once.
// Threading: pure functions. Tested by tests/grammar/utf8_prefix_test.cc.
#pragma once

#include <cstdint>

#include "grammar/grammar.h"

namespace met {

struct Utf8Step {
  enum class Kind : uint8_t { kInvalid, kPartial, kComplete };
  Kind kind = Kind::kInvalid;
  uint32_t prefix = 0;  // kPartial: the new prefix state
  char32_t code_point = 0;  // kComplete
};

// Feeds `byte` to the decoder in `prefix` state.
Utf8Step utf8_step(uint32_t prefix, uint8_t byte);

// The code points a prefix state can still become, as at most two ranges
// (two when the surrogate block splits them). REQUIRES: prefix != 0.
struct Utf8Completions {
  CharRange ranges[2];
  int num_ranges = 0;
};
Utf8Completions utf8_completions(uint32_t prefix);

}  // namespace met
