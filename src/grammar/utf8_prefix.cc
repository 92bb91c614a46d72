// Utf8Prefix: the strict byte-at-a-time decoder. Layout of a prefix state:
// bits 0-20 the value so far, 24-25 bytes seen, 28-30 bytes needed.
// Tested by tests/grammar/utf8_prefix_test.cc.
#include "grammar/utf8_prefix.h"

namespace met {
namespace {

constexpr uint32_t pack(uint32_t value, uint32_t have, uint32_t need) {
  return value | (have << 24) | (need << 28);
}
constexpr uint32_t value_of(uint32_t p) { return p & 0x1FFFFF; }
constexpr uint32_t have_of(uint32_t p) { return (p >> 24) & 3; }
constexpr uint32_t need_of(uint32_t p) { return (p >> 28) & 7; }

constexpr char32_t min_for_length(uint32_t need) {
  return need == 2 ? 0x80 : need == 3 ? 0x800 : 0x10000;
}

// Completions of value `value` with `have` of `need` bytes, before surrogates.
CharRange raw_range(uint32_t value, uint32_t have, uint32_t need) {
  const uint32_t rem_bits = 6 * (need - have);
  char32_t lo = value << rem_bits;
  char32_t hi = lo | ((char32_t{1} << rem_bits) - 1);
  if (lo < min_for_length(need)) lo = min_for_length(need);
  if (hi > 0x10FFFF) hi = 0x10FFFF;
  return {lo, hi};
}

Utf8Completions split_surrogates(CharRange r) {
  Utf8Completions out;
  if (r.lo > r.hi) return out;
  if (r.lo < 0xD800) out.ranges[out.num_ranges++] = {r.lo, r.hi < 0xD800 ? r.hi : char32_t{0xD7FF}};
  if (r.hi > 0xDFFF) out.ranges[out.num_ranges++] = {r.lo > 0xE000 ? r.lo : char32_t{0xE000}, r.hi};
  return out;
}

}  // namespace

Utf8Step utf8_step(uint32_t prefix, uint8_t byte) {
  using Kind = Utf8Step::Kind;
  uint32_t value = 0, have = 1, need = 0;
  if (prefix == 0) {
    if (byte < 0x80) return {Kind::kComplete, 0, byte};
    if (byte >= 0xC2 && byte <= 0xDF) {
      need = 2, value = byte & 0x1F;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      need = 3, value = byte & 0x0F;
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      need = 4, value = byte & 0x07;
    } else {
      return {};
    }
  } else {
    if ((byte & 0xC0) != 0x80) return {};
    value = (value_of(prefix) << 6) | (byte & 0x3F);
    have = have_of(prefix) + 1;
    need = need_of(prefix);
    if (have == need) {
      if (value < min_for_length(need) || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return {};
      return {Kind::kComplete, 0, value};
    }
  }
  if (split_surrogates(raw_range(value, have, need)).num_ranges == 0) return {};
  return {Kind::kPartial, pack(value, have, need), 0};
}

Utf8Completions utf8_completions(uint32_t prefix) {
  return split_surrogates(raw_range(value_of(prefix), have_of(prefix), need_of(prefix)));
}

}  // namespace met
