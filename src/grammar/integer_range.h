// integer_range_gbnf: a GBNF expression matching exactly the decimal
// integers in [lo, hi] (no leading zeros, no "-0"), for JSON Schema's
// minimum/maximum on integers. Bounds are clamped to +-(10^16 - 1), the
// magnitude the plain integer rule allows (16 digits).
// Size: O(digits) alternatives per digit count.
// Threading: pure function. Tested by tests/grammar/integer_range_test.cc.
#pragma once

#include <cstdint>
#include <string>

namespace met {

inline constexpr int64_t kMaxJsonInteger = 9'999'999'999'999'999;  // 16 digits

// REQUIRES: lo <= hi.
std::string integer_range_gbnf(int64_t lo, int64_t hi);

}  // namespace met
