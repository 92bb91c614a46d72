// The errors a template can fail with, named after the Python exceptions
// Jinja2 raises so a message reads the same as Hugging Face's: a
// "TemplateSyntaxError: … (line L, column C)" from the parser, and at render
// time "UndefinedError: …", "TypeError: …", "ValueError: …",
// "LimitError: …" (a render limit, kOutOfRange) or "TemplateError: <msg>" from
// the template's own raise_exception(msg). Runtime errors get the location of
// the innermost expression that failed appended once.
// Threading: plain functions. Tested by tests/chat/errors_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

inline constexpr std::string_view kTemplateErrorPrefix = "TemplateError: ";

struct SourceLoc {
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, in bytes
};

template <typename... Args>
Status syntax_error(SourceLoc at, fmt::format_string<Args...> f, Args&&... args) {
  return invalid_argument("TemplateSyntaxError: {} (line {}, column {})",
                          fmt::format(f, std::forward<Args>(args)...), at.line, at.column);
}
template <typename... Args>
Status type_error(fmt::format_string<Args...> f, Args&&... args) {
  return invalid_argument("TypeError: {}", fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status value_error(fmt::format_string<Args...> f, Args&&... args) {
  return invalid_argument("ValueError: {}", fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status limit_error(fmt::format_string<Args...> f, Args&&... args) {
  return out_of_range("LimitError: {}", fmt::format(f, std::forward<Args>(args)...));
}
// raise_exception(msg): the message is the template author's, unchanged.
inline Status template_error(std::string_view message) {
  return invalid_argument("{}{}", kTemplateErrorPrefix, message);
}
inline bool is_template_error(const Status& s) {
  return !s.ok() && std::string_view(s.message()).starts_with(kTemplateErrorPrefix);
}
// Jinja2's UndefinedError for an illegal use of `undefined`.
Status undefined_error(const Value& undefined);
// Appends " (line L, column C)" unless `s` is a TemplateError.
Status located(const Status& s, SourceLoc at);

}  // namespace met::jinja
