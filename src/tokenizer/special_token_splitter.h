// SpecialTokenSplitter: cuts text into raw fragments and tokens matched whole,
// before any model-specific tokenization. USER_DEFINED tokens are always
// matched (Hugging Face's added tokens; Qwen's <think>); CONTROL and UNKNOWN
// tokens only when the caller parses special tokens (chat prompts do).
// Matching follows llama.cpp: tokens are tried longest first, each one split
// out of every raw fragment left by the longer ones, left to right; a token
// marked lstrip/rstrip eats the ASCII whitespace before/after it.
// Invariants: fragments are in text order; raw fragments are non-empty views
// into the input; concatenating raw texts and token texts (before stripping)
// gives the input back.
// Threading: immutable after construction; any thread.
// Tested by tests/tokenizer/special_token_splitter_test.cc.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace met {

struct TextFragment {
  std::string_view text;          // raw text (empty when this is a token)
  std::optional<TokenId> token;   // a token matched whole
};

class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const Vocab& vocab);

  std::vector<TextFragment> split(std::string_view text, bool parse_special) const;

 private:
  struct Candidate {
    TokenId id;
    std::string_view text;  // into the Vocab, which outlives the splitter
    bool control;           // CONTROL or UNKNOWN: only with parse_special
    bool lstrip;
    bool rstrip;
  };
  static void split_out(const Candidate& c, std::string_view raw, std::vector<TextFragment>& out);

  std::vector<Candidate> candidates_;  // longest first, then by id
};

}  // namespace met
