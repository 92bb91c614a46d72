// quote_bytes(): renders untrusted bytes (a key or tensor name from a hostile
// file, a metadata string) as a short, quoted, single-line, printable ASCII
// string for error messages and `met info`.
// Invariants: the result never contains a control byte (so never '\n') and
// is at most about max_bytes * 4 + 8 characters long.
// Threading: pure function. Tested by tests/gguf/gguf_value_test.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace met {

// "'abc'" by default; bytes outside printable ASCII become \n, \t, \\, \xNN;
// past max_bytes input bytes the text is cut and "..." is appended.
std::string quote_bytes(std::string_view text, size_t max_bytes = 64, char quote = '\'');

}  // namespace met
