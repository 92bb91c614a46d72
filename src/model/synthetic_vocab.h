// SyntheticVocab: a working tokenizer vocabulary for random-weight models made
// by `met make-model`, deterministic for a seed. Either SentencePiece-style
// (`llama`: <unk> <s> </s>, 256 byte-fallback tokens, scored pieces with "▁"
// for spaces) or byte-level BPE (`gpt2`: the 256 byte symbols, ranked merges).
// Pieces come from BPE merges learned on a small built-in English text, then
// random merges of existing pieces until the requested size; every merged
// piece is the concatenation of two earlier pieces, so the merge list and the
// scores are consistent and any text tokenizes. Both kinds carry the chat
// control tokens <|im_start|> and <|im_end|>, then the options' further
// control tokens.
// Threading: pure. Tested by tests/model/synthetic_vocab_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_value.h"
#include "gguf/token_kind.h"

namespace met {

enum class VocabKind { kSpm, kBpe };

struct SyntheticVocabOptions {
  VocabKind kind = VocabKind::kSpm;
  uint32_t size = 32000;
  uint64_t seed = 0;
  std::string bpe_pre = "llama-bpe";  // tokenizer.ggml.pre for kBpe
  // Further control tokens, appended after <|im_end|> in this order (a chat
  // template's markers: <think>, <tool_call>, [TOOL_CALLS], …); tokens the
  // vocab already has are skipped. They count towards `size`.
  std::vector<std::string> control_tokens;
};

struct SyntheticVocab {
  VocabKind kind = VocabKind::kSpm;
  std::string pre;
  std::vector<std::string> tokens;
  std::vector<float> scores;          // kSpm only
  std::vector<int32_t> token_types;
  std::vector<std::string> merges;    // kBpe only: "left right", best rank first
  uint32_t bos_id = 0;
  uint32_t eos_id = 0;
  uint32_t eot_id = 0;
  uint32_t unk_id = 0;                // kSpm only
  bool add_bos = false;
  bool wordpiece = false;             // as_wordpiece: written as model "bert"
};

inline constexpr uint32_t kMinSyntheticVocab = 512;

// Fails when size < kMinSyntheticVocab or the random fill cannot reach size.
Result<SyntheticVocab> make_synthetic_vocab(const SyntheticVocabOptions& options);

// The kSpm vocab `spm` recast as WordPiece (BERT's model "bert", as
// llama.cpp's converter stores it: "▁"-initial pieces begin a word, the
// others continue one): <unk>, <s> and </s> become [UNK], [CLS] and [SEP],
// the byte pieces become unused ids (WordPiece has no byte fallback), and a
// text is encoded as [CLS] … [SEP].
SyntheticVocab as_wordpiece(SyntheticVocab spm);

// Writes tokenizer.ggml.* keys for `vocab` into `md`.
void write_vocab_metadata(const SyntheticVocab& vocab, GgufMetadata& md);

// GPT-2's byte → printable code point mapping, as UTF-8 strings, by byte.
const std::vector<std::string>& byte_level_symbols();

}  // namespace met
