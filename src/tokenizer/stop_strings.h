// Stop-string decisions over plain text, for streaming output: where the
// first stop string occurs, and how much of the text's end must be held back
// because it might be the beginning of one.
// Invariants: empty stop strings are ignored (they would match everywhere).
// Threading: pure functions. Tested by tests/tokenizer/stop_strings_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace met {

struct StopHit {
  size_t position = 0;    // byte offset of the match in the text
  size_t stop_index = 0;  // which stop string matched
};

// The earliest occurrence of any stop string; on a tie, the one listed first.
std::optional<StopHit> find_stop(std::string_view text, std::span<const std::string> stops);

// The length of the longest suffix of `text` that is a proper prefix of a stop
// string: what a stream must withhold until the next text decides it.
size_t stop_prefix_suffix_length(std::string_view text, std::span<const std::string> stops);

}  // namespace met
