// integer_range_gbnf: the classic digit-range construction: split by digit
// count, then by the first digit where the bounds differ.
// Tested by tests/grammar/integer_range_test.cc.
#include "grammar/integer_range.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/check.h"

namespace met {
namespace {

std::string digit_class(char lo, char hi) {
  if (lo == hi) return fmt::format("\"{}\"", lo);
  return fmt::format("[{}-{}]", lo, hi);
}

std::string any_digits(size_t n) {
  if (n == 0) return "";
  if (n == 1) return "[0-9]";
  return fmt::format("[0-9]{{{}}}", n);
}

// Strings of length n between lo and hi inclusive (same length, lo <= hi).
std::string same_length(const std::string& lo, const std::string& hi) {
  const size_t n = lo.size();
  if (n == 0) return "\"\"";
  if (lo == hi) return fmt::format("\"{}\"", lo);
  if (lo[0] == hi[0]) return fmt::format("\"{}\" ({})", lo[0], same_length(lo.substr(1), hi.substr(1)));
  const std::string lo_rest = lo.substr(1), hi_rest = hi.substr(1);
  const bool lo_full = lo_rest == std::string(n - 1, '0');
  const bool hi_full = hi_rest == std::string(n - 1, '9');
  std::vector<std::string> alts;
  const char mid_lo = lo_full ? lo[0] : static_cast<char>(lo[0] + 1);
  const char mid_hi = hi_full ? hi[0] : static_cast<char>(hi[0] - 1);
  if (!lo_full) alts.push_back(fmt::format("\"{}\" ({})", lo[0], same_length(lo_rest, std::string(n - 1, '9'))));
  if (mid_lo <= mid_hi) alts.push_back(fmt::format("{} {}", digit_class(mid_lo, mid_hi), any_digits(n - 1)));
  if (!hi_full) alts.push_back(fmt::format("\"{}\" ({})", hi[0], same_length(std::string(n - 1, '0'), hi_rest)));
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
  return out;
}

int64_t pow10(size_t n) {
  int64_t p = 1;
  for (size_t i = 0; i < n; ++i) p *= 10;
  return p;
}

// Non-negative integers in [lo, hi].
std::string non_negative(int64_t lo, int64_t hi) {
  std::vector<std::string> alts;
  const size_t lo_digits = std::to_string(lo).size(), hi_digits = std::to_string(hi).size();
  for (size_t d = lo_digits; d <= hi_digits; ++d) {
    const int64_t a = std::max(lo, d == 1 ? 0 : pow10(d - 1));
    const int64_t b = std::min(hi, pow10(d) - 1);
    alts.push_back("(" + same_length(std::to_string(a), std::to_string(b)) + ")");
  }
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
  return out;
}

}  // namespace

std::string integer_range_gbnf(int64_t lo, int64_t hi) {
  MET_CHECK(lo <= hi, "integer range [{}, {}]", lo, hi);
  lo = std::clamp(lo, -kMaxJsonInteger, kMaxJsonInteger);
  hi = std::clamp(hi, -kMaxJsonInteger, kMaxJsonInteger);
  std::vector<std::string> alts;
  if (lo < 0) alts.push_back("\"-\" (" + non_negative(std::max<int64_t>(1, hi < 0 ? -hi : 1), -lo) + ")");
  if (hi >= 0) alts.push_back("(" + non_negative(std::max<int64_t>(0, lo), hi) + ")");
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
  return "(" + out + ")";
}

}  // namespace met
