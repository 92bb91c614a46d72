// json_span: where a JSON object or array that starts in a text ends, found by
// matching brackets outside strings (no full parse), so a streaming parser can
// tell a complete tool-call body from one still arriving.
// Invariants: pure functions over their arguments.
// Threading: any. Tested by tests/chat/json_span_test.cc.
#pragma once

#include <cstddef>
#include <string_view>

namespace met {

enum class JsonSpanKind : unsigned char {
  kComplete,    // end is one past the closing bracket
  kIncomplete,  // the text ends inside the value
  kNotJson,     // the first non-whitespace byte at `from` opens no object or array
};

struct JsonSpan {
  JsonSpanKind kind;
  size_t end = 0;  // kComplete: one past the value; kNotJson: the offending byte
};

// Scans the object or array starting at the first non-whitespace byte at or
// after `from`.
JsonSpan json_span(std::string_view text, size_t from = 0);

// Index of the first non-whitespace byte at or after `from`, or text.size().
size_t skip_json_space(std::string_view text, size_t from);

}  // namespace met
