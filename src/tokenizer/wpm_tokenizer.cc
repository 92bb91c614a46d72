// WordPiece. Tested by tests/tokenizer/wpm_tokenizer_test.cc.
#include "tokenizer/wpm_tokenizer.h"

#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/unicode_data.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

constexpr size_t kMaxWordChars = 100;  // Hugging Face's max_input_chars_per_word

bool is_bert_whitespace(char32_t cp) { return cp == '\t' || cp == '\n' || cp == '\r' || is_white_space(cp); }
bool is_bert_control(char32_t cp) { return cp != '\t' && cp != '\n' && cp != '\r' && is_other(cp); }
bool is_bert_punctuation(char32_t cp) { return is_ascii_punctuation(cp) || is_punctuation(cp); }

// BertNormalizer's clean_text and handle_chinese_chars.
std::string clean_text(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t pos = 0; pos < raw.size();) {
    const Utf8Char c = decode_utf8(raw, pos);
    pos += c.length;
    const char32_t cp = c.code_point;
    if (cp == 0 || cp == kReplacementChar || is_bert_control(cp)) continue;
    if (is_bert_whitespace(cp)) {
      out += ' ';
    } else if (is_cjk_ideograph(cp)) {
      out += ' ';
      append_utf8(out, cp);
      out += ' ';
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

// With strip_accents each character becomes the first code point of its
// canonical decomposition (as llama.cpp's WordPiece does: a Hangul syllable
// its leading consonant) and combining marks are dropped.
std::string strip_accents_and_lower(std::string_view text, bool strip_accents, bool lowercase) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Char c = decode_utf8(text, pos);
    pos += c.length;
    const char32_t cp = strip_accents ? nfd_first(c.code_point) : c.code_point;
    if (strip_accents && is_nonspacing_mark(cp)) continue;
    append_utf8(out, lowercase ? to_lower(cp) : cp);
  }
  return out;
}

}  // namespace

std::vector<std::string> WpmTokenizer::words(std::string_view raw) const {
  const std::string text =
      strip_accents_and_lower(clean_text(raw), vocab_->strip_accents(), vocab_->lowercase());
  std::vector<std::string> words;
  std::string word;
  const auto finish = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Char c = decode_utf8(text, pos);
    const std::string_view bytes = std::string_view(text).substr(pos, c.length);
    pos += c.length;
    if (is_bert_whitespace(c.code_point)) {
      finish();
    } else if (is_bert_punctuation(c.code_point)) {
      finish();
      words.emplace_back(bytes);
    } else {
      word.append(bytes);
    }
  }
  finish();
  return words;
}

void WpmTokenizer::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  const std::optional<TokenId> unk = vocab_->special().unk;
  size_t num_chars = 0;
  for (size_t pos = 0; pos < word.size(); pos += decode_utf8(word, pos).length) ++num_chars;
  const size_t first = out.size();
  bool ok = num_chars <= kMaxWordChars;
  std::string candidate;
  bool phantom = true;  // the "▁" before the word is not matched yet
  for (size_t start = 0; ok && start < word.size();) {
    std::optional<TokenId> found;
    size_t end = std::min(word.size(), start + vocab_->max_token_bytes());
    for (; end > start; --end) {
      if (end < word.size() && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80) continue;
      candidate.assign(phantom ? kSpmSpace : std::string_view());
      candidate.append(word.substr(start, end - start));
      if ((found = vocab_->find(candidate))) break;
    }
    // As llama.cpp (which matches over "▁" + word): where no piece starts
    // with the "▁" and the word's first letters, "▁" alone may.
    if (!found && phantom && (found = vocab_->find(kSpmSpace))) {
      out.push_back(*found);
      phantom = false;
      continue;
    }
    phantom = false;
    ok = found.has_value();
    if (ok) out.push_back(*found);
    start = end;
  }
  if (!ok) {
    out.resize(first);
    if (unk) out.push_back(*unk);
  }
}

void WpmTokenizer::encode(std::string_view raw, std::vector<TokenId>& out) const {
  for (const std::string& word : words(raw)) encode_word(word, out);
}

}  // namespace met
