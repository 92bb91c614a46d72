// quote_bytes(): escaping of untrusted bytes for one-line messages.
// Invariants: see quote_bytes.h. Threading: pure function.
// Tested by tests/gguf/gguf_value_test.cc.
#include "gguf/quote_bytes.h"

#include <fmt/format.h>

namespace met {

std::string quote_bytes(std::string_view text, size_t max_bytes, char quote) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 2);
  out.push_back(quote);
  const size_t num_shown = std::min(text.size(), max_bytes);
  for (size_t i = 0; i < num_shown; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte == '\\' || byte == static_cast<unsigned char>(quote)) {
      out.push_back('\\');
      out.push_back(static_cast<char>(byte));
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out.push_back(static_cast<char>(byte));
    }
  }
  out.push_back(quote);
  if (num_shown < text.size()) out += "...";
  return out;
}

}  // namespace met
