// SpmTokenizer: SentencePiece-style BPE for `tokenizer.ggml.model = llama`.
// Spaces become "▁" (plus one leading "▁" when the vocab adds a space prefix),
// the text is split into characters, and adjacent symbols are merged while
// their concatenation is a token, best score first (leftmost on ties). A final
// symbol that is not a token falls back to its bytes' <0xNN> tokens, or to the
// unknown token when the vocab has no byte tokens.
// As in SentencePiece, only NORMAL, USER_DEFINED and UNUSED tokens can be formed
// by merges, and an UNUSED result is split back into the pieces it came from.
// A vocab with merges (a Hugging Face tokenizer.json BPE over "▁" text, as
// hf/hf_tokenizer.h converts it) merges as that BPE does: only pairs listed
// in the merges, lowest rank first (leftmost on ties), scores unused; runs of
// symbols that fall back to the unknown token become one (its fuse_unk).
// Invariants: every byte of the input is covered by exactly one output token
// (or by the unknown token that replaced its symbol).
// Threading: immutable; encode() may run on many threads at once.
// Tested by tests/tokenizer/spm_tokenizer_test.cc and the llama-spm and phi-3
// vectors in tests/tokenizer/vectors_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace met {

inline constexpr std::string_view kSpmSpace = "\xe2\x96\x81";  // U+2581 "▁"

class SpmTokenizer {
 public:
  // REQUIRES: vocab outlives the tokenizer.
  explicit SpmTokenizer(const Vocab& vocab);

  // Appends the tokens of one raw fragment. REQUIRES: valid UTF-8.
  void encode(std::string_view raw, bool add_space_prefix, std::vector<TokenId>& out) const;

  // (left id, right id) -> merge rank; empty when the vocab merges by score.
  using MergeRanks = std::unordered_map<uint64_t, int32_t>;

 private:
  // `fragment_begin`: where this fragment's tokens start in `out`.
  void emit_symbol(std::string_view text, size_t fragment_begin, std::vector<TokenId>& out) const;

  const Vocab* vocab_;
  std::array<std::optional<TokenId>, 256> byte_tokens_;  // <0xNN>, when present
  MergeRanks merge_ranks_;
};

}  // namespace met
