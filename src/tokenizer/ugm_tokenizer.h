// UgmTokenizer: SentencePiece Unigram for `tokenizer.ggml.model = t5`, as
// llama.cpp's UGM tokenizer does it. Normalization, per raw fragment: a
// USER_DEFINED token's text is kept as it is; otherwise the precompiled
// charsmap's longest rule replaces the input (precompiled_charsmap.h); other
// characters pass unchanged. Spaces then become "▁": with
// remove_extra_whitespaces, leading and trailing spaces are dropped and every
// run of them becomes one "▁" before the next word, the first word included
// (llama.cpp adds that one even without add_space_prefix); otherwise each
// space becomes "▁", and add_space_prefix puts one "▁" before the first word.
// Segmentation: the Viterbi best path over NORMAL, USER_DEFINED and UNUSED
// tokens, scored by the sum of their scores (USER_DEFINED ones score 0); a
// character no single token covers may become the unknown token, scored 10
// below the lowest NORMAL score. Adjacent unknowns fuse into one. Where the
// vocab has <0xNN> BYTE tokens (SentencePiece's and Hugging Face's
// byte_fallback; llama.cpp has none), a fused unknown run becomes the bytes
// of its text instead; with neither byte tokens nor an unknown token the run
// is dropped.
// Invariants: every id appended is < vocab.size().
// Threading: immutable; encode() may run on many threads at once.
// Tested by tests/tokenizer/ugm_tokenizer_test.cc and the ALBERT Unigram
// vectors in tests/hf/hf_tokenizer_vectors_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/vocab.h"

namespace met {

class UgmTokenizer {
 public:
  // Fails when the vocab's precompiled charsmap is malformed.
  // REQUIRES: vocab outlives the tokenizer.
  static Result<UgmTokenizer> create(const Vocab& vocab);

  // Appends the tokens of one raw fragment. REQUIRES: valid UTF-8.
  void encode(std::string_view raw, std::vector<TokenId>& out) const;

  // The fragment after normalization, spaces as "▁" (exposed for tests).
  std::string normalize(std::string_view raw) const;

 private:
  // A byte trie over token texts in compressed rows: node 0 is the root; the
  // edges of node n are entries first_edge_[n] .. first_edge_[n + 1] - 1 of
  // edge_bytes_ / edge_children_, in byte order.
  class PieceTrie {
   public:
    explicit PieceTrie(const std::vector<std::pair<std::string_view, TokenId>>& entries = {});
    std::optional<uint32_t> child(uint32_t node, uint8_t byte) const;
    std::optional<TokenId> value(uint32_t node) const { return values_[node]; }

   private:
    std::vector<std::optional<TokenId>> values_;
    std::vector<uint32_t> first_edge_;
    std::vector<uint8_t> edge_bytes_;
    std::vector<uint32_t> edge_children_;
  };

  struct PathStep;  // one position of the Viterbi lattice

  UgmTokenizer(const Vocab& vocab, PrecompiledCharsmap charsmap);
  size_t user_defined_prefix(std::string_view text) const;
  std::vector<PathStep> best_path(std::string_view text) const;
  void emit_unknown(std::string_view text, std::vector<TokenId>& out) const;

  const Vocab* vocab_;
  PrecompiledCharsmap charsmap_;
  PieceTrie pieces_;        // NORMAL, USER_DEFINED and UNUSED tokens
  PieceTrie user_defined_;  // USER_DEFINED tokens only
  double unknown_score_ = -10.0;
  std::array<std::optional<TokenId>, 256> byte_tokens_;
};

}  // namespace met
