// Snapshot: one answer of GET /v1/requests as plain values (the engine's
// counters, each request in flight or recently finished with its timeline,
// each tenant's totals), and parse_snapshot(), which builds it from the JSON.
// Invariants: fields the server does not send read as 0, "" or nullopt;
// unknown fields are ignored; a body that is not the expected object is an
// error naming what is wrong, never a crash.
// Threading: plain values; parse_snapshot is pure.
// Tested by tests/top/snapshot_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace met::top {

struct EngineCounters {
  int64_t running = 0;
  int64_t waiting = 0;
  int64_t swapped = 0;
  int64_t kv_blocks_in_use = 0;
  int64_t kv_blocks_total = 0;
  // Cumulative since the server started.
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_query_tokens = 0;
  int64_t cache_hit_tokens = 0;
  int64_t steps = 0;
  double device_busy_ms = 0;
  int64_t uptime_ms = 0;
};

struct TimelineEvent {
  std::string event;  // queued, admitted, first_token, preempted, resumed, finished, failed, ...
  int64_t ms = 0;     // Unix epoch
  std::string detail;  // "cached 64", "swap", "stop", an error: what the event carries besides its time
};

struct RequestRow {
  std::string id;
  std::string tenant;  // "" means none
  std::string adapter;
  std::string state;  // waiting, prefill, running, swapped, preempted, finished, failed
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t output_tokens = 0;
  int64_t preemptions = 0;
  int64_t kv_blocks = 0;
  std::optional<int64_t> queued_ms;  // Unix epoch milliseconds, all four
  std::optional<int64_t> admitted_ms;
  std::optional<int64_t> first_token_ms;
  std::optional<int64_t> finished_ms;
  std::string finish_reason;  // or the error, for a failed request
  std::vector<TimelineEvent> timeline;
};

struct TenantRow {
  std::string tenant;
  int64_t requests = 0;
  int64_t running = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_query_tokens = 0;
  int64_t cache_hit_tokens = 0;
  int64_t kv_blocks = 0;
};

struct Snapshot {
  int64_t now_ms = 0;  // the server's clock, Unix epoch
  EngineCounters engine;
  std::vector<RequestRow> requests;
  std::vector<TenantRow> tenants;
};

Result<Snapshot> parse_snapshot(std::string_view body);

}  // namespace met::top
