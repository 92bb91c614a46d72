// Pre-tokenizer regexes per `tokenizer.ggml.pre`. Tested by
// tests/tokenizer/pre_tokenizer_test.cc.
#include "tokenizer/pre_tokenizer.h"

#include <array>

#include "tokenizer/utf8.h"

namespace met {
namespace {

// GPT-2's pattern as published (llama.cpp drops the final `|\s+`, but its
// hand-written splitter keeps that branch, so the pieces are the same).
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen35 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kTekken =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// CJK, Hangul and the wide block U+0800..U+4E00, as DeepSeek publishes them.
constexpr std::string_view kDeepseekCjk = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+";
constexpr std::string_view kDeepseekLetters =
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293"
    "\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c"
    "\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5"
    "\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59"
    "\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc"
    "\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107"
    "\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee"
    "\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e"
    "\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f"
    "\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2"
    "\U000118a0-\U000118df\U0001e900-\U0001e943]+";
constexpr std::string_view kDeepseekPunct =
    "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+";
constexpr std::string_view kDeepseekV3 =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct NamedPre {
  std::string_view name;
  PreTokenizerConfig config;
};

constexpr PreTokenizerConfig ignore_merges_with_bos(PreTokenizerKind kind) {
  return {kind, true, true, false};
}
constexpr PreTokenizerConfig plain(PreTokenizerKind kind) { return {kind, false, {}, false}; }

using K = PreTokenizerKind;
const std::array kNamedPres = {
    NamedPre{"default", plain(K::kDefault)},
    NamedPre{"llama3", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"llama-v3", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"llama-bpe", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"falcon3", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"falcon-h1", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"pixtral", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"midm-2.0", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"lfm2", ignore_merges_with_bos(K::kLlama3)},
    NamedPre{"dbrx", plain(K::kLlama3)},
    NamedPre{"smaug-bpe", plain(K::kLlama3)},
    NamedPre{"deepseek-llm", plain(K::kDeepseekLlm)},
    NamedPre{"deepseek-coder", plain(K::kDeepseekCoder)},
    NamedPre{"deepseek-v3", plain(K::kDeepseekV3)},
    NamedPre{"falcon", plain(K::kFalcon)},
    NamedPre{"gpt-2", plain(K::kGpt2)},
    NamedPre{"phi-2", plain(K::kGpt2)},
    NamedPre{"mpt", plain(K::kGpt2)},
    NamedPre{"olmo", plain(K::kGpt2)},
    NamedPre{"jais", plain(K::kGpt2)},
    NamedPre{"trillion", plain(K::kGpt2)},
    NamedPre{"granite-docling", plain(K::kGpt2)},
    NamedPre{"jina-es", plain(K::kGpt2)},
    NamedPre{"jina-de", plain(K::kGpt2)},
    NamedPre{"jina-v2-es", plain(K::kGpt2)},
    NamedPre{"jina-v2-de", plain(K::kGpt2)},
    NamedPre{"gigachat", plain(K::kGpt2)},
    NamedPre{"a.x-4.0", plain(K::kGpt2)},
    NamedPre{"mellum", plain(K::kGpt2)},
    NamedPre{"modern-bert", plain(K::kGpt2)},
    NamedPre{"exaone4", plain(K::kGpt2)},
    NamedPre{"jina-v1-en", {K::kGpt2, false, {}, true}},
    NamedPre{"jina-v2-code", {K::kGpt2, false, {}, true}},
    NamedPre{"roberta-bpe", {K::kGpt2, false, {}, true}},
    NamedPre{"starcoder", plain(K::kStarcoder)},
    NamedPre{"refact", plain(K::kStarcoder)},
    NamedPre{"command-r", plain(K::kStarcoder)},
    NamedPre{"smollm", plain(K::kStarcoder)},
    NamedPre{"codeshell", plain(K::kStarcoder)},
    NamedPre{"exaone", plain(K::kStarcoder)},
    NamedPre{"minerva-7b", plain(K::kStarcoder)},
    NamedPre{"mellum2", plain(K::kStarcoder)},
    NamedPre{"qwen2", plain(K::kQwen2)},
    NamedPre{"deepseek-r1-qwen", plain(K::kQwen2)},
    NamedPre{"kormo", plain(K::kQwen2)},
    NamedPre{"f2llmv2", plain(K::kQwen2)},
    NamedPre{"megrez", plain(K::kQwen2)},
    NamedPre{"stablelm2", plain(K::kQwen2)},
    NamedPre{"hunyuan", plain(K::kQwen2)},
    NamedPre{"solar-open", plain(K::kQwen2)},
    NamedPre{"grok-2", plain(K::kQwen2)},
    NamedPre{"qwen35", plain(K::kQwen35)},
    NamedPre{"gpt-4o", plain(K::kGpt4o)},
    NamedPre{"llama4", plain(K::kGpt4o)},
    NamedPre{"kanana2", plain(K::kGpt4o)},
    NamedPre{"minimax-m2", plain(K::kGpt4o)},
    NamedPre{"tekken", ignore_merges_with_bos(K::kTekken)},
};

// Splits one piece by one regex: matches and the gaps between them.
void split_piece(const Pcre2Regex& regex, std::string_view piece, RegexScratch& scratch,
                 std::vector<std::string_view>& out) {
  size_t gap_start = 0;
  size_t pos = 0;
  while (pos < piece.size()) {
    const std::optional<RegexMatch> m = regex.find(piece, pos, scratch);
    if (!m || m->begin >= piece.size()) break;
    if (m->begin == m->end) {  // an empty match splits nothing; step over a character
      pos = m->begin + decode_utf8(piece, m->begin).length;
      continue;
    }
    if (m->begin > gap_start) out.push_back(piece.substr(gap_start, m->begin - gap_start));
    out.push_back(piece.substr(m->begin, m->end - m->begin));
    gap_start = pos = m->end;
  }
  if (gap_start < piece.size()) out.push_back(piece.substr(gap_start));
}

}  // namespace

Result<PreTokenizerConfig> pre_tokenizer_config(std::string_view name) {
  if (name.empty()) return plain(K::kDefault);
  for (const NamedPre& named : kNamedPres) {
    if (named.name == name) return named.config;
  }
  return unimplemented("pre-tokenizer '{}' is not supported", name);
}

std::vector<std::string> pre_tokenizer_patterns(PreTokenizerKind kind) {
  using V = std::vector<std::string>;
  switch (kind) {
    case K::kDefault:
      return V{R"([\p{P}\$\+<=>\^~\|]+)", std::string(kGpt2), R"(\p{N}+)", "[0-9][0-9][0-9]"};
    case K::kGpt2:
      return V{std::string(kGpt2)};
    case K::kLlama3:
      return V{std::string(kLlama3)};
    case K::kQwen2:
      return V{std::string(kQwen2)};
    case K::kQwen35:
      return V{std::string(kQwen35)};
    case K::kDeepseekLlm:
      return V{"[\\r\\n]", std::string(kDeepseekLetters), std::string(kDeepseekPunct), "\\s+\\z",
               std::string(kDeepseekCjk), R"(\p{N}+)"};
    case K::kDeepseekCoder:
      return V{"[\\r\\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", std::string(kDeepseekCjk), R"(\p{N})"};
    case K::kDeepseekV3:
      return V{R"(\p{N}{1,3})", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
               std::string(kDeepseekV3)};
    case K::kFalcon:
      return V{R"([\p{P}\$\+<=>\^~\|`]+)", std::string(kGpt2), "[0-9][0-9][0-9]"};
    case K::kStarcoder:
      return V{R"(\p{N})", std::string(kGpt2)};
    case K::kGpt4o:
      return V{std::string(kGpt4o)};
    case K::kTekken:
      return V{std::string(kTekken)};
  }
  return {};
}

Result<PreTokenizer> PreTokenizer::create(PreTokenizerKind kind) {
  return from_patterns(pre_tokenizer_patterns(kind));
}

Result<PreTokenizer> PreTokenizer::from_patterns(const std::vector<std::string>& patterns) {
  std::vector<Pcre2Regex> regexes;
  regexes.reserve(patterns.size());
  for (const std::string& pattern : patterns) {
    MET_ASSIGN_OR_RETURN(Pcre2Regex regex, Pcre2Regex::compile(pattern));
    regexes.push_back(std::move(regex));
  }
  return PreTokenizer(std::move(regexes));
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  if (text.empty()) return;
  RegexScratch scratch;
  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (const Pcre2Regex& regex : regexes_) {
    next.clear();
    for (std::string_view piece : current) split_piece(regex, piece, scratch, next);
    current.swap(next);
  }
  pieces.insert(pieces.end(), current.begin(), current.end());
}

}  // namespace met
