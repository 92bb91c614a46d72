// json_object_prefix: see json_prefix.h. A single pass with a bracket stack
// and what the grammar expects next.
// Tested by tests/chat/json_prefix_test.cc.
#include "chat/output/json_prefix.h"

#include <vector>

namespace met {
namespace {

enum class Expect { kValue, kKey, kColon, kCommaOrClose };

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_delimiter(char c) { return is_space(c) || c == ',' || c == '}' || c == ']'; }
bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

bool is_json_number(std::string_view t) {
  size_t i = t.starts_with('-') ? 1 : 0;
  const auto digits = [&t, &i] {
    const size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i - from;
  };
  const size_t first = i;
  const size_t num_int = digits();
  if (num_int == 0 || (num_int > 1 && t[first] == '0')) return false;
  if (i < t.size() && t[i] == '.' && (++i, digits() == 0)) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == t.size();
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  JsonPrefix run() {
    while (pos_ < text_.size() && step()) {
    }
    return best_;
  }

 private:
  // Handles the byte at pos_; false when the text cannot continue or the object is complete.
  bool step() {
    const char c = text_[pos_];
    if (is_space(c)) {
      ++pos_;
      return true;
    }
    switch (expect_) {
      case Expect::kColon:
        if (c != ':') return false;
        expect_ = Expect::kValue;
        ++pos_;
        return true;
      case Expect::kCommaOrClose:
        if (c != ',') return close(c);
        expect_ = stack_.back() == '{' ? Expect::kKey : Expect::kValue;
        just_opened_ = false;
        ++pos_;
        return true;
      case Expect::kKey:
        if (c == '"') return string(/*is_key=*/true);
        return just_opened_ && close(c);
      case Expect::kValue: return value(c);
    }
    return false;
  }

  bool value(char c) {
    if (c == '{' || c == '[') {
      stack_.push_back(c);
      expect_ = c == '{' ? Expect::kKey : Expect::kValue;
      just_opened_ = true;
      mark_safe(++pos_, "");
      return true;
    }
    if (stack_.empty()) return false;  // the top level must be an object
    if (c == '"') return string(/*is_key=*/false);
    if (c == ']' && just_opened_ && stack_.back() == '[') return close(c);
    size_t end = pos_;
    while (end < text_.size() && !is_delimiter(text_[end])) ++end;
    if (end == text_.size()) return false;  // a number or literal may still grow
    const std::string_view token = text_.substr(pos_, end - pos_);
    if (token != "true" && token != "false" && token != "null" && !is_json_number(token)) return false;
    pos_ = end;
    return value_done();
  }

  bool string(bool is_key) {
    for (++pos_; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (!is_key && !is_continuation(c)) mark_safe(pos_, "\"");
      if (c == '"') {
        ++pos_;
        if (!is_key) return value_done();
        expect_ = Expect::kColon;
        return true;
      }
      if (c == '\\') pos_ += text_.compare(pos_ + 1, 1, "u") == 0 ? 5 : 1;
    }
    // The text ends inside the string: its end is safe unless it cuts an
    // escape (pos_ went past the end) or a UTF-8 sequence.
    if (!is_key && pos_ == text_.size() && ends_with_whole_code_point()) mark_safe(pos_, "\"");
    return false;
  }

  bool ends_with_whole_code_point() const {
    size_t lead = text_.size() - 1;
    while (lead > 0 && is_continuation(text_[lead])) --lead;
    const auto byte = static_cast<unsigned char>(text_[lead]);
    const size_t need = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
    return text_.size() - lead == need;
  }

  bool close(char c) {
    if (stack_.empty() || c != (stack_.back() == '{' ? '}' : ']')) return false;
    stack_.pop_back();
    ++pos_;
    return value_done();
  }

  bool value_done() {
    just_opened_ = false;
    expect_ = Expect::kCommaOrClose;
    mark_safe(pos_, "");
    return !stack_.empty();
  }

  void mark_safe(size_t end, std::string_view in_string) {
    best_.safe_end = end;
    best_.closing = std::string(in_string);
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) best_.closing += *it == '{' ? '}' : ']';
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<char> stack_;
  Expect expect_ = Expect::kValue;
  bool just_opened_ = false;
  JsonPrefix best_{0, "{}"};
};

}  // namespace

std::optional<JsonPrefix> json_object_prefix(std::string_view text) {
  if (!text.starts_with('{')) return std::nullopt;
  return Scanner(text).run();
}

}  // namespace met
