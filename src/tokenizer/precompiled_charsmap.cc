// Precompiled charsmap lookups. Tested by tests/tokenizer/precompiled_charsmap_test.cc.
#include "tokenizer/precompiled_charsmap.h"

namespace met {
namespace {

constexpr uint32_t kValueFlag = 1u << 31;

uint32_t read_le32(std::span<const uint8_t> bytes, size_t at) {
  return static_cast<uint32_t>(bytes[at]) | static_cast<uint32_t>(bytes[at + 1]) << 8 |
         static_cast<uint32_t>(bytes[at + 2]) << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
}

uint32_t xcda_base(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }
uint32_t xcda_label(uint32_t unit) { return unit & (kValueFlag | 0xFF); }
bool xcda_has_leaf(uint32_t unit) { return ((unit >> 8) & 1) != 0; }
uint32_t xcda_value(uint32_t unit) { return unit & (kValueFlag - 1); }

}  // namespace

Result<PrecompiledCharsmap> PrecompiledCharsmap::parse(std::span<const uint8_t> blob) {
  PrecompiledCharsmap charsmap;
  if (blob.empty()) return charsmap;
  if (blob.size() < 4) return data_loss("precompiled charsmap of {} bytes has no trie size", blob.size());
  const uint32_t trie_bytes = read_le32(blob, 0);
  if (trie_bytes % 4 != 0 || static_cast<uint64_t>(trie_bytes) + 4 >= blob.size()) {
    return data_loss("precompiled charsmap: a trie of {} bytes does not fit a blob of {} bytes", trie_bytes,
                     blob.size());
  }
  charsmap.units_.resize(trie_bytes / 4);
  for (size_t i = 0; i < charsmap.units_.size(); ++i) charsmap.units_[i] = read_le32(blob, 4 + 4 * i);
  const std::span<const uint8_t> strings = blob.subspan(4 + trie_bytes);
  charsmap.replacements_.assign(reinterpret_cast<const char*>(strings.data()), strings.size());
  return charsmap;
}

std::optional<std::string_view> PrecompiledCharsmap::replacement_at(uint32_t offset) const {
  if (offset >= replacements_.size()) return std::nullopt;
  const size_t end = replacements_.find('\0', offset);
  if (end == std::string::npos) return std::nullopt;  // unterminated
  return std::string_view(replacements_).substr(offset, end - offset);
}

// Walks the trie from the root one byte at a time (darts-clone's layout): the
// child with label c of the node at index n sits at n ^ base(n) ^ c, and a
// node with a leaf has its value unit at n ^ base(n) (its NUL child).
std::optional<CharsmapMatch> PrecompiledCharsmap::longest_match(std::string_view text) const {
  const std::optional<uint32_t> root = unit(0);
  if (!root) return std::nullopt;
  std::optional<CharsmapMatch> best;
  uint32_t node = xcda_base(*root);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c == 0) break;
    node ^= c;
    const std::optional<uint32_t> child = unit(node);
    if (!child || xcda_label(*child) != c) break;
    node ^= xcda_base(*child);
    if (!xcda_has_leaf(*child)) continue;
    const std::optional<uint32_t> leaf = unit(node);
    if (!leaf) break;
    const std::optional<std::string_view> replacement = replacement_at(xcda_value(*leaf));
    if (replacement) best = CharsmapMatch{i + 1, *replacement};
  }
  return best;
}

}  // namespace met
