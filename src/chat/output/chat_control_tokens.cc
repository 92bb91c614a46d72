// chat_control_tokens: see chat_control_tokens.h.
// Tested by tests/chat/chat_control_tokens_test.cc.
#include "chat/output/chat_control_tokens.h"

#include <algorithm>
#include <optional>

#include "chat/output/format_detection.h"
#include "chat/output/format_markers.h"

namespace met {
namespace {

constexpr size_t kMaxTokenBytes = 64;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

// The length of a literal special token starting at `pos` that opens with
// `open`, closes with `close` and has inner bytes allowed by `inner_ok`.
template <typename InnerOk>
std::optional<size_t> literal_at(std::string_view text, size_t pos, std::string_view open, std::string_view close,
                                 InnerOk inner_ok) {
  if (text.compare(pos, open.size(), open) != 0) return std::nullopt;
  const size_t end = text.find(close, pos + open.size());
  if (end == std::string_view::npos || end == pos + open.size()) return std::nullopt;
  const size_t length = end + close.size() - pos;
  if (length > kMaxTokenBytes) return std::nullopt;
  const std::string_view inner = text.substr(pos + open.size(), end - pos - open.size());
  if (!std::all_of(inner.begin(), inner.end(), inner_ok)) return std::nullopt;
  return length;
}

std::optional<size_t> special_literal_at(std::string_view text, size_t pos) {
  const auto upper = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  const auto full_width_inner = [](char c) { return c != '<' && c != '>' && c != '\'' && c != '"' && c != '\n'; };
  if (auto n = literal_at(text, pos, "<|", "|>", is_name_char)) return n;
  if (auto n = literal_at(text, pos, "<｜", "｜>", full_width_inner)) return n;
  if (auto n = literal_at(text, pos, "[/", "]", upper)) return n;
  if (auto n = literal_at(text, pos, "[", "]", upper); n && *n >= 5) return n;
  if (auto n = literal_at(text, pos, "<seed:", ">", is_name_char)) return n;
  if (auto n = literal_at(text, pos, "</seed:", ">", is_name_char)) return n;
  return std::nullopt;
}

void add_unique(std::vector<std::string>& tokens, std::string token) {
  if (std::find(tokens.begin(), tokens.end(), token) == tokens.end()) tokens.push_back(std::move(token));
}

}  // namespace

std::vector<std::string> chat_control_tokens(std::string_view template_source) {
  std::vector<std::string> tokens = format_markers(detect_chat_format(template_source)).special_strings;
  for (size_t pos = 0; pos < template_source.size(); ++pos) {
    const char c = template_source[pos];
    if (c != '<' && c != '[') continue;
    if (const std::optional<size_t> length = special_literal_at(template_source, pos)) {
      add_unique(tokens, std::string(template_source.substr(pos, *length)));
      pos += *length - 1;
    }
  }
  return tokens;
}

}  // namespace met
