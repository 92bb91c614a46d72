// Tokenizer: text to token ids and back, exactly as the model was trained.
// Owns the Vocab and one algorithm (SentencePiece-style BPE, byte-level BPE,
// WordPiece or Unigram) chosen by tokenizer.ggml.model; special tokens are cut
// out first by SpecialTokenSplitter.
// Invalid UTF-8 given to encode() is not an error: each maximal invalid
// subpart becomes U+FFFD first (see utf8.h), so any byte string tokenizes.
// decode() returns valid UTF-8 (invalid byte sequences from byte tokens become
// U+FFFD); token_to_piece() returns a token's raw bytes. llama.cpp's
// clean_up_tokenization_spaces (" ," -> ",") is not applied, so decode() of
// encode() gives the text back and streaming agrees with whole decoding.
// Invariants: every id encode() returns is < vocab().size().
// Threading: encode/decode may run on many threads at once; the only mutable
// state is the byte-level BPE cache, guarded by its own mutexes.
// Tested by tests/tokenizer/tokenizer_test.cc and tests/tokenizer/vectors_test.cc.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_value.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/special_token_splitter.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/ugm_tokenizer.h"
#include "tokenizer/vocab.h"
#include "tokenizer/wpm_tokenizer.h"

namespace met {

struct EncodeOptions {
  bool add_special = false;    // BOS / EOS / SEP as the vocab's add_* flags say
  bool parse_special = false;  // match CONTROL tokens written in the text (chat prompts)
};

struct TokenizerOptions {
  size_t bpe_cache_entries = kDefaultBpeCacheEntries;  // 0 disables the cache
};

class Tokenizer {
 public:
  static Result<Tokenizer> create(Vocab vocab, const TokenizerOptions& options = {});
  static Result<Tokenizer> from_gguf(const GgufMetadata& md, const TokenizerOptions& options = {});

  const Vocab& vocab() const { return *vocab_; }

  std::vector<TokenId> encode(std::string_view text, const EncodeOptions& options = {}) const;

  // The text of a whole sequence. With skip_special, CONTROL and UNKNOWN
  // tokens render as nothing; otherwise as their text. Ids outside the vocab
  // render as nothing. The space a SentencePiece vocab puts before the first
  // word is removed, as Hugging Face's decoders do.
  std::string decode(std::span<const TokenId> ids, bool skip_special = true) const;

  // One token's bytes, possibly part of a UTF-8 character; CONTROL and
  // UNKNOWN tokens give their text only when render_special. UNUSED tokens and
  // ids outside the vocab give "".
  std::string_view token_to_piece(TokenId id, bool render_special = true) const;

  // Whether decoding drops one leading space from the first piece of a
  // sequence (SentencePiece with add_space_prefix, Unigram when it adds "▁"
  // before the first word, and WordPiece).
  bool strips_leading_space() const;

 private:
  using Algorithm = std::variant<SpmTokenizer, BpeTokenizer, WpmTokenizer, UgmTokenizer>;
  Tokenizer(std::unique_ptr<const Vocab> vocab, Algorithm algorithm);
  void encode_fragment(std::string_view raw, bool after_special, std::vector<TokenId>& out) const;

  std::unique_ptr<const Vocab> vocab_;  // on the heap: the algorithms point at it
  Algorithm algorithm_;
  SpecialTokenSplitter splitter_;
  std::vector<std::string> pieces_;  // token_to_piece for every id, special ones rendered
};

}  // namespace met
