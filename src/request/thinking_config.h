// ThinkingConfig: a request's reasoning markers and budgets, as the engine is
// asked for them (scheduler/thinking.h decides with them).
// Threading: plain data. Tested through tests/scheduler/thinking_test.cc.
#pragma once

#include <cstdint>
#include <optional>

#include "core/ids.h"

namespace met {

struct ThinkingConfig {
  TokenId think_start = 0;
  TokenId think_end = 0;
  bool starts_inside = false;
  std::optional<int32_t> budget;              // tokens per thinking; nullopt: unlimited
  std::optional<int32_t> spontaneous_budget;  // for thinking the model opened; nullopt: `budget`
  bool watchdog = true;                       // close thinking that loops
};

}  // namespace met
