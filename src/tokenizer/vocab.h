// Vocab: a model's tokenizer vocabulary as read from GGUF metadata
// (`tokenizer.ggml.*`): token texts, scores and types, BPE merges, the special
// token ids and the add_bos/add_eos/add_space_prefix flags, with llama.cpp's
// defaults where a key is absent. Plain data plus lookups; the algorithms live
// in spm_tokenizer, bpe_tokenizer, wpm_tokenizer and ugm_tokenizer.
// Invariants: every token has a non-empty, unique text; every special id is
// < size(); an add_* flag is set only when its token exists; eog_ids() holds
// eos, eot and eom when present, and control tokens named as chat ends
// (harmony's <|end|> only where <|return|> and <|call|> are absent).
// Threading: immutable after from_gguf(); any thread.
// Tested by tests/tokenizer/vocab_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_value.h"
#include "gguf/token_kind.h"
#include "tokenizer/pre_tokenizer.h"

namespace met {

// A token id: an index into the vocabulary, int32 to match the model's
// embedding rows and llama.cpp's llama_token. "No token" is std::nullopt,
// never a negative id.
using TokenId = int32_t;

// tokenizer.ggml.model: "llama" (SentencePiece), "gpt2" (byte-level BPE),
// "bert" (WordPiece), "t5" (SentencePiece Unigram).
enum class VocabModel { kSpm, kBpe, kWpm, kUgm };

struct TokenData {
  std::string text;
  float score = 0.0f;
  TokenKind kind = TokenKind::kNormal;
  bool lstrip = false;  // when matched in text, eat the whitespace before it
  bool rstrip = false;  // ... and after it
};

struct SpecialTokenIds {
  std::optional<TokenId> bos, eos, eot, eom, unk, sep, pad, mask;
};

// Keys are compared as string_views so lookups need no allocation.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIndex = std::unordered_map<std::string, TokenId, StringViewHash, std::equal_to<>>;

class Vocab {
 public:
  static Result<Vocab> from_gguf(const GgufMetadata& md);

  VocabModel model() const { return model_; }
  // tokenizer.ggml.pre as stored ("" when absent) and what it means.
  const std::string& pre_name() const { return pre_name_; }
  const PreTokenizerConfig& pre() const { return pre_; }

  size_t size() const { return tokens_.size(); }
  bool contains(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < tokens_.size(); }
  // REQUIRES: contains(id).
  const TokenData& token(TokenId id) const;
  // The token's text; "" for nullopt or an id outside the vocab (a special
  // token the file does not have).
  std::string text_or_empty(std::optional<TokenId> id) const {
    return id && contains(*id) ? token(*id).text : std::string();
  }
  std::optional<TokenId> find(std::string_view text) const;
  size_t max_token_bytes() const { return max_token_bytes_; }

  const SpecialTokenIds& special() const { return special_; }
  bool is_eog(TokenId id) const;
  const std::vector<TokenId>& eog_ids() const { return eog_ids_; }

  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_sep() const { return add_sep_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  // Unigram normalization: tokenizer.ggml.remove_extra_whitespaces and the
  // raw tokenizer.ggml.precompiled_charsmap (empty when absent; parsed by
  // PrecompiledCharsmap). Both stay false/empty for other models.
  bool remove_extra_whitespaces() const { return remove_extra_whitespaces_; }
  const std::vector<uint8_t>& precompiled_charsmap() const { return precompiled_charsmap_; }
  // WordPiece normalization (tokenizer.ggml.normalizer.*; absent: from the vocab).
  bool lowercase() const { return lowercase_; }
  bool strip_accents() const { return strip_accents_; }

  // BPE merges in rank order ("left right" split at the first space after
  // the first byte, as llama.cpp does). A SentencePiece-style vocab has them
  // when converted from a Hugging Face BPE tokenizer.json, and then merges by
  // their rank (spm_tokenizer.h). Empty for other models.
  const std::vector<std::pair<std::string, std::string>>& merges() const { return merges_; }

 private:
  friend class VocabLoader;
  Vocab() = default;

  VocabModel model_ = VocabModel::kSpm;
  std::string pre_name_;
  PreTokenizerConfig pre_;
  std::vector<TokenData> tokens_;
  TokenIndex index_;
  size_t max_token_bytes_ = 0;
  SpecialTokenIds special_;
  std::vector<TokenId> eog_ids_;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_sep_ = false;
  bool add_space_prefix_ = false;
  bool remove_extra_whitespaces_ = false;
  std::vector<uint8_t> precompiled_charsmap_;
  bool lowercase_ = false;
  bool strip_accents_ = false;
  std::vector<std::pair<std::string, std::string>> merges_;
};

std::string_view vocab_model_name(VocabModel model);  // "llama", "gpt2", "bert", "t5"

}  // namespace met
