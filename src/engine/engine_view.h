// EngineView: what an operator sees of the engine at one instant (GET
// /v1/requests, `met top`): every request in flight and the last ones that
// ended, each with its state, token counts, blocks held and timeline, and the
// per-tenant totals. TelemetryRecord: one entry of the telemetry stream (GET
// /v1/telemetry): a settled step or a request's lifecycle event.
// Times are Unix epoch milliseconds of the engine's clock (engine_telemetry.h
// maps its steady clock onto the wall clock once, at start).
// Threading: plain values, copied out of the engine thread.
// Tested by tests/engine/request_board_test.cc and tests/engine/engine_telemetry_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ids.h"

namespace met {

enum class RequestState : uint8_t {
  kWaiting,    // queued, not admitted yet
  kPrefill,    // admitted; its prompt is being computed
  kRunning,    // decoding
  kSwapped,    // preempted to a spill image
  kPreempted,  // preempted for recompute: waiting to be prefilled again
  kFinished,   // ended with a finish frame (recent requests only)
  kFailed,     // ended with an error frame (recent requests only)
};
const char* request_state_name(RequestState s);

// One step of a request's timeline. `event` is request_event_name's
// ("queued", "admitted", "first_token", "preempted", "swapped", "resumed",
// "finished", "failed"); `detail` the finish reason or the error.
struct TimelineEntry {
  std::string_view event;  // a static name
  int64_t unix_ms = 0;
  int32_t cached_tokens = 0;  // "admitted": prompt tokens the prefix cache served
  std::string detail;
};

struct RequestView {
  RequestId id;
  std::string tenant;   // "": none
  std::string adapter;  // "": the base model
  RequestState state = RequestState::kWaiting;
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;
  int32_t output_tokens = 0;
  int32_t preemptions = 0;
  int32_t kv_blocks = 0;  // blocks it holds now (0 once ended)
  int64_t queued_ms = 0;
  std::optional<int64_t> admitted_ms;
  std::optional<int64_t> first_token_ms;
  std::optional<int64_t> finished_ms;
  std::string finish_reason;  // kFinished
  std::string error;          // kFailed
  std::vector<TimelineEntry> timeline;
};

// Totals of one tenant since the engine started ("running" and "kv_blocks"
// are now).
struct TenantView {
  std::string tenant;
  int64_t requests = 0;  // queued
  int64_t running = 0;   // in flight (waiting included)
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_query_tokens = 0;
  int64_t cache_hit_tokens = 0;
  int64_t kv_blocks = 0;
};

struct EngineView {
  int64_t now_ms = 0;
  std::vector<RequestView> requests;  // in flight by id, then the recent ended ones, latest last
  std::vector<TenantView> tenants;    // by requests, most first
};

// A settled step and what happened since the one before it.
struct StepTelemetry {
  int32_t rows = 0;
  int32_t prefill_tokens = 0;
  int32_t decode_tokens = 0;
  int32_t kv_blocks_in_use = 0;
  int64_t device_busy_us = 0;
  // The part of the time since the previous step (within one busy spell) in
  // which the device ran nothing: host work the pipeline did not hide.
  int64_t host_unhidden_us = 0;
  int32_t preemptions = 0;
  int32_t spills = 0;
  int64_t spill_bytes = 0;
  double spill_ms = 0;
  int32_t restores = 0;
  int64_t restore_bytes = 0;
  double restore_ms = 0;
};

struct RequestTelemetry {
  std::string_view event;  // request_event_name's
  RequestId id;
  std::string tenant;
  std::string adapter;
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;
  int32_t output_tokens = 0;
  std::string finish_reason;  // "finished"
  std::string guard;          // "finished" by a guard
  std::string error;          // "failed"
};

struct TelemetryRecord {
  uint64_t seq = 0;  // 1, 2, ... per engine; a gap means records were dropped
  int64_t unix_ms = 0;
  std::variant<StepTelemetry, RequestTelemetry> what;
};

}  // namespace met
