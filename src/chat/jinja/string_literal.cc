// String literal decoding. Tested by tests/chat/lexer_test.cc.
#include "chat/jinja/string_literal.h"

#include "chat/jinja/utf8.h"

namespace met::jinja {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads exactly `n` hex digits at body[i]; advances i on success.
bool read_hex(std::string_view body, size_t& i, size_t n, char32_t& cp) {
  if (i + n > body.size()) return false;
  char32_t v = 0;
  for (size_t k = 0; k < n; ++k) {
    const int h = hex_value(body[i + k]);
    if (h < 0) return false;
    v = v * 16 + static_cast<char32_t>(h);
  }
  if (v > 0x10FFFF) return false;
  cp = v;
  i += n;
  return true;
}

char simple_escape(char c) {
  switch (c) {
    case '\\': return '\\';
    case '\'': return '\'';
    case '"': return '"';
    case 'a': return '\a';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    default: return '\0';
  }
}

// Decodes the escape whose letter is body[i] (just past the backslash);
// advances i past it.
void decode_escape(std::string_view body, size_t& i, std::string& out) {
  const char c = body[i++];
  if (c == '\n') return;  // line continuation
  if (const char e = simple_escape(c); e != '\0') {
    out += e;
    return;
  }
  if (c >= '0' && c <= '7') {
    char32_t v = static_cast<char32_t>(c - '0');
    for (int k = 0; k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k) {
      v = v * 8 + static_cast<char32_t>(body[i++] - '0');
    }
    append_utf8(out, v);
    return;
  }
  const size_t width = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  char32_t cp = 0;
  if (width > 0 && read_hex(body, i, width, cp)) {
    append_utf8(out, cp);
    return;
  }
  out += '\\';
  out += c;
}

}  // namespace

std::string decode_string_literal(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    if (body[i] == '\\' && i + 1 < body.size()) {
      ++i;
      decode_escape(body, i, out);
    } else {
      out += body[i++];
    }
  }
  return out;
}

}  // namespace met::jinja
