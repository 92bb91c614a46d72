// MET_CHECK and MET_DCHECK: a broken invariant is a bug, so it aborts with a
// message naming the file, line, condition and (optionally) a fmt message.
// MET_DCHECK compiles to nothing in NDEBUG builds but still type-checks.
// Threading: any thread. Tested by tests/core/check_test.cc (death tests).
#pragma once

#include <string>

#include <fmt/format.h>

namespace met::internal {

[[noreturn]] void check_failed(const char* file, int line, const char* condition,
                               const std::string& message);

inline std::string check_message() { return {}; }
template <typename... Args>
std::string check_message(fmt::format_string<Args...> f, Args&&... args) {
  return fmt::format(f, std::forward<Args>(args)...);
}

}  // namespace met::internal

#define MET_CHECK(cond, ...)                                               \
  do {                                                                     \
    if (!(cond)) [[unlikely]] {                                            \
      ::met::internal::check_failed(__FILE__, __LINE__, #cond,             \
                                    ::met::internal::check_message(__VA_ARGS__)); \
    }                                                                      \
  } while (0)

#ifdef NDEBUG
#define MET_DCHECK(cond, ...)   \
  do {                          \
    if (false && (cond)) {      \
    }                           \
  } while (0)
#else
#define MET_DCHECK(cond, ...) MET_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#endif
