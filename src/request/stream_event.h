// The events of one request's response stream, engine to client: deltas
// (token ids and text), then exactly one terminal event (a finish frame or an
// error frame). Plain data.
// Threading: moved from the engine thread to the client's. Tested through
// tests/request/response_stream_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "sampling/logprobs.h"

namespace met {

struct DeltaEvent {
  std::vector<TokenId> tokens;  // sampled ids this delta covers (EOS included)
  std::string text;             // valid UTF-8; may be empty while text is held back
  // With EngineRequest::logprobs: one entry per token whose text is part of
  // the output (EOS and stop ids have none), in order.
  std::vector<TokenLogprob> logprobs = {};
  // With EngineRequest::prompt_logprobs, on the first delta only: entries for
  // prompt tokens 1..n-1 (token 0 has none), in order.
  std::vector<TokenLogprob> prompt_logprobs = {};
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache
  int32_t reasoning_tokens = 0;      // output tokens inside thinking (markers excluded)
  // Predicted Outputs (EngineRequest::prediction; spec/prediction.h).
  int32_t accepted_prediction_tokens = 0;
  int32_t rejected_prediction_tokens = 0;
};

struct FinishEvent {
  std::string finish_reason;       // "stop", "length", "timeout", "tool_calls"
  std::optional<std::string> guard_stop;  // the guard that cut the output, if any
  Usage usage;
  double time_to_first_token_ms = 0;
  double decode_time_ms = 0;
  // "stop" because of a stop string: its index in EngineRequest::stop_strings.
  std::optional<size_t> stop_string_index = std::nullopt;
  // An embedding request's (EngineRequest::embed) pooled hidden state, not
  // normalised; empty for generation.
  std::vector<float> embedding = {};
};

struct ErrorEvent {
  std::string message;
  // Set when the request's own input made it fail mid-generation (a grammar
  // that cannot be followed): the field at fault, answered as a 400 naming
  // it rather than a server error.
  std::optional<std::string> param = std::nullopt;
};

using StreamEvent = std::variant<DeltaEvent, FinishEvent, ErrorEvent>;

inline bool is_terminal(const StreamEvent& e) { return !std::holds_alternative<DeltaEvent>(e); }

// About how many bytes `e` becomes on the wire (JSON or SSE): its text, a
// fixed cost per token and per logprob alternative, and a frame's overhead.
// What the unsent-bytes bound (StreamLimits) counts.
size_t approx_wire_bytes(const StreamEvent& e);

}  // namespace met
