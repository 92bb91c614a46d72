// PreTokenizer: splits text into the pieces a byte-level BPE vocabulary
// merges within, using the split regexes of the model's `tokenizer.ggml.pre`
// (the published Hugging Face patterns, run by PCRE2 with Unicode properties).
// Several kinds apply regexes in sequence, as llama.cpp does: each regex splits
// every piece left by the previous one, and the text between two matches stays
// a piece of its own.
// Also owns the table from pre-tokenizer names to their kind and llama.cpp's
// per-name defaults (ignore_merges, add_bos, add_sep).
// Invariants: split() covers its input exactly, in order, with no empty piece.
// Threading: immutable after construction; split() may run on many threads.
// Tested by tests/tokenizer/pre_tokenizer_test.cc and, through the vocabs,
// tests/tokenizer/vectors_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tokenizer/pcre2_regex.h"

namespace met {

enum class PreTokenizerKind {
  kDefault,        // llama.cpp's fallback for a BPE vocab without `pre`
  kGpt2,           // gpt-2, mpt, olmo, ...
  kLlama3,         // llama-bpe (Llama 3), dbrx, smaug-bpe, ...
  kQwen2,          // qwen2, stablelm2, deepseek-r1-qwen, ...
  kQwen35,         // qwen35
  kDeepseekLlm,    // deepseek-llm
  kDeepseekCoder,  // deepseek-coder
  kDeepseekV3,     // deepseek-v3
  kFalcon,         // falcon
  kStarcoder,      // starcoder, refact, command-r, smollm, ...
  kGpt4o,          // gpt-4o, llama4, ...
  kTekken,         // tekken (Mistral NeMo)
};

// What a `tokenizer.ggml.pre` name means.
struct PreTokenizerConfig {
  PreTokenizerKind kind = PreTokenizerKind::kDefault;
  bool ignore_merges = false;        // a piece that is a whole token skips BPE
  std::optional<bool> add_bos;       // the name's default for add_bos_token
  bool add_sep = false;              // the name's default for add_sep_token
};

// kUnimplemented for a name met does not know (llama.cpp refuses those too).
Result<PreTokenizerConfig> pre_tokenizer_config(std::string_view name);

// The regexes of `kind`, in the order they apply.
std::vector<std::string> pre_tokenizer_patterns(PreTokenizerKind kind);

class PreTokenizer {
 public:
  static Result<PreTokenizer> create(PreTokenizerKind kind);
  static Result<PreTokenizer> from_patterns(const std::vector<std::string>& patterns);

  // Appends the pieces of `text` to `pieces` (views into `text`).
  // REQUIRES: `text` is valid UTF-8.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

 private:
  explicit PreTokenizer(std::vector<Pcre2Regex> regexes) : regexes_(std::move(regexes)) {}

  std::vector<Pcre2Regex> regexes_;
};

}  // namespace met
