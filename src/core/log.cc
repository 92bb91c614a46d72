// spdlog set-up. Tested by tests/core/log_test.cc.
#include "core/log.h"

#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace met {

bool init_logging(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  auto logger = spdlog::stderr_color_mt("met");
  logger->set_pattern("met: [%l] %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  return true;
}

}  // namespace met
