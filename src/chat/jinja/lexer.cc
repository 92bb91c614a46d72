// The lexer. Tested by tests/chat/lexer_test.cc.
#include "chat/jinja/lexer.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <utility>

#include "chat/jinja/string_literal.h"

namespace met::jinja {
namespace {

bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c >= 0x1C && c <= 0x1F);
}
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_dec(char c) { return c >= '0' && c <= '9'; }

// "\r\n" and "\r" become "\n"; one trailing newline goes.
std::string normalize(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

constexpr std::array<std::string_view, 6> kTwoCharOps = {"//", "**", "==", "!=", "<=", ">="};
constexpr std::string_view kOneCharOps = "+-*/%~()[]{}<>=.:|,;";

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(normalize(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  Result<std::vector<Token>> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string_view text(src_.data() + pos_, std::min(tag, src_.size()) - pos_);
      if (tag == std::string::npos) {
        emit_text(text, pos_);
        break;
      }
      MET_RETURN_IF_ERROR(lex_tag_with_text(tag, text, line_starting));
      line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    push(TokenKind::kEnd, "", src_.size());
    return std::move(tokens_);
  }

 private:
  SourceLoc loc_at(size_t pos) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());
    return SourceLoc{static_cast<uint32_t>(line), static_cast<uint32_t>(pos - line_starts_[line - 1] + 1)};
  }

  Token& push(TokenKind kind, std::string text, size_t at) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.loc = loc_at(at);
    tokens_.push_back(std::move(t));
    return tokens_.back();
  }

  void emit_text(std::string_view text, size_t at) {
    if (!text.empty()) push(TokenKind::kText, std::string(text), at);
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return std::string::npos;
  }

  char sign_at(size_t pos) const {
    return pos < src_.size() && (src_[pos] == '-' || src_[pos] == '+') ? src_[pos] : '\0';
  }

  // The text before a tag after `-` stripping or lstrip_blocks.
  static std::string_view control_text(std::string_view text, char kind, char sign, bool line_starting) {
    if (sign == '-') {
      while (!text.empty() && is_ws(text.back())) text.remove_suffix(1);
      return text;
    }
    if (sign == '+' || kind == '{') return text;
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
    if (l_pos == 0 && !line_starting) return text;
    const std::string_view tail = text.substr(l_pos);
    if (!tail.empty() && std::all_of(tail.begin(), tail.end(), is_ws)) return text.substr(0, l_pos);
    return text;
  }

  void skip_ws() {
    while (pos_ < src_.size() && is_ws(src_[pos_])) ++pos_;
  }

  Status lex_tag_with_text(size_t tag, std::string_view text, bool line_starting) {
    const char kind = src_[tag + 1];
    const char sign = sign_at(tag + 2);
    const size_t text_at = pos_;
    emit_text(control_text(text, kind, sign, line_starting), text_at);
    pos_ = tag + 2 + (sign != '\0' ? 1 : 0);
    if (kind == '#') return lex_comment(tag);
    if (kind == '%' && try_raw()) return lex_raw_body(tag);
    return lex_tag(tag, kind);
  }

  Status lex_comment(size_t tag) {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) return syntax_error(loc_at(tag), "unclosed comment");
    const char sign = end > pos_ ? sign_at(end - 1) : '\0';
    pos_ = end + 2;
    after_tag_end(sign, /*trim_newline=*/true);
    return ok_status();
  }

  // Whitespace after a tag's end delimiter: `-` strips it all, `+` keeps it,
  // otherwise trim_blocks drops one newline after a block or comment.
  void after_tag_end(char sign, bool trim_newline) {
    if (sign == '-') {
      skip_ws();
    } else if (sign != '+' && trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
  }

  // Whether the `{%` before pos_ opens `{% raw %}`; if so, pos_ is past it.
  bool try_raw() {
    size_t p = pos_;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    if (src_.compare(p, 3, "-%}") == 0) {
      pos_ = p + 3;
      skip_ws();
      return true;
    }
    if (src_.compare(p, 2, "%}") == 0) {
      pos_ = p + 2;
      return true;
    }
    return false;
  }

  // Matches `{%[-+]?\s*endraw\s*[-+]?%}` at `p`: the end-tag sign ('\0' when
  // none) and the position past the tag, or nullopt.
  std::optional<std::pair<char, size_t>> match_endraw(size_t p) const {
    p += 2;
    if (sign_at(p) != '\0') ++p;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    if (src_.compare(p, 6, "endraw") != 0) return std::nullopt;
    p += 6;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    const char sign = sign_at(p);
    if (sign != '\0') ++p;
    if (src_.compare(p, 2, "%}") != 0) return std::nullopt;
    return std::make_pair(sign, p + 2);
  }

  Status lex_raw_body(size_t tag) {
    const bool line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    for (size_t p = src_.find("{%", pos_); p != std::string::npos; p = src_.find("{%", p + 1)) {
      auto end = match_endraw(p);
      if (!end) continue;
      std::string_view body(src_.data() + pos_, p - pos_);
      emit_text(control_text(body, '%', sign_at(p + 2), line_starting), pos_);
      pos_ = end->second;
      after_tag_end(end->first, /*trim_newline=*/true);
      return ok_status();
    }
    return syntax_error(loc_at(tag), "missing endraw for this raw block");
  }

  Status lex_tag(size_t tag, char kind) {
    const bool is_block = kind == '%';
    push(is_block ? TokenKind::kBlockBegin : TokenKind::kVariableBegin, is_block ? "{%" : "{{", tag);
    int depth = 0;
    while (true) {
      skip_ws();
      if (pos_ >= src_.size()) {
        return syntax_error(loc_at(tag), "unexpected end of template: this tag is not closed");
      }
      if (depth == 0 && try_tag_end(is_block)) return ok_status();
      MET_RETURN_IF_ERROR(lex_expression_token(depth));
    }
  }

  bool try_tag_end(bool is_block) {
    const std::string_view close = is_block ? "%}" : "}}";
    char sign = sign_at(pos_);
    if (sign == '+' && !is_block) sign = '\0';
    const size_t at = pos_ + (sign != '\0' ? 1 : 0);
    if (src_.compare(at, 2, close) != 0) return false;
    push(is_block ? TokenKind::kBlockEnd : TokenKind::kVariableEnd, std::string(close), pos_);
    pos_ = at + 2;
    after_tag_end(sign, /*trim_newline=*/is_block);
    return true;
  }

  Status lex_expression_token(int& depth) {
    const char c = src_[pos_];
    if (is_dec(c)) return lex_number();
    if (is_name_start(c)) {
      const size_t start = pos_;
      while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
      push(TokenKind::kName, src_.substr(start, pos_ - start), start);
      return ok_status();
    }
    if (c == '\'' || c == '"') return lex_string();
    for (std::string_view op : kTwoCharOps) {
      if (src_.compare(pos_, 2, op) == 0) {
        push(TokenKind::kOperator, std::string(op), pos_);
        pos_ += 2;
        return ok_status();
      }
    }
    if (kOneCharOps.find(c) == std::string_view::npos) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte > 0x20 && byte < 0x7F) return syntax_error(loc_at(pos_), "unexpected character '{}'", c);
      return syntax_error(loc_at(pos_), "unexpected byte 0x{:02x}", byte);
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    push(TokenKind::kOperator, std::string(1, c), pos_);
    ++pos_;
    return ok_status();
  }

  // Digits with optional single underscores between them.
  std::string take_digits() {
    std::string digits;
    while (pos_ < src_.size() && (is_dec(src_[pos_]) ||
                                  (src_[pos_] == '_' && pos_ + 1 < src_.size() && is_dec(src_[pos_ + 1]) &&
                                   !digits.empty()))) {
      if (src_[pos_] != '_') digits += src_[pos_];
      ++pos_;
    }
    return digits;
  }

  Status lex_number() {
    const size_t start = pos_;
    std::string text = take_digits();
    const bool after_dot = !tokens_.empty() && tokens_.back().is_operator(".");
    bool is_float = false;
    if (!after_dot && pos_ + 1 < src_.size() && src_[pos_] == '.' && is_dec(src_[pos_ + 1])) {
      ++pos_;
      text += '.' + take_digits();
      is_float = true;
    }
    if (!after_dot && pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && is_dec(src_[p])) {
        text += 'e';
        text.append(src_, pos_ + 1, p - pos_ - 1);
        pos_ = p;
        text += take_digits();
        is_float = true;
      }
    }
    Token& t = push(is_float ? TokenKind::kFloat : TokenKind::kInteger, text, start);
    if (is_float) {
      t.float_value = std::strtod(text.c_str(), nullptr);
      return ok_status();
    }
    errno = 0;
    t.int_value = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return syntax_error(t.loc, "integer literal {} does not fit 64 bits", text);
    return ok_status();
  }

  Status lex_string() {
    const size_t start = pos_;
    const char quote = src_[pos_++];
    while (pos_ < src_.size() && src_[pos_] != quote) {
      pos_ += src_[pos_] == '\\' && pos_ + 1 < src_.size() ? 2 : 1;
    }
    if (pos_ >= src_.size()) return syntax_error(loc_at(start), "unterminated string literal");
    ++pos_;
    std::string_view body(src_.data() + start + 1, pos_ - start - 2);
    push(TokenKind::kString, decode_string_literal(body), start);
    return ok_status();
  }

  std::string src_;
  size_t pos_ = 0;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace met::jinja
