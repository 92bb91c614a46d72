// NamedFn and find_named: the jinja builtins' lookup tables (filters, tests,
// string methods, globals): a constant array of {name, function} rows, found
// by exact name. Threading: constant data. Tested through the filter, test
// and method tests in tests/chat/.
#pragma once

#include <cstddef>
#include <string_view>

namespace met::jinja {

template <class Fn>
struct NamedFn {
  std::string_view name;
  Fn fn;
};

// The row of `table` called `name`, or nullptr.
template <class Fn, size_t N>
Fn find_named(const NamedFn<Fn> (&table)[N], std::string_view name) {
  for (const NamedFn<Fn>& row : table) {
    if (row.name == name) return row.fn;
  }
  return nullptr;
}

}  // namespace met::jinja
