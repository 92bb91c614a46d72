// WpmTokenizer: WordPiece for `tokenizer.ggml.model = bert`, as Hugging Face's
// BertNormalizer + BertPreTokenizer + WordPiece do it: control characters are
// dropped and whitespace unified; CJK ideographs, punctuation (Unicode P* and
// ASCII symbols) become one-character words; accents are stripped (each
// character to the first code point of its NFD, as llama.cpp does, so a
// Hangul syllable keeps its leading consonant; then nonspacing marks removed)
// and text lowercased when the vocab says so; then
// each word is cut greedily into the longest known pieces, or becomes the
// unknown token when it cannot be (or is longer than 100 characters).
// GGUF stores word-initial pieces with a leading "▁" and continuation pieces
// ("##ing" in BERT) bare, so a word is matched as "▁" + word (where the
// vocab has "▁" alone and no piece "▁" + the word's start, "▁" is a piece
// of its own, as llama.cpp's byte-wise match over "▁" + word finds).
// Threading: immutable; encode() may run on many threads at once.
// Tested by tests/tokenizer/wpm_tokenizer_test.cc and the bert-bge vectors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace met {

class WpmTokenizer {
 public:
  // REQUIRES: vocab outlives the tokenizer.
  explicit WpmTokenizer(const Vocab& vocab) : vocab_(&vocab) {}

  // Appends the tokens of one raw fragment. REQUIRES: valid UTF-8.
  void encode(std::string_view raw, std::vector<TokenId>& out) const;

  // The normalized words of `raw`, before WordPiece (exposed for tests).
  std::vector<std::string> words(std::string_view raw) const;

 private:
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;

  const Vocab* vocab_;
};

}  // namespace met
