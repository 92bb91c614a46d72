// The one place a failed invariant ends the process. Tested by tests/core/check_test.cc.
#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace met::internal {

void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "met: CHECK failed at %s:%d: %s%s%s\n", file, line, condition,
               message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace met::internal
