// Logging: spdlog under met's names, to stderr, one line per event. Levels are
// set once at start by apps/ (`--log-level`). Threading: spdlog is thread-safe.
// Tested by use; the format is checked in tests/core/log_test.cc.
#pragma once

#include <string_view>

#include <spdlog/spdlog.h>

namespace met {

// Installs met's stderr logger ("met: [level] message") at `level`
// ("trace".."off"). Returns false for an unknown level name.
bool init_logging(std::string_view level);

}  // namespace met

#define MET_LOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)
#define MET_LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define MET_LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define MET_LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
