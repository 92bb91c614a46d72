// GbnfParser: recursive descent over GBNF text into a GrammarBuilder.
// Threading: one parser per call. Tested by tests/grammar/gbnf_parser_test.cc.
#include "grammar/gbnf_parser.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "grammar/grammar_builder.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  Result<Grammar> parse() && {
    skip_space(true);
    while (pos_ < text_.size()) {
      MET_RETURN_IF_ERROR(parse_rule());
      skip_space(true);
    }
    return std::move(builder_).build("root");
  }

 private:
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }

  std::string where(size_t at) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return fmt::format("{}:{}", line, col);
  }
  template <typename... Args>
  Status error_at(size_t at, fmt::format_string<Args...> f, Args&&... args) const {
    return invalid_argument("{}: {}", where(at), fmt::format(f, std::forward<Args>(args)...));
  }

  void skip_space(bool newline_ok) {
    while (!at_end()) {
      const char c = peek();
      if (c == '#') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  // At top level: a later line starting with `|` continues the rule.
  bool continues_on_next_line() {
    const size_t saved = pos_;
    skip_space(true);
    if (peek() == '|') return true;
    pos_ = saved;
    return false;
  }

  std::string_view parse_name() {
    const size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  Status parse_rule() {
    const size_t start = pos_;
    const std::string_view name = parse_name();
    if (name.empty()) return error_at(start, "expected a rule name, found '{}'", peek());
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") return error_at(pos_, "expected '::=' after rule name '{}'", name);
    pos_ += 3;
    const uint32_t rule = builder_.rule_id(name, where(start));
    if (builder_.is_defined(rule)) return error_at(start, "rule '{}' is defined twice", name);
    skip_space(true);
    MET_ASSIGN_OR_RETURN(std::vector<GrammarSequence> alts, parse_alternatives(rule, 0));
    builder_.define(rule, alts);
    skip_space(false);
    if (!at_end() && peek() != '\n' && peek() != '\r') {
      return error_at(pos_, "unexpected '{}' in rule '{}'", peek(), name);
    }
    return ok_status();
  }

  Result<std::vector<GrammarSequence>> parse_alternatives(uint32_t owner, int depth) {
    std::vector<GrammarSequence> alts;
    while (true) {
      MET_ASSIGN_OR_RETURN(GrammarSequence seq, parse_sequence(owner, depth));
      alts.push_back(std::move(seq));
      if (peek() != '|' && !(depth == 0 && continues_on_next_line())) return alts;
      ++pos_;
      skip_space(true);
    }
  }

  Result<GrammarSequence> parse_sequence(uint32_t owner, int depth) {
    GrammarSequence seq;
    const bool nested = depth > 0;
    while (!at_end()) {
      const size_t item_start = pos_;
      std::optional<GrammarSequence> item;
      MET_ASSIGN_OR_RETURN(item, parse_item(owner, depth));
      if (!item) return seq;
      skip_space(nested);
      MET_ASSIGN_OR_RETURN(GrammarSequence repeated, parse_quantifier(*item, owner, item_start));
      seq.insert(seq.end(), repeated.begin(), repeated.end());
      skip_space(nested);
    }
    return seq;
  }

  // An item's elements, or nullopt when no item starts here.
  Result<std::optional<GrammarSequence>> parse_item(uint32_t owner, int depth) {
    const char c = peek();
    if (c == '"') return parse_literal();
    if (c == '[') return parse_class();
    if (c == '.') {
      ++pos_;
      return std::optional<GrammarSequence>(GrammarSequence{builder_.chars(CharSet({}, true))});
    }
    if (c == '(') return parse_group(owner, depth);
    if (is_name_char(c)) {
      const size_t start = pos_;
      const std::string_view name = parse_name();
      return std::optional<GrammarSequence>(
          GrammarSequence{GrammarBuilder::ref(builder_.rule_id(name, where(start)))});
    }
    if (c == '<') return error_at(pos_, "token references (<...>) are not supported");
    return std::optional<GrammarSequence>();
  }

  Result<std::optional<GrammarSequence>> parse_group(uint32_t owner, int depth) {
    const size_t open = pos_++;
    if (depth + 1 > kMaxGbnfNesting) return error_at(open, "groups nested deeper than {}", kMaxGbnfNesting);
    skip_space(true);
    MET_ASSIGN_OR_RETURN(std::vector<GrammarSequence> alts, parse_alternatives(owner, depth + 1));
    if (peek() != ')') return error_at(open, "unclosed '('");
    ++pos_;
    const uint32_t rule = builder_.new_rule(builder_.rule_name(owner));
    builder_.define(rule, alts);
    return std::optional<GrammarSequence>(GrammarSequence{GrammarBuilder::ref(rule)});
  }

  Result<std::optional<GrammarSequence>> parse_literal() {
    const size_t open = pos_++;
    GrammarSequence seq;
    while (peek() != '"') {
      if (at_end() || peek() == '\n') return error_at(open, "unterminated string literal");
      MET_ASSIGN_OR_RETURN(char32_t cp, parse_char());
      seq.push_back(builder_.chars(CharSet({{cp, cp}}, false)));
    }
    ++pos_;
    return std::optional<GrammarSequence>(std::move(seq));
  }

  Result<std::optional<GrammarSequence>> parse_class() {
    const size_t open = pos_++;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    std::vector<CharRange> ranges;
    while (peek() != ']') {
      if (at_end() || peek() == '\n') return error_at(open, "unterminated character class");
      const size_t lo_at = pos_;
      MET_ASSIGN_OR_RETURN(char32_t lo, parse_char());
      char32_t hi = lo;
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size()) {
        ++pos_;
        MET_ASSIGN_OR_RETURN(hi, parse_char());
        if (hi < lo) return error_at(lo_at, "character range is backwards");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    return std::optional<GrammarSequence>(GrammarSequence{builder_.chars(CharSet(std::move(ranges), negated))});
  }

  // One (possibly escaped) code point of a literal or class.
  Result<char32_t> parse_char() {
    const size_t start = pos_;
    if (peek() != '\\') {
      const Utf8Char ch = decode_utf8(text_, pos_);
      if (ch.status != Utf8Status::kOk) return error_at(start, "invalid UTF-8");
      pos_ += ch.length;
      return ch.code_point;
    }
    const char e = peek(1);
    pos_ += 2;
    switch (e) {
      case 'n': return U'\n';
      case 'r': return U'\r';
      case 't': return U'\t';
      case '\\': case '"': case '[': case ']': case '-': case '^': case '/': case '\'':
        return static_cast<char32_t>(e);
      case 'x': return parse_hex(2, start);
      case 'u': return parse_hex(4, start);
      case 'U': return parse_hex(8, start);
      default: break;
    }
    return error_at(start, "unknown escape '\\{}'", e == '\0' ? ' ' : e);
  }

  Result<char32_t> parse_hex(int digits, size_t start) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int h = hex_value(peek());
      if (h < 0) return error_at(start, "escape needs {} hex digits", digits);
      value = value * 16 + static_cast<uint32_t>(h);
      ++pos_;
    }
    if (value > 0x10FFFF) return error_at(start, "code point U+{:X} is past U+10FFFF", value);
    return static_cast<char32_t>(value);
  }

  Result<GrammarSequence> parse_quantifier(const GrammarSequence& item, uint32_t owner, size_t item_start) {
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      const uint32_t min = c == '+' ? 1 : 0;
      const std::optional<uint32_t> max = c == '?' ? std::optional<uint32_t>(1) : std::nullopt;
      return repeat(item, min, max, owner, item_start);
    }
    if (c != '{') return item;
    const size_t open = pos_++;
    skip_space(false);
    MET_ASSIGN_OR_RETURN(std::optional<uint32_t> min, parse_count());
    std::optional<uint32_t> max = min;
    skip_space(false);
    if (peek() == ',') {
      ++pos_;
      skip_space(false);
      MET_ASSIGN_OR_RETURN(max, parse_count());
      skip_space(false);
    } else if (!min) {
      return error_at(open, "expected a count in '{{...}}'");
    }
    if (peek() != '}') return error_at(open, "expected '}}' to close the repetition");
    ++pos_;
    return repeat(item, min.value_or(0), max, owner, item_start);
  }

  Result<std::optional<uint32_t>> parse_count() {
    const size_t start = pos_;
    uint64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      value = value * 10 + static_cast<uint64_t>(peek() - '0');
      if (value > GrammarBuilder::kMaxRepetition) {
        return error_at(start, "repetition count over {}", GrammarBuilder::kMaxRepetition);
      }
      ++pos_;
    }
    if (pos_ == start) return std::optional<uint32_t>();
    return std::optional<uint32_t>(static_cast<uint32_t>(value));
  }

  Result<GrammarSequence> repeat(const GrammarSequence& item, uint32_t min, std::optional<uint32_t> max,
                                 uint32_t owner, size_t item_start) {
    Result<GrammarSequence> out = builder_.repeat(item, min, max, owner);
    if (!out.ok()) return error_at(item_start, "{}", out.status().message());
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
  GrammarBuilder builder_;
};

}  // namespace

Result<Grammar> compile_gbnf(std::string_view text) { return GbnfParser(text).parse(); }

}  // namespace met
