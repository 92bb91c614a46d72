// met's version and the line `met --version` prints (version, the kernel tier
// selected for this CPU, and the CPU features seen).
// Threading: any. Tested by tests/cli/version_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace met {

std::string_view met_version();
std::string version_line();

}  // namespace met
