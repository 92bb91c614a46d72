// json_object_prefix: how much of a JSON object still arriving can be
// streamed safely: the longest prefix that some closing text (also returned)
// turns into a valid object. Safe points are just after an opening bracket,
// just after a complete value, and anywhere inside a string value (not inside
// a key, an escape or a UTF-8 sequence); a number or literal is complete only
// once a delimiter follows it.
// Invariants: pure; the safe prefix only grows as the text grows, and stops
// growing at the first byte that cannot continue a JSON object.
// Threading: any. Tested by tests/chat/json_prefix_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace met {

struct JsonPrefix {
  size_t safe_end = 0;   // text[0, safe_end) may be streamed
  std::string closing;   // text[0, safe_end) + closing is a valid object ("{}" when safe_end is 0)
};

// REQUIRES: text starts with '{' (nullopt otherwise).
std::optional<JsonPrefix> json_object_prefix(std::string_view text);

}  // namespace met
