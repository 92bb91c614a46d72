// Vocab loading from GGUF metadata, with llama.cpp's defaults.
// Tested by tests/tokenizer/vocab_test.cc.
#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <variant>
#include <vector>

namespace met {
namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";

// Texts of control tokens that end generation in the models that use them
// (llama.cpp keeps the same list; a CONTROL token with one of these texts is EOG).
// <|return|> and <|call|> are harmony's (gpt-oss), see drop_harmony_message_end.
constexpr std::array<std::string_view, 13> kEogTexts = {
    "<|eot_id|>",      "<|im_end|>",         "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>",      "<EOT>",              "_<EOT>",  "<|end_of_text|>",
    "<end_of_utterance>", "<|return|>",      "<|call|>",
    "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>"};  // DeepSeek's

const std::vector<std::string>* string_items(const GgufArray& array) {
  return std::get_if<std::vector<std::string>>(&array.items);
}

}  // namespace

// Builds a Vocab step by step; each step reads one group of keys.
class VocabLoader {
 public:
  explicit VocabLoader(const GgufMetadata& md) : md_(md) {}

  Result<Vocab> load() {
    MET_RETURN_IF_ERROR(read_model());
    MET_RETURN_IF_ERROR(read_tokens());
    MET_RETURN_IF_ERROR(read_token_details());
    // A SentencePiece-style vocab may carry merges (a converted tokenizer.json BPE).
    if (v_.model_ == VocabModel::kBpe || (v_.model_ == VocabModel::kSpm && md_.contains("tokenizer.ggml.merges"))) {
      MET_RETURN_IF_ERROR(read_merges());
    }
    MET_RETURN_IF_ERROR(read_special_ids());
    MET_RETURN_IF_ERROR(read_flags());
    collect_eog_ids();
    apply_name_attributes();
    MET_RETURN_IF_ERROR(read_normalizer());
    MET_RETURN_IF_ERROR(read_charsmap());
    return std::move(v_);
  }

 private:
  Status read_model();
  Status read_tokens();
  Status read_token_details();
  Status read_merges();
  Status read_special_ids();
  Status read_flags();
  void collect_eog_ids();
  void drop_harmony_message_end();
  void apply_name_attributes();
  Status read_normalizer();
  Status read_charsmap();
  std::optional<TokenId> checked_id(int64_t id) const {
    if (id < 0 || static_cast<uint64_t>(id) >= v_.tokens_.size()) return std::nullopt;
    return static_cast<TokenId>(id);
  }

  const GgufMetadata& md_;
  Vocab v_;
  // Defaults by model, before the keys override them.
  std::array<int64_t, 8> default_ids_{-1, -1, -1, -1, -1, -1, -1, -1};
};

Status VocabLoader::read_model() {
  if (!md_.contains(kModelKey)) return not_found("no tokenizer: metadata key '{}' is missing", kModelKey);
  MET_ASSIGN_OR_RETURN(std::string model, md_.get_string(kModelKey));
  MET_ASSIGN_OR_RETURN(v_.pre_name_, md_.get_string_or("tokenizer.ggml.pre", ""));
  // Order: bos, eos, eot, eom, unk, sep, pad, mask.
  if (model == "llama") {
    v_.model_ = VocabModel::kSpm;
    default_ids_ = {1, 2, -1, -1, 0, -1, -1, -1};
    v_.add_space_prefix_ = true;
    v_.add_bos_ = true;
  } else if (model == "gpt2") {
    v_.model_ = VocabModel::kBpe;
    default_ids_ = {11, 11, -1, -1, -1, -1, -1, -1};
    MET_ASSIGN_OR_RETURN(v_.pre_, pre_tokenizer_config(v_.pre_name_));
    v_.add_bos_ = v_.pre_.add_bos.value_or(false);
    v_.add_sep_ = v_.pre_.add_sep;
  } else if (model == "bert") {
    v_.model_ = VocabModel::kWpm;
    default_ids_ = {101, -1, -1, -1, 100, 102, 0, 103};
    v_.add_bos_ = true;
    v_.add_sep_ = true;
  } else if (model == "t5") {
    v_.model_ = VocabModel::kUgm;
    default_ids_ = {-1, 1, -1, -1, 2, -1, 0, -1};
    v_.add_eos_ = true;
  } else {
    return unimplemented("tokenizer model '{}' is not supported (llama, gpt2, bert and t5 are)", model);
  }
  return ok_status();
}

Status VocabLoader::read_tokens() {
  if (!md_.contains(kTokensKey)) return not_found("metadata key '{}' is missing", kTokensKey);
  MET_ASSIGN_OR_RETURN(const GgufArray* array, md_.get_array(kTokensKey));
  const std::vector<std::string>* texts = string_items(*array);
  if (texts == nullptr) return invalid_argument("metadata key '{}' is not an array of string", kTokensKey);
  if (texts->empty()) return data_loss("metadata key '{}' is empty", kTokensKey);
  if (texts->size() > static_cast<size_t>(INT32_MAX)) return out_of_range("{} tokens is too many", texts->size());
  v_.tokens_.resize(texts->size());
  v_.index_.reserve(texts->size());
  for (size_t i = 0; i < texts->size(); ++i) {
    std::string text = (*texts)[i].empty() ? "[EMPTY_" + std::to_string(i) + "]" : (*texts)[i];
    const auto [it, inserted] = v_.index_.emplace(text, static_cast<TokenId>(i));
    if (!inserted) {
      return data_loss("duplicate token '{}' in the vocabulary (ids {} and {})", text, it->second, i);
    }
    v_.max_token_bytes_ = std::max(v_.max_token_bytes_, text.size());
    v_.tokens_[i].text = std::move(text);
  }
  return ok_status();
}

Status VocabLoader::read_token_details() {
  const size_t n = v_.tokens_.size();
  if (md_.contains("tokenizer.ggml.scores")) {
    auto scores = md_.get_f32_array("tokenizer.ggml.scores");
    std::vector<float> values;
    if (scores.ok()) {
      values = std::move(scores).value();
    } else {
      MET_ASSIGN_OR_RETURN(std::vector<int64_t> ints, md_.get_int_array("tokenizer.ggml.scores"));
      values.assign(ints.begin(), ints.end());
    }
    if (values.size() < n) return data_loss("{} scores for {} tokens", values.size(), n);
    for (size_t i = 0; i < n; ++i) v_.tokens_[i].score = values[i];
  }
  if (md_.contains("tokenizer.ggml.token_type")) {
    MET_ASSIGN_OR_RETURN(std::vector<int64_t> types, md_.get_int_array("tokenizer.ggml.token_type"));
    if (types.size() < n) return data_loss("{} token types for {} tokens", types.size(), n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = types[i];
      v_.tokens_[i].kind = t >= 1 && t <= 6 ? static_cast<TokenKind>(t) : TokenKind::kUndefined;
    }
  }
  return ok_status();
}

Status VocabLoader::read_merges() {
  constexpr std::string_view kKey = "tokenizer.ggml.merges";
  if (!md_.contains(kKey)) return not_found("BPE vocabulary without '{}'", kKey);
  MET_ASSIGN_OR_RETURN(const GgufArray* array, md_.get_array(kKey));
  const std::vector<std::string>* merges = string_items(*array);
  if (merges == nullptr) return invalid_argument("metadata key '{}' is not an array of string", kKey);
  v_.merges_.reserve(merges->size());
  for (const std::string& merge : *merges) {
    const size_t space = merge.find(' ', 1);  // a merge's left part may start with a space
    if (space == std::string::npos) {
      v_.merges_.emplace_back();  // keeps the ranks of the later merges; matches nothing
      continue;
    }
    v_.merges_.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }
  return ok_status();
}

Status VocabLoader::read_special_ids() {
  static constexpr std::array<std::string_view, 8> kKeys = {
      "tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",
      "tokenizer.ggml.eot_token_id",     "tokenizer.ggml.eom_token_id",
      "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.seperator_token_id",
      "tokenizer.ggml.padding_token_id", "tokenizer.ggml.mask_token_id"};
  SpecialTokenIds& s = v_.special_;
  std::array<std::optional<TokenId>*, 8> slots = {&s.bos, &s.eos, &s.eot, &s.eom,
                                                  &s.unk, &s.sep, &s.pad, &s.mask};
  for (size_t i = 0; i < kKeys.size(); ++i) {
    std::string_view key = kKeys[i];
    // BERT files name their [CLS] token, which met treats as BOS like llama.cpp.
    if (i == 0 && !md_.contains(key) && md_.contains("tokenizer.ggml.cls_token_id")) {
      key = "tokenizer.ggml.cls_token_id";
    }
    if (!md_.contains(key)) {
      *slots[i] = checked_id(default_ids_[i]);
      continue;
    }
    MET_ASSIGN_OR_RETURN(int64_t id, md_.get_i64(key));
    *slots[i] = checked_id(id);  // -1, 2^32-1 or past the vocab: no such token
  }
  return ok_status();
}

// A model's default add_eos holds only when the vocab has the token (a small
// "t5" vocab without id 1); a key that asks for a missing token is an error.
Status VocabLoader::read_flags() {
  const SpecialTokenIds& s = v_.special_;
  MET_ASSIGN_OR_RETURN(v_.add_bos_, md_.get_bool_or("tokenizer.ggml.add_bos_token", v_.add_bos_));
  MET_ASSIGN_OR_RETURN(v_.add_eos_, md_.get_bool_or("tokenizer.ggml.add_eos_token", v_.add_eos_ && s.eos.has_value()));
  MET_ASSIGN_OR_RETURN(v_.add_sep_, md_.get_bool_or("tokenizer.ggml.add_sep_token", v_.add_sep_));
  MET_ASSIGN_OR_RETURN(v_.add_space_prefix_,
                       md_.get_bool_or("tokenizer.ggml.add_space_prefix", v_.add_space_prefix_));
  MET_ASSIGN_OR_RETURN(v_.remove_extra_whitespaces_,
                       md_.get_bool_or("tokenizer.ggml.remove_extra_whitespaces", false));
  if (v_.add_bos_ && !s.bos) return data_loss("add_bos_token is true but the vocabulary has no BOS token");
  if (v_.add_eos_ && !s.eos) return data_loss("add_eos_token is true but the vocabulary has no EOS token");
  if (v_.add_sep_ && !s.sep) return data_loss("add_sep_token is true but the vocabulary has no SEP token");
  return ok_status();
}

void VocabLoader::collect_eog_ids() {
  std::vector<TokenId>& eog = v_.eog_ids_;
  for (const auto& id : {v_.special_.eos, v_.special_.eot, v_.special_.eom}) {
    if (id) eog.push_back(*id);
  }
  for (std::string_view text : kEogTexts) {
    const auto it = v_.index_.find(text);
    if (it != v_.index_.end() && v_.tokens_[it->second].kind == TokenKind::kControl) {
      eog.push_back(it->second);
    }
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  drop_harmony_message_end();
}

// Harmony's <|end|> closes one message (the analysis before the answer), not
// the turn: with both <|return|> and <|call|> among the EOG tokens it is not
// EOG (llama.cpp's rule for o200k_harmony). Phi-3's <|end|> stays EOG.
void VocabLoader::drop_harmony_message_end() {
  std::vector<TokenId>& eog = v_.eog_ids_;
  const auto named = [this](std::string_view text) {
    return [this, text](TokenId id) { return v_.tokens_[static_cast<size_t>(id)].text == text; };
  };
  if (std::none_of(eog.begin(), eog.end(), named("<|return|>")) ||
      std::none_of(eog.begin(), eog.end(), named("<|call|>"))) {
    return;
  }
  eog.erase(std::remove_if(eog.begin(), eog.end(), named("<|end|>")), eog.end());
}

// llama.cpp strips the whitespace after Phi-3's special tokens (a per-model
// attribute GGUF does not store); met does the same, keyed on the model name.
void VocabLoader::apply_name_attributes() {
  Result<std::string> general_name = md_.get_string_or("general.name", "");
  std::string name = general_name.ok() ? std::move(general_name).value() : std::string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.find("phi-3") == std::string::npos && name.find("phi3") == std::string::npos) return;
  for (TokenData& t : v_.tokens_) {
    const bool special = t.kind == TokenKind::kControl || t.kind == TokenKind::kUserDefined ||
                         t.kind == TokenKind::kUnknown;
    t.rstrip = special || t.text == "</s>";
    if (t.text == "<unk>" || t.text == "<s>" || t.text == "<|endoftext|>") t.rstrip = false;
  }
}

// WordPiece: lowercase when the key says so; without the key, when no normal
// token has an ASCII capital (an uncased vocabulary: a few letterlike symbols
// such as U+211D are uppercase in Unicode even there). Accents are stripped
// when lowercasing unless the key says otherwise, as in Hugging Face's BERT.
Status VocabLoader::read_normalizer() {
  if (v_.model_ != VocabModel::kWpm) return ok_status();
  const bool cased = std::any_of(v_.tokens_.begin(), v_.tokens_.end(), [](const TokenData& t) {
    return t.kind == TokenKind::kNormal &&
           std::any_of(t.text.begin(), t.text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  });
  MET_ASSIGN_OR_RETURN(v_.lowercase_, md_.get_bool_or("tokenizer.ggml.normalizer.lowercase", !cased));
  MET_ASSIGN_OR_RETURN(v_.strip_accents_,
                       md_.get_bool_or("tokenizer.ggml.normalizer.strip_accents", v_.lowercase_));
  return ok_status();
}

// Unigram: the charsmap's bytes, an array of uint8 or int8 as llama.cpp accepts.
Status VocabLoader::read_charsmap() {
  constexpr std::string_view kKey = "tokenizer.ggml.precompiled_charsmap";
  if (v_.model_ != VocabModel::kUgm) {
    v_.remove_extra_whitespaces_ = false;
    return ok_status();
  }
  if (!md_.contains(kKey)) return ok_status();
  MET_ASSIGN_OR_RETURN(const GgufArray* array, md_.get_array(kKey));
  if (const auto* bytes = std::get_if<std::vector<uint8_t>>(&array->items)) {
    v_.precompiled_charsmap_ = *bytes;
  } else if (const auto* signed_bytes = std::get_if<std::vector<int8_t>>(&array->items)) {
    v_.precompiled_charsmap_.assign(signed_bytes->begin(), signed_bytes->end());
  } else {
    return invalid_argument("metadata key '{}' is not an array of uint8 or int8", kKey);
  }
  return ok_status();
}

Result<Vocab> Vocab::from_gguf(const GgufMetadata& md) { return VocabLoader(md).load(); }

const TokenData& Vocab::token(TokenId id) const {
  MET_DCHECK(contains(id), "token id {} outside a vocabulary of {}", id, tokens_.size());
  return tokens_[static_cast<size_t>(id)];
}

std::optional<TokenId> Vocab::find(std::string_view text) const {
  const auto it = index_.find(text);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

bool Vocab::is_eog(TokenId id) const {
  return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

std::string_view vocab_model_name(VocabModel model) {
  switch (model) {
    case VocabModel::kSpm:
      return "llama";
    case VocabModel::kBpe:
      return "gpt2";
    case VocabModel::kWpm:
      return "bert";
    case VocabModel::kUgm:
      return "t5";
  }
  return "?";
}

}  // namespace met
