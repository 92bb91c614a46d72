// ThinkingConfig: a request's reasoning markers and budgets, as the engine is
// asked for them (scheduler/thinking.h decides with them).
// Threading: plain data. Tested through tests/scheduler/thinking_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"

namespace met {

struct ThinkingConfig {
  TokenId think_start = 0;
  TokenId think_end = 0;
  bool starts_inside = false;
  std::optional<int32_t> budget;              // tokens per thinking; nullopt: unlimited
  std::optional<int32_t> spontaneous_budget;  // for thinking the model opened; nullopt: `budget`
  bool watchdog = true;                       // close thinking that loops
  // Formats whose markers are several tokens (harmony). A non-empty
  // start_sequence opens thinking when the output ends with all of it
  // (think_start alone then opens nothing). A non-empty end_sequence starts
  // with think_end and is written whole when thinking ends, its tokens after
  // the first forced: all of them when a budget or the watchdog ends it, the
  // rest after a think_end the model sampled only with
  // end_sequence_after_model_end (the header of an answer a grammar or a
  // forced tool call holds). Thinking lasts until its last token.
  std::vector<TokenId> start_sequence;
  std::vector<TokenId> end_sequence;
  bool end_sequence_after_model_end = false;
};

}  // namespace met
