// Version line. Tested by tests/cli/version_test.cc.
#include "cli/version.h"

#include <fmt/format.h>

#include "core/cpu_features.h"
#include "met_version_string.h"

namespace met {

std::string_view met_version() { return MET_VERSION_STRING; }

std::string version_line() {
  return fmt::format("met {} (isa: {}; cpu: {})", met_version(), isa_name(selected_isa()),
                     cpu_feature_summary(detect_cpu_features()));
}

}  // namespace met
