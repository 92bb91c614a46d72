// json_span: see json_span.h.
// Tested by tests/chat/json_span_test.cc.
#include "chat/output/json_span.h"

namespace met {

size_t skip_json_space(std::string_view text, size_t from) {
  while (from < text.size() &&
         (text[from] == ' ' || text[from] == '\n' || text[from] == '\r' || text[from] == '\t')) {
    ++from;
  }
  return from;
}

JsonSpan json_span(std::string_view text, size_t from) {
  size_t i = skip_json_space(text, from);
  if (i == text.size()) return {JsonSpanKind::kIncomplete, i};
  if (text[i] != '{' && text[i] != '[') return {JsonSpanKind::kNotJson, i};
  size_t depth = 0;
  bool in_string = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped byte cannot close the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return {JsonSpanKind::kComplete, i + 1};
    }
  }
  return {JsonSpanKind::kIncomplete, text.size()};
}

}  // namespace met
