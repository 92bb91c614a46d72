// regex_to_gbnf: recursive descent over the pattern's code points; each atom
// becomes a set of code points, then the GBNF for its JSON encodings.
// Tested by tests/grammar/regex_to_gbnf_test.cc.
#include "grammar/regex_to_gbnf.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "grammar/grammar.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

using Ranges = std::vector<CharRange>;

Ranges complement(Ranges r) {
  const CharSet norm(std::move(r), false);
  Ranges out;
  char32_t next = 0;
  for (const CharRange& x : norm.ranges()) {
    if (x.lo > next) out.push_back({next, x.lo - 1});
    next = x.hi + 1;
  }
  if (next <= 0x10FFFF) out.push_back({next, 0x10FFFF});
  return out;
}

bool has(const Ranges& r, char32_t c) {
  return std::any_of(r.begin(), r.end(), [c](const CharRange& x) { return x.lo <= c && c <= x.hi; });
}

// GBNF for one JSON-encoded character from `set`; empty when none encodable.
std::string json_encoded(const Ranges& set) {
  const CharSet norm(set, false);
  Ranges raw;
  for (CharRange x : norm.ranges()) {
    for (char32_t cut : {char32_t{'"'}, char32_t{'\\'}}) {
      if (x.lo <= cut && cut <= x.hi) {
        if (x.lo < cut) raw.push_back({x.lo, cut - 1});
        x.lo = cut + 1;
      }
      if (x.lo > x.hi) break;
    }
    if (x.lo > x.hi) continue;
    if (x.hi < 0x20) continue;
    raw.push_back({std::max<char32_t>(x.lo, 0x20), x.hi});
  }
  std::vector<std::string> alts;
  if (!raw.empty()) {
    std::string cls = "[";
    const CharSet raw_set(raw, false);  // named: ranges() borrows from it
    for (const CharRange& x : raw_set.ranges()) {
      cls += gbnf_escape(x.lo, true);
      if (x.hi != x.lo) cls += "-" + gbnf_escape(x.hi, true);
    }
    alts.push_back(cls + "]");
  }
  const std::pair<char32_t, std::string_view> escapes[] = {
      {'"', R"("\\\"")"}, {'\\', R"("\\\\")"}, {'\n', R"("\\n")"}, {'\t', R"("\\t")"},
      {'\r', R"("\\r")"}, {'\b', R"("\\b")"},  {'\f', R"("\\f")"}};
  const Ranges members(norm.ranges().begin(), norm.ranges().end());
  for (const auto& [c, text] : escapes) {
    if (has(members, c)) alts.emplace_back(text);
  }
  if (alts.empty()) return "";
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{'\t', '\r'}, {' ', ' '}};

// The ASCII complement of an ASCII class.
Ranges ascii_complement(const Ranges& r) {
  Ranges out;
  for (const CharRange& x : complement(r)) {
    if (x.lo < 0x80) out.push_back({x.lo, std::min<char32_t>(x.hi, 0x7F)});
  }
  return out;
}

class RegexConverter {
 public:
  RegexConverter(std::string_view pattern, std::string_view char_rule) : char_rule_(char_rule) {
    for (size_t i = 0; i < pattern.size();) {
      const Utf8Char ch = decode_utf8(pattern, i);
      cps_.push_back(ch.code_point);
      i += ch.length;
    }
  }

  Result<std::string> convert() {
    std::vector<std::string> branches;
    while (true) {
      const bool anchored_start = peek() == '^';
      if (anchored_start) ++pos_;
      MET_ASSIGN_OR_RETURN(std::string seq, parse_sequence(true));
      const bool anchored_end = peek() == '$';
      if (anchored_end) ++pos_;
      std::string branch = anchored_start ? "" : fmt::format("{}* ", char_rule_);
      branch += seq.empty() ? "\"\"" : seq;
      if (!anchored_end) branch += fmt::format(" {}*", char_rule_);
      branches.push_back(std::move(branch));
      if (at_end()) break;
      if (peek() != '|') return error("unexpected '{}'", static_cast<char>(peek()));
      ++pos_;
    }
    std::string out = "(";
    for (size_t i = 0; i < branches.size(); ++i) out += (i ? " | " : "") + branches[i];
    return out + ")";
  }

 private:
  bool at_end() const { return pos_ >= cps_.size(); }
  char32_t peek(size_t ahead = 0) const { return pos_ + ahead < cps_.size() ? cps_[pos_ + ahead] : 0; }
  template <typename... Args>
  Status error(fmt::format_string<Args...> f, Args&&... args) const {
    return invalid_argument("pattern offset {}: {}", pos_, fmt::format(f, std::forward<Args>(args)...));
  }

  Result<std::string> parse_alternatives() {
    std::vector<std::string> alts;
    while (true) {
      MET_ASSIGN_OR_RETURN(std::string seq, parse_sequence(false));
      alts.push_back(seq.empty() ? "\"\"" : seq);
      if (peek() != '|') break;
      ++pos_;
    }
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
  }

  // Items until `|`, `)`, the end, or (at top level) a final `$`.
  Result<std::string> parse_sequence(bool top) {
    std::string out;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (top && peek() == '$' && pos_ + 1 == cps_.size()) break;
      if (top && peek() == '$' && peek(1) == '|') break;
      MET_ASSIGN_OR_RETURN(std::string atom, parse_atom());
      MET_ASSIGN_OR_RETURN(std::string item, parse_quantifier(std::move(atom)));
      out += (out.empty() ? "" : " ") + item;
    }
    return out;
  }

  Result<std::string> parse_atom() {
    const char32_t c = peek();
    if (c == '(') return parse_group();
    if (c == '[') return parse_class();
    if (c == '^' || c == '$') return error("anchor '{}' only allowed at the ends of the pattern", static_cast<char>(c));
    if (c == '*' || c == '+' || c == '?' || c == '{') return error("quantifier with nothing to repeat");
    if (c == '.') {
      ++pos_;
      return set_expr(complement({{'\n', '\n'}}));
    }
    Ranges set;
    if (c == '\\') {
      MET_RETURN_IF_ERROR(parse_escape(set));
    } else {
      ++pos_;
      set.push_back({c, c});
    }
    return set_expr(set);
  }

  Result<std::string> set_expr(const Ranges& set) {
    std::string e = json_encoded(set);
    if (e.empty()) return error("a character class matches nothing a JSON string can hold");
    return e;
  }

  Result<std::string> parse_group() {
    ++pos_;
    if (peek() == '?') {
      if (peek(1) != ':') return error("only (?:...) groups are supported (no lookaround or named groups)");
      pos_ += 2;
    }
    if (++depth_ > 64) return error("groups nested too deep");
    MET_ASSIGN_OR_RETURN(std::string inner, parse_alternatives());
    --depth_;
    if (peek() != ')') return error("unclosed '('");
    ++pos_;
    return inner;
  }

  // One escape at pos_ (a backslash) into `set`.
  Status parse_escape(Ranges& set) {
    ++pos_;
    if (at_end()) return error("pattern ends with '\\'");
    const char32_t e = cps_[pos_++];
    switch (e) {
      case 'd': unicode_class_ = true; set.insert(set.end(), kDigit.begin(), kDigit.end()); return ok_status();
      case 'w': unicode_class_ = true; set.insert(set.end(), kWord.begin(), kWord.end()); return ok_status();
      case 's': unicode_class_ = true; set.insert(set.end(), kSpace.begin(), kSpace.end()); return ok_status();
      case 'D': for (auto r : ascii_complement(kDigit)) set.push_back(r); return ok_status();
      case 'W': for (auto r : ascii_complement(kWord)) set.push_back(r); return ok_status();
      case 'S': for (auto r : ascii_complement(kSpace)) set.push_back(r); return ok_status();
      case 'n': set.push_back({'\n', '\n'}); return ok_status();
      case 't': set.push_back({'\t', '\t'}); return ok_status();
      case 'r': set.push_back({'\r', '\r'}); return ok_status();
      case 'f': set.push_back({'\f', '\f'}); return ok_status();
      case 'v': set.push_back({'\v', '\v'}); return ok_status();
      case 'x': return parse_hex(2, set);
      case 'u': return parse_hex(4, set);
      default: break;
    }
    if (e < 0x80 && ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))) {
      return error("unsupported escape '\\{}'", static_cast<char>(e));
    }
    set.push_back({e, e});
    return ok_status();
  }

  Status parse_hex(int digits, Ranges& set) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const char32_t h = peek();
      int d = -1;
      if (h >= '0' && h <= '9') d = static_cast<int>(h - '0');
      if (h >= 'a' && h <= 'f') d = static_cast<int>(h - 'a' + 10);
      if (h >= 'A' && h <= 'F') d = static_cast<int>(h - 'A' + 10);
      if (d < 0) return error("escape needs {} hex digits", digits);
      v = v * 16 + static_cast<uint32_t>(d);
    }
    set.push_back({v, v});
    return ok_status();
  }

  Result<std::string> parse_class() {
    ++pos_;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    unicode_class_ = false;
    Ranges set;
    bool first = true;
    while (first || peek() != ']') {
      if (at_end()) return error("unclosed '['");
      first = false;
      Ranges item;
      if (peek() == '\\') {
        MET_RETURN_IF_ERROR(parse_escape(item));
      } else {
        item.push_back({peek(), peek()});
        ++pos_;
      }
      if (item.size() == 1 && item[0].lo == item[0].hi && peek() == '-' && peek(1) != ']' && pos_ + 1 < cps_.size()) {
        ++pos_;
        Ranges hi;
        if (peek() == '\\') {
          MET_RETURN_IF_ERROR(parse_escape(hi));
        } else {
          hi.push_back({peek(), peek()});
          ++pos_;
        }
        if (hi.size() != 1 || hi[0].lo != hi[0].hi || hi[0].lo < item[0].lo) return error("bad class range");
        item[0].hi = hi[0].lo;
      }
      set.insert(set.end(), item.begin(), item.end());
    }
    ++pos_;
    if (negated) set = complement(set);
    // [^\d] must not admit a non-ASCII character Python's Unicode \d holds.
    if (negated && unicode_class_) std::erase_if(set, [](const CharRange& r) { return r.lo >= 0x80; });
    for (CharRange& r : set) r.hi = negated && unicode_class_ ? std::min<char32_t>(r.hi, 0x7F) : r.hi;
    return set_expr(set);
  }

  Result<std::string> parse_quantifier(std::string atom) {
    const char32_t c = peek();
    std::string q;
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      q = std::string(1, static_cast<char>(c));
    } else if (c == '{') {
      const size_t start = pos_++;
      std::string body;
      while (!at_end() && peek() != '}') {
        const char32_t d = cps_[pos_++];
        if (!((d >= '0' && d <= '9') || d == ',')) {
          pos_ = start;
          return error("bad repetition");
        }
        body += static_cast<char>(d);
      }
      if (at_end() || body.empty() || body == ",") return error("bad repetition");
      ++pos_;
      if (body.size() > 12) return error("repetition bound too large");
      q = "{" + body + "}";
    } else {
      return atom;
    }
    if (peek() == '?') ++pos_;  // lazy: same language
    if (peek() == '+') return error("possessive quantifiers are not supported");
    return "(" + atom + ")" + q;
  }

  std::string_view char_rule_;
  std::vector<char32_t> cps_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool unicode_class_ = false;  // the class being parsed holds \d, \w or \s
};

}  // namespace

Result<std::string> regex_to_gbnf(std::string_view pattern, std::string_view json_char_rule) {
  return RegexConverter(pattern, json_char_rule).convert();
}

}  // namespace met
