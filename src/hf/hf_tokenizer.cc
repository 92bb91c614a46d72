// add_hf_tokenizer_metadata: tokenizer.json's model (BPE, WordPiece or
// Unigram), added tokens and normalizer/pre-tokenizer, and
// tokenizer_config.json's special tokens.
// Tested by tests/hf/hf_tokenizer_test.cc.
#include "hf/hf_tokenizer.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gguf/token_kind.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

using Json = nlohmann::json;
constexpr std::string_view kMetaSpace = "\xe2\x96\x81";  // "▁"

// The `type` of a tokenizer.json component, "" for null or a typeless object.
std::string component_type(const Json& j) {
  if (!j.is_object()) return "";
  const auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A component and, for a Sequence, its members (under `list_key`), flattened.
std::vector<Json> components(const Json& j, const char* list_key) {
  if (component_type(j) != "Sequence") return j.is_null() ? std::vector<Json>{} : std::vector<Json>{j};
  const auto it = j.find(list_key);
  return it != j.end() && it->is_array() ? it->get<std::vector<Json>>() : std::vector<Json>{};
}

bool is_byte_level(const Json& tok) {
  for (const char* part : {"pre_tokenizer", "decoder"}) {
    const auto it = tok.find(part);
    if (it == tok.end()) continue;
    for (const Json& c : components(*it, part == std::string_view("decoder") ? "decoders" : "pretokenizers")) {
      if (component_type(c) == "ByteLevel") return true;
    }
  }
  return false;
}

// SentencePiece-style BPE: whether "▁" is put before the text. The text's
// spaces must become "▁" (a Replace normalizer or a Metaspace pre-tokenizer).
Result<bool> space_prefix(const Json& tok) {
  bool prefix = false;
  bool replaces_spaces = false;
  for (const Json& n : components(tok.value("normalizer", Json()), "normalizers")) {
    const std::string type = component_type(n);
    if (type == "Prepend" && n.value("prepend", "") == kMetaSpace) {
      prefix = true;
    } else if (type == "Replace" && n.value("content", "") == kMetaSpace && n.contains("pattern") &&
               n["pattern"].value("String", "") == " ") {
      replaces_spaces = true;
    } else {
      return unimplemented("normalizer {} is not supported", n.dump());
    }
  }
  for (const Json& p : components(tok.value("pre_tokenizer", Json()), "pretokenizers")) {
    if (component_type(p) != "Metaspace" || p.value("replacement", "") != kMetaSpace || p.value("split", false)) {
      return unimplemented("pre_tokenizer {} is not supported", p.dump());
    }
    replaces_spaces = true;
    const std::string scheme = p.value("prepend_scheme", p.value("add_prefix_space", true) ? "always" : "never");
    prefix = prefix || scheme != "never";
  }
  if (!replaces_spaces) return unimplemented("a BPE tokenizer that keeps spaces as spaces is not supported");
  return prefix;
}

// The pre-tokenizer name whose regexes are the Split patterns of `tok`.
Result<std::string> byte_level_pre_name(const Json& tok) {
  std::vector<std::string> patterns;
  for (const Json& p : components(tok.value("pre_tokenizer", Json()), "pretokenizers")) {
    const std::string type = component_type(p);
    if (type == "Split" && p.contains("pattern") && p["pattern"].contains("Regex")) {
      patterns.push_back(p["pattern"]["Regex"].get<std::string>());
    } else if (type == "ByteLevel" && p.value("add_prefix_space", false)) {
      return unimplemented("pre_tokenizer {} adds a prefix space, which met does not", p.dump());
    } else if (type == "ByteLevel" && p.value("use_regex", true)) {
      patterns.push_back(pre_tokenizer_patterns(PreTokenizerKind::kGpt2).front());
    } else if (type != "ByteLevel") {
      return unimplemented("pre_tokenizer {} is not supported", p.dump());
    }
  }
  for (const char* name : {"llama-bpe", "qwen2", "gpt-2", "deepseek-llm", "deepseek-v3", "starcoder", "gpt-4o",
                           "tekken", "falcon"}) {
    MET_ASSIGN_OR_RETURN(PreTokenizerConfig config, pre_tokenizer_config(name));
    if (pre_tokenizer_patterns(config.kind) == patterns) return std::string(name);
  }
  return unimplemented("pre_tokenizer regexes {} match no pre-tokenizer met knows", Json(patterns).dump());
}

Result<std::vector<std::string>> read_merges(const Json& model) {
  std::vector<std::string> merges;
  const auto it = model.find("merges");
  if (it == model.end() || !it->is_array()) return data_loss("model.merges is missing");
  for (const Json& m : *it) {
    if (m.is_string()) {
      merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      return data_loss("merge {} is neither \"a b\" nor [a, b]", m.dump());
    }
  }
  return merges;
}

struct TokenTable {
  std::vector<std::string> texts;
  std::vector<int32_t> types;
  std::map<std::string, uint32_t, std::less<>> ids;
};

using TokensById = std::map<uint64_t, std::pair<std::string, TokenKind>>;

bool is_byte_token_text(std::string_view text) {
  return text.size() == 6 && text.starts_with("<0x") && text.back() == '>';
}

// BPE and WordPiece: model.vocab is {"piece": id, ...}.
Result<TokensById> vocab_object_tokens(const Json& model) {
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object()) return data_loss("model.vocab is not an object");
  TokensById by_id;
  for (const auto& [text, id] : vocab->items()) {
    if (!id.is_number_unsigned()) return data_loss("model.vocab['{}'] is not a token id", text);
    by_id[id.get<uint64_t>()] = {text, is_byte_token_text(text) ? TokenKind::kByte : TokenKind::kNormal};
  }
  return by_id;
}

// Unigram: model.vocab is [["piece", score], ...] in id order; <0xNN> pieces
// are BYTE tokens when the model falls back to bytes.
Result<TokensById> unigram_tokens(const Json& model, std::vector<float>& scores) {
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_array()) return data_loss("model.vocab is not an array");
  const bool byte_fallback = model.value("byte_fallback", false);
  TokensById by_id;
  for (const Json& entry : *vocab) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
      return data_loss("model.vocab entry {} is not [piece, score]", entry.dump());
    }
    const std::string text = entry[0].get<std::string>();
    const TokenKind kind = byte_fallback && is_byte_token_text(text) ? TokenKind::kByte : TokenKind::kNormal;
    by_id[by_id.size()] = {text, kind};
    scores.push_back(entry[1].get<float>());
  }
  return by_id;
}

// Adds tokenizer.json's added tokens to the model's and pads the ids the
// files leave out up to `vocab_size`.
Result<TokenTable> complete_tokens(const Json& tok, TokensById by_id, uint32_t vocab_size) {
  for (const Json& added : tok.value("added_tokens", Json::array())) {
    if (!added.contains("id") || !added["id"].is_number_unsigned() || !added.contains("content")) {
      return data_loss("added token {} has no id or content", added.dump());
    }
    const TokenKind kind = added.value("special", false) ? TokenKind::kControl : TokenKind::kUserDefined;
    by_id[added["id"].get<uint64_t>()] = {added["content"].get<std::string>(), kind};
  }
  const uint64_t used = by_id.empty() ? 0 : by_id.rbegin()->first + 1;
  if (vocab_size > 0 && used > vocab_size) {  // the embeddings have no row for it (llama.cpp's converter asserts)
    return data_loss("token id {} ('{}') is past config.json's vocab_size {}", used - 1, by_id.rbegin()->second.first,
                     vocab_size);
  }
  const uint64_t size = std::max<uint64_t>(vocab_size, used);
  if (size > (uint64_t{1} << 24)) return data_loss("{} tokens is too many", size);
  TokenTable t;
  for (uint64_t id = 0; id < size; ++id) {
    const auto it = by_id.find(id);
    const bool present = it != by_id.end();
    t.texts.push_back(present ? it->second.first : fmt::format("[PAD{}]", id));
    t.types.push_back(static_cast<int32_t>(present ? it->second.second : TokenKind::kUnused));
    t.ids.emplace(t.texts.back(), static_cast<uint32_t>(id));
  }
  return t;
}

// A special token named in tokenizer_config.json: "x" or {"content": "x"}.
std::optional<std::string> token_content(const Json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return std::nullopt;
}

// The post-processor's single-sequence template: its first and last special tokens.
struct TemplateEnds {
  std::optional<std::string> first, last;
};

TemplateEnds template_ends(const Json& tok) {
  TemplateEnds ends;
  for (const Json& p : components(tok.value("post_processor", Json()), "processors")) {
    if (component_type(p) == "BertProcessing" && p.contains("cls") && p.contains("sep")) {  // [CLS] $A [SEP]
      ends.first = p["cls"][0].get<std::string>();
      ends.last = p["sep"][0].get<std::string>();
      continue;
    }
    if (component_type(p) != "TemplateProcessing" || !p.contains("single") || !p["single"].is_array()) continue;
    const Json& single = p["single"];
    if (!single.empty() && single.front().contains("SpecialToken")) {
      ends.first = single.front()["SpecialToken"].value("id", "");
    }
    if (single.size() > 1 && single.back().contains("SpecialToken")) {
      ends.last = single.back()["SpecialToken"].value("id", "");
    }
  }
  return ends;
}

Status add_special_tokens(const Json& tok, const Json& config, TokenTable& t, GgufMetadata& md) {
  const TemplateEnds ends = template_ends(tok);
  auto set_id = [&](const char* gguf_key, std::optional<std::string> text) -> Status {
    if (!text) return ok_status();
    const auto it = t.ids.find(*text);
    if (it == t.ids.end()) return data_loss("special token '{}' is not in the vocabulary", *text);
    md.set(gguf_key, it->second);
    return ok_status();
  };
  std::optional<std::string> unk = token_content(config, "unk_token");
  const Json& model_unk = tok["model"].value("unk_token", Json());
  if (!unk && model_unk.is_string() && t.ids.contains(model_unk.get<std::string>())) {
    unk = model_unk.get<std::string>();
  }
  if (unk && t.ids.contains(*unk)) t.types[t.ids.find(*unk)->second] = static_cast<int32_t>(TokenKind::kUnknown);
  std::optional<std::string> bos = token_content(config, "bos_token");
  if (!bos && ends.first && t.ids.contains(*ends.first)) bos = ends.first;
  MET_RETURN_IF_ERROR(set_id("tokenizer.ggml.bos_token_id", bos));
  MET_RETURN_IF_ERROR(set_id("tokenizer.ggml.eos_token_id", token_content(config, "eos_token")));
  MET_RETURN_IF_ERROR(set_id("tokenizer.ggml.unknown_token_id", unk));
  MET_RETURN_IF_ERROR(set_id("tokenizer.ggml.padding_token_id", token_content(config, "pad_token")));
  MET_RETURN_IF_ERROR(set_id("tokenizer.ggml.cls_token_id", token_content(config, "cls_token")));
  MET_RETURN_IF_ERROR(set_id("tokenizer.ggml.mask_token_id", token_content(config, "mask_token")));
  const bool template_bos = ends.first.has_value() && bos.has_value() && *ends.first == *bos;
  const auto add_bos = config.find("add_bos_token");
  md.set("tokenizer.ggml.add_bos_token",
         add_bos != config.end() && add_bos->is_boolean() ? add_bos->get<bool>() : template_bos);
  const auto add_eos = config.find("add_eos_token");
  md.set("tokenizer.ggml.add_eos_token",
         add_eos != config.end() && add_eos->is_boolean() ? add_eos->get<bool>() : ends.last.has_value());
  return ok_status();
}

void add_chat_template(const Json& config, GgufMetadata& md) {
  const auto it = config.find("chat_template");
  if (it == config.end()) return;
  if (it->is_string()) {
    md.set("tokenizer.chat_template", it->get<std::string>());
    return;
  }
  if (!it->is_array()) return;
  for (const Json& named : *it) {  // [{"name": "default", "template": "..."}, ...]
    if (named.value("name", "") == "default" && named.contains("template") && named["template"].is_string()) {
      md.set("tokenizer.chat_template", named["template"].get<std::string>());
    }
  }
}

// Scores llama.cpp's SentencePiece merging reads: a merge's result scores
// minus its rank, single characters 0, other tokens below every merge.
std::vector<float> merge_scores(const TokenTable& t, const std::vector<std::string>& merges) {
  std::vector<float> scores(t.texts.size(), -static_cast<float>(merges.size()));
  for (size_t id = 0; id < t.texts.size(); ++id) {
    const std::string& text = t.texts[id];
    if (!text.empty() && decode_utf8(text, 0).length == text.size()) scores[id] = 0.0f;  // one character
  }
  for (size_t rank = merges.size(); rank-- > 0;) {  // the lowest rank of a result wins
    const std::string& m = merges[rank];
    const size_t space = m.find(' ', 1);
    if (space == std::string::npos) continue;
    const auto it = t.ids.find(m.substr(0, space) + m.substr(space + 1));
    if (it != t.ids.end()) scores[it->second] = -static_cast<float>(rank);
  }
  return scores;
}

// WordPiece (BERT) as llama.cpp's converter writes it: word-initial pieces
// get a leading "▁", continuation pieces lose their "##", [BRACKETED] and
// added tokens stay; [CLS] is BOS and [SEP] is added after the text.
Status add_wordpiece(const Json& tok, const Json& config, TokenTable& t, GgufMetadata& md) {
  const Json normalizers = tok.value("normalizer", Json());
  if (!normalizers.is_null() && component_type(normalizers) != "BertNormalizer") {
    return unimplemented("normalizer {} is not supported", normalizers.dump());
  }
  if (component_type(tok.value("pre_tokenizer", Json())) != "BertPreTokenizer") {
    return unimplemented("pre_tokenizer {} is not supported", tok.value("pre_tokenizer", Json()).dump());
  }
  const bool lowercase = normalizers.is_object() && normalizers.value("lowercase", true);
  const Json strip = normalizers.is_object() ? normalizers.value("strip_accents", Json()) : Json();
  md.set("tokenizer.ggml.model", "bert");
  md.set("tokenizer.ggml.normalizer.lowercase", lowercase);
  md.set("tokenizer.ggml.normalizer.strip_accents", strip.is_boolean() ? strip.get<bool>() : lowercase);
  MET_RETURN_IF_ERROR(add_special_tokens(tok, config, t, md));
  const TemplateEnds ends = template_ends(tok);
  const std::optional<std::string> sep = token_content(config, "sep_token");
  const std::optional<std::string> sep_text = sep ? sep : ends.last;
  if (sep_text && t.ids.contains(*sep_text)) md.set("tokenizer.ggml.seperator_token_id", t.ids.find(*sep_text)->second);
  md.set("tokenizer.ggml.add_eos_token", false);
  md.set("tokenizer.ggml.add_sep_token", ends.last.has_value());
  const std::string prefix = tok["model"].value("continuing_subword_prefix", "##");
  for (size_t id = 0; id < t.texts.size(); ++id) {
    std::string& text = t.texts[id];
    const auto kind = static_cast<TokenKind>(t.types[id]);
    if (kind != TokenKind::kNormal || (text.starts_with('[') && text.ends_with(']'))) continue;
    text = text.starts_with(prefix) ? text.substr(prefix.size()) : std::string(kMetaSpace) + text;
  }
  md.set("tokenizer.ggml.tokens", GgufValue::array(std::move(t.texts)));
  md.set("tokenizer.ggml.token_type", GgufValue::array(std::move(t.types)));
  add_chat_template(config, md);
  return ok_status();
}

// Decodes standard base64 (padding optional); nullopt on any other character.
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::vector<uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int num_bits = 0;
  for (const char c : text) {
    const size_t value = kAlphabet.find(c);
    if (value == std::string_view::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    num_bits += 6;
    if (num_bits >= 8) {
      num_bits -= 8;
      out.push_back(static_cast<uint8_t>((bits >> num_bits) & 0xFF));
    }
  }
  return out;
}

// What a Unigram tokenizer.json's normalizer and pre-tokenizer mean in
// llama.cpp's "t5" terms.
struct UnigramNormalization {
  std::vector<uint8_t> charsmap;
  bool remove_extra_whitespaces = false;  // runs of spaces collapse, ends are trimmed
  bool add_space_prefix = false;
  bool strips = false;                    // a Strip normalizer
  bool nfkc = false;                      // an NFKC normalizer
  bool escapes_spaces = false;            // a Metaspace pre-tokenizer
};

// A Replace of runs of spaces by one space or "▁" (SpmConverter's " {2,}").
bool collapses_spaces(const Json& n) {
  if (!n.contains("pattern") || !n["pattern"].is_object()) return false;
  const std::string content = n.value("content", "");
  return n["pattern"].value("Regex", "") == " {2,}" && (content == " " || content == kMetaSpace);
}

Status read_unigram_normalizers(const Json& tok, UnigramNormalization& u) {
  for (const Json& n : components(tok.value("normalizer", Json()), "normalizers")) {
    const std::string type = component_type(n);
    if (type == "Precompiled") {
      const Json& blob = n.value("precompiled_charsmap", Json());
      if (blob.is_null()) continue;
      if (!blob.is_string()) return data_loss("Precompiled normalizer's precompiled_charsmap is not a string");
      std::optional<std::vector<uint8_t>> bytes = decode_base64(blob.get<std::string>());
      if (!bytes) return data_loss("Precompiled normalizer's precompiled_charsmap is not base64");
      u.charsmap = std::move(*bytes);
    } else if (type == "Replace" && collapses_spaces(n)) {
      u.remove_extra_whitespaces = true;
    } else if (type == "Strip") {
      u.strips = true;
    } else if (type == "NFKC") {
      u.nfkc = true;
    } else if (type == "Prepend" && n.value("prepend", "") == kMetaSpace) {
      u.add_space_prefix = true;
    } else {
      return unimplemented("normalizer {} is not supported for a Unigram model", n.dump());
    }
  }
  return ok_status();
}

Status read_unigram_pre_tokenizers(const Json& tok, UnigramNormalization& u) {
  for (const Json& p : components(tok.value("pre_tokenizer", Json()), "pretokenizers")) {
    const std::string type = component_type(p);
    if (type == "WhitespaceSplit") {
      u.remove_extra_whitespaces = true;  // whitespace only separates words
    } else if (type == "Metaspace" && p.value("replacement", "") == kMetaSpace) {
      u.escapes_spaces = true;
      const std::string scheme = p.value("prepend_scheme", p.value("add_prefix_space", true) ? "always" : "never");
      u.add_space_prefix = u.add_space_prefix || scheme != "never";
    } else {
      return unimplemented("pre_tokenizer {} is not supported for a Unigram model", p.dump());
    }
  }
  return ok_status();
}

Result<UnigramNormalization> unigram_normalization(const Json& tok) {
  UnigramNormalization u;
  MET_RETURN_IF_ERROR(read_unigram_normalizers(tok, u));
  MET_RETURN_IF_ERROR(read_unigram_pre_tokenizers(tok, u));
  if (!u.escapes_spaces) {
    return unimplemented(
        "a Unigram tokenizer without a Metaspace pre_tokenizer (spaces kept as spaces) is not supported");
  }
  if (u.strips && !u.remove_extra_whitespaces) {
    return unimplemented("a Strip normalizer without collapsing spaces (Replace \" {{2,}}\" or WhitespaceSplit) "
                         "is not representable as remove_extra_whitespaces");
  }
  if (u.nfkc && u.charsmap.empty()) {
    return unimplemented("an NFKC normalizer without a Precompiled charsmap is not representable (met, like "
                         "llama.cpp, normalizes Unigram text only through the charsmap)");
  }
  return u;
}

// Unigram (T5, ALBERT, XLM-R, mT5) as llama.cpp's converter writes it: model
// "t5", the pieces' scores (0 for added tokens outside the model's vocab,
// -10000 for padding), unk_id's token UNKNOWN, and the normalization above.
Status add_unigram(const Json& tok, const Json& config, uint32_t vocab_size, GgufMetadata& md) {
  const Json& model = tok["model"];
  MET_ASSIGN_OR_RETURN(UnigramNormalization norm, unigram_normalization(tok));
  std::vector<float> piece_scores;
  MET_ASSIGN_OR_RETURN(TokensById by_id, unigram_tokens(model, piece_scores));
  MET_ASSIGN_OR_RETURN(TokenTable t, complete_tokens(tok, std::move(by_id), vocab_size));
  std::vector<float> scores(t.texts.size(), -10000.0f);
  for (size_t id = 0; id < scores.size(); ++id) {
    if (id < piece_scores.size()) {
      scores[id] = piece_scores[id];
    } else if (t.types[id] != static_cast<int32_t>(TokenKind::kUnused)) {
      scores[id] = 0.0f;
    }
  }
  md.set("tokenizer.ggml.model", "t5");
  md.set("tokenizer.ggml.pre", "default");
  MET_RETURN_IF_ERROR(add_special_tokens(tok, config, t, md));
  const Json& unk_id = model.value("unk_id", Json());
  if (unk_id.is_number_unsigned()) {
    if (unk_id.get<uint64_t>() >= t.texts.size()) return data_loss("model.unk_id {} is past the vocab", unk_id.dump());
    t.types[unk_id.get<size_t>()] = static_cast<int32_t>(TokenKind::kUnknown);
    md.set("tokenizer.ggml.unknown_token_id", unk_id.get<uint32_t>());
  }
  md.set("tokenizer.ggml.tokens", GgufValue::array(std::move(t.texts)));
  md.set("tokenizer.ggml.scores", GgufValue::array(std::move(scores)));
  md.set("tokenizer.ggml.token_type", GgufValue::array(std::move(t.types)));
  md.set("tokenizer.ggml.add_space_prefix", norm.add_space_prefix);
  md.set("tokenizer.ggml.remove_extra_whitespaces", norm.remove_extra_whitespaces);
  if (!norm.charsmap.empty()) {
    md.set("tokenizer.ggml.precompiled_charsmap", GgufArray{GgufType::kUint8, std::move(norm.charsmap)});
  }
  add_chat_template(config, md);
  return ok_status();
}

Status add_tokenizer(const Json& tok, const Json& config, uint32_t vocab_size, GgufMetadata& md) {
  const auto model = tok.find("model");
  if (model == tok.end() || !model->is_object()) return data_loss("no 'model' object");
  const std::string type = component_type(*model);
  if (type == "Unigram") return add_unigram(tok, config, vocab_size, md);
  if (type != "BPE" && type != "WordPiece") {
    return unimplemented("model type '{}' is not supported (met converts BPE, WordPiece and Unigram tokenizers)",
                         type);
  }
  MET_ASSIGN_OR_RETURN(TokensById by_id, vocab_object_tokens(*model));
  MET_ASSIGN_OR_RETURN(TokenTable t, complete_tokens(tok, std::move(by_id), vocab_size));
  if (type == "WordPiece") return add_wordpiece(tok, config, t, md);
  MET_ASSIGN_OR_RETURN(std::vector<std::string> merges, read_merges(*model));
  if (is_byte_level(tok)) {
    // Qwen's NFC normalizer is not applied, as llama.cpp does not apply it.
    for (const Json& n : components(tok.value("normalizer", Json()), "normalizers")) {
      if (component_type(n) != "NFC") return unimplemented("normalizer {} is not supported", n.dump());
    }
    MET_ASSIGN_OR_RETURN(std::string pre, byte_level_pre_name(tok));
    md.set("tokenizer.ggml.model", "gpt2");
    md.set("tokenizer.ggml.pre", pre);
  } else {
    MET_ASSIGN_OR_RETURN(bool prefix, space_prefix(tok));
    md.set("tokenizer.ggml.model", "llama");
    md.set("tokenizer.ggml.add_space_prefix", prefix);
    md.set("tokenizer.ggml.scores", GgufValue::array(merge_scores(t, merges)));
  }
  MET_RETURN_IF_ERROR(add_special_tokens(tok, config, t, md));
  md.set("tokenizer.ggml.tokens", GgufValue::array(std::move(t.texts)));
  md.set("tokenizer.ggml.token_type", GgufValue::array(std::move(t.types)));
  md.set("tokenizer.ggml.merges", GgufValue::array(std::move(merges)));
  add_chat_template(config, md);
  return ok_status();
}

}  // namespace

Status add_hf_tokenizer_metadata(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                                 uint32_t vocab_size, GgufMetadata& md) {
  const Json tok = Json::parse(tokenizer_json.begin(), tokenizer_json.end(), nullptr, false);
  if (tok.is_discarded() || !tok.is_object()) return data_loss("tokenizer.json is not a JSON object");
  Json config = Json::object();
  if (!tokenizer_config_json.empty()) {
    config = Json::parse(tokenizer_config_json.begin(), tokenizer_config_json.end(), nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      return data_loss("tokenizer_config.json is not a JSON object");
    }
  }
  try {
    return add_tokenizer(tok, config, vocab_size, md).with_prefix("tokenizer.json");
  } catch (const nlohmann::json::exception& e) {  // a value of an unexpected type
    return data_loss("tokenizer.json: {}", e.what());
  }
}

}  // namespace met
