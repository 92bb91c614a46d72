// Test fixtures for the tokenizer: the shared vocab-only GGUFs and llama.cpp's
// .inp/.out vector files (inputs separated by "\n__ggml_vocab_test__\n",
// expected ids one line per input), small hand-built vocabularies, and the
// synthetic vocabularies `met make-model` writes (these need no ../shared).
// Threading: any. Used by the tests in tests/tokenizer/.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_value.h"
#include "model/synthetic_vocab.h"
#include "tokenizer/tokenizer.h"

namespace met::testing {

struct VectorCase {
  std::string text;
  std::vector<TokenId> expected;
};

std::string read_file(const std::string& path);
// Tokenizer of a GGUF file (its metadata only).
Result<Tokenizer> load_tokenizer(const std::string& gguf_path);
// The cases of `gguf_path`.inp / .out.
std::vector<VectorCase> load_vector_cases(const std::string& gguf_path);
// The inputs alone (for files whose .out is not token ids of a vocab at hand).
std::vector<std::string> load_vector_inputs(const std::string& inp_path);

// A small vocabulary written as GGUF metadata. Types default to NORMAL.
struct TinyVocab {
  std::string model = "llama";
  std::string pre;  // written when not empty
  std::vector<std::string> tokens;
  std::vector<float> scores;  // written when not empty
  std::vector<int32_t> types;  // written when not empty
  std::vector<std::string> merges;  // written when not empty or the model is gpt2
  std::vector<std::pair<std::string, GgufValue>> extra;  // other keys
};
GgufMetadata tiny_metadata(const TinyVocab& vocab);
Vocab tiny_vocab(const TinyVocab& vocab);          // fails the test on error
Tokenizer tiny_tokenizer(const TinyVocab& vocab);  // fails the test on error

// A SentencePiece vocab: <unk> <s> </s>, the 256 <0xNN> byte tokens, then
// `pieces` with descending scores (the first piece merges first).
TinyVocab tiny_spm(const std::vector<std::string>& pieces);
// A byte-level BPE vocab: the 256 byte symbols in GPT-2 order, then each
// merge's result as a token (in merge order), then `extra_tokens`.
TinyVocab tiny_bpe(const std::vector<std::string>& merges, const std::vector<std::string>& extra_tokens = {},
                   const std::string& pre = "gpt-2");

// A Unigram ("t5") vocab: <pad> </s> <unk> (llama.cpp's default ids), then
// `pieces` as NORMAL tokens with their scores; no space prefix, no EOS added.
TinyVocab tiny_ugm(const std::vector<std::pair<std::string, float>>& pieces);

// A precompiled charsmap blob (precompiled_charsmap.h) holding `rules`
// (input bytes -> replacement), laid out as SentencePiece's builder does.
// REQUIRES: at least one rule; no rule's input is empty or contains NUL.
std::vector<uint8_t> tiny_charsmap(const std::vector<std::pair<std::string, std::string>>& rules);
GgufValue charsmap_value(std::vector<uint8_t> blob);  // the GGUF uint8 array

// The tokenizer of `met make-model`'s synthetic vocab of that kind.
Tokenizer synthetic_tokenizer(VocabKind kind, uint32_t size = 2000, uint64_t seed = 7);

}  // namespace met::testing
