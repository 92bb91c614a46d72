// EngineRequest: what a client (HTTP handler, `met run`, `met bench`) asks the
// engine for, already validated for form and tokenized. The scheduler checks
// what only it can (the prompt against the context and the KV pool).
// Threading: plain data, moved from the client thread through the inbox.
// Tested through tests/scheduler/scheduler_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "sampling/sampler.h"

namespace met {

struct EngineRequest {
  std::vector<TokenId> prompt;
  SamplingParams sampling;
  int32_t max_tokens = 256;            // output budget
  int32_t min_tokens = 0;              // EOS and stop ids are suppressed until reached
  std::vector<TokenId> stop_token_ids; // end the output like EOS
  std::vector<std::string> stop_strings;
  bool ignore_eos = false;
  std::optional<Duration> timeout;     // from submission; "timeout" when it passes
  std::string cache_salt;              // prefix-cache hits stay within one salt
  uint64_t adapter_id = 0;             // 0: the base model
};

}  // namespace met
