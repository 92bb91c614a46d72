// BpeTokenizer: byte-level BPE for `tokenizer.ggml.model = gpt2`. Text is
// split by the model's pre-tokenizer; each piece is mapped to GPT-2's
// byte-level alphabet and its symbols (one per byte) are merged by rank, lowest
// first, leftmost on ties, as llama.cpp and Hugging Face do. With
// ignore_merges (Llama 3) a piece that is itself a token is emitted whole.
// Merges work on symbol ids rather than strings: a merge whose result is not a
// token gets a private id past the vocabulary, and a final symbol with such an
// id falls back to its bytes' tokens.
// Invariants: output ids are < vocab size; the cache never changes a result
// (a miss and a hit give the same ids).
// Threading: encode() may run on many threads at once; the cache is the only
// mutable state (see BpeCache).
// Tested by tests/tokenizer/bpe_tokenizer_test.cc and the byte-level vocabs in
// tests/tokenizer/vectors_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizer/bpe_cache.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocab.h"

namespace met {

inline constexpr size_t kDefaultBpeCacheEntries = 1 << 16;

class BpeTokenizer {
 public:
  // REQUIRES: vocab.model() == kBpe and vocab outlives the tokenizer.
  static Result<BpeTokenizer> create(const Vocab& vocab, size_t cache_entries = kDefaultBpeCacheEntries);

  // Appends the tokens of one raw fragment. REQUIRES: valid UTF-8.
  void encode(std::string_view raw, std::vector<TokenId>& out) const;

  // The same for one pre-token, bypassing the cache (the reference the cache
  // is checked against).
  void encode_piece_uncached(std::string_view piece, std::vector<TokenId>& out) const;

 private:
  struct MergeRule {
    int32_t rank;
    int32_t result;  // symbol id of the merged text
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  struct PairHash {
    size_t operator()(uint64_t k) const {
      k ^= k >> 33;
      k *= 0xff51afd7ed558ccdull;
      k ^= k >> 33;
      return static_cast<size_t>(k);
    }
  };

  // One symbol of a piece being merged.
  struct Symbol {
    int32_t id;  // vocab id, or >= vocab size for a non-token merge result
    int32_t prev;
    int32_t next;
    uint32_t begin;  // byte range in the raw piece
    uint32_t len;    // 0 once merged into its left neighbour
  };

  BpeTokenizer(const Vocab& vocab, PreTokenizer pre, size_t cache_entries);
  void build_merge_table();
  void merge_symbols(std::string_view piece, std::vector<TokenId>& out) const;
  void emit_symbols(std::string_view piece, std::span<const Symbol> symbols, std::vector<TokenId>& out) const;

  const Vocab* vocab_;
  PreTokenizer pre_;
  std::array<int32_t, 256> byte_symbol_{};  // symbol id of each byte's alphabet character
  std::unordered_map<uint64_t, MergeRule, PairHash> merges_;
  std::unique_ptr<BpeCache> cache_;
};

}  // namespace met
