// Where ../shared lives for tests, and a skip with a clear message when it is
// absent (a user's fresh machine has no ../shared; CI and builders do).
// Threading: any. Used by every test that reads shared models or vectors.
#pragma once

#include <optional>
#include <string>

namespace met::testing {

// The shared/ folder beside the source tree (MET_SHARED_DIR overrides it), or
// nullopt when it does not exist.
std::optional<std::string> shared_dir();
// shared_dir() + "/" + relative, or nullopt.
std::optional<std::string> shared_path(const std::string& relative);

}  // namespace met::testing

// Binds `var` to the path of `relative` under shared/, or skips the test saying
// which file was missing.
#define MET_REQUIRE_SHARED(var, relative)                                         \
  std::string var;                                                                \
  do {                                                                            \
    auto met_shared_path_ = ::met::testing::shared_path(relative);                \
    if (!met_shared_path_) {                                                      \
      GTEST_SKIP() << "../shared/" << (relative)                                  \
                   << " is absent (set MET_SHARED_DIR to the shared/ folder)";    \
    }                                                                             \
    var = *met_shared_path_;                                                      \
  } while (0)
