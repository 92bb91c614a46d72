// TokenTrie: the byte strings of a vocabulary's tokens in a trie laid out in
// depth-first order, built once per Tokenizer and shared by every matcher, so
// a mask is one forward scan that skips a whole subtree when its prefix dies.
// Which tokens are in it: NORMAL, BYTE (SentencePiece <0x0A> tokens as their
// byte) and USER_DEFINED tokens, by their bytes (Tokenizer::token_to_piece).
// CONTROL, UNKNOWN and UNUSED tokens are never allowed by a grammar, except
// the vocab's end-of-generation ids (eog_ids), allowed when the grammar is
// complete. Tokens with empty bytes are never allowed. At most 255 tokens may
// share one byte string; more would be left out (never allowed).
// Invariants: nodes are in preorder; node i's subtree is [i, subtree_end);
// node 0 is the root (the empty string).
// Cost: building sorts the vocab (~100 ms at 152k tokens); ~12 bytes a node.
// Threading: immutable after build; any number of threads.
// Tested by tests/grammar/token_trie_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace met {

class TokenTrie {
 public:
  struct Node {
    uint32_t subtree_end = 0;
    uint32_t first_token = 0;  // index into tokens()
    uint16_t depth = 0;        // bytes from the root
    uint8_t num_tokens = 0;    // tokens whose bytes end here
    uint8_t byte = 0;
  };

  static TokenTrie build(const Tokenizer& tokenizer);
  // For tests: a vocab given as byte strings; tokens in eog_ids are
  // end-of-generation, empty strings are never allowed.
  static TokenTrie from_pieces(std::vector<std::string> pieces, std::vector<TokenId> eog_ids);

  size_t vocab_size() const { return offsets_.size() - 1; }
  std::span<const Node> nodes() const { return nodes_; }
  std::span<const TokenId> tokens() const { return tokens_; }
  std::span<const TokenId> eog_ids() const { return eog_ids_; }
  bool is_eog(TokenId id) const;
  // The bytes a grammar sees for `id` (empty: never allowed). REQUIRES: id < vocab_size().
  std::string_view bytes(TokenId id) const;
  // Words of the bit mask fill_mask() writes: ceil(vocab_size / 64).
  size_t mask_words() const { return (vocab_size() + 63) / 64; }

 private:
  std::vector<Node> nodes_;
  std::vector<TokenId> tokens_;
  std::vector<TokenId> eog_ids_;
  std::string bytes_;             // every token's bytes, concatenated
  std::vector<uint32_t> offsets_;  // token i: bytes_[offsets_[i], offsets_[i+1])
};

}  // namespace met
