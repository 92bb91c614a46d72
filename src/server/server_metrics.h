// ServerMetrics: GET /metrics, Prometheus text under the prefix `met:`
// (vLLM's names), built with prometheus-cpp's core (registry, histograms,
// text serializer; no exposer: the Beast server serves the text).
// Two sources:
// - the engine's counters and load (EngineStatsSnapshot), turned into
//   counter and gauge families at scrape time (engine_metric_families), so the
//   engine thread only bumps relaxed atomics; for a MoE model also
//   met:moe_expert_tokens_total{layer, expert}, the device's expert load;
// - per-request latencies (TTFT, inter-token, end-to-end) and successes by
//   finish reason, observed here in the server as each request's events
//   arrive (RequestTimer). Why the server and not the engine: these are the
//   latencies a client sees (queueing in the inbox included), every request
//   the server admits is timed whatever way it ends, and prometheus-cpp's
//   Histogram::Observe takes a mutex, which must stay off the engine thread's
//   per-token path (DESIGN.md: no lock per token there). Each request's events
//   are observed on its connection's strand, stamped when the strand takes
//   them from the engine's stream.
// Invariants: every family name starts with "met:"; every sample carries the
// label model_name; a dense model has no met:moe_* family.
// Threading: observe_* and render from any thread (prometheus-cpp's metrics
// are thread-safe). Tested by tests/server/server_metrics_test.cc and
// through `met serve` by tests/server/server_endpoints_test.cc and
// tests/server/serve_expert_load_test.cc.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine_stats.h"
#include "engine/engine_view.h"

namespace prometheus {
class Registry;
class Histogram;
class Counter;
template <typename T>
class Family;
struct MetricFamily;
}  // namespace prometheus

namespace met {

class ServerMetrics {
 public:
  explicit ServerMetrics(std::string model_name);
  ~ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  void observe_ttft(double seconds);
  // One inter-token gap per token of a delta: `gap_seconds` split evenly.
  void observe_inter_token(double gap_seconds, size_t num_tokens);
  void observe_e2e(double seconds);
  void count_success(std::string_view finish_reason);
  // A request run with LoRA adapter `adapter` ended: its tokens, in
  // met:lora_requests_total, met:lora_prompt_tokens_total and
  // met:lora_generation_tokens_total{adapter} (as many series as adapters
  // served, at most AdapterRegistry's bound at once).
  void count_adapter(const std::string& adapter, int64_t prompt_tokens, int64_t generation_tokens);

  // The whole exposition: the engine's families, the per-tenant ones
  // (tenant_metrics.h; none when `tenants` is empty), then the server's.
  std::string render(const EngineStatsSnapshot& stats, std::span<const TenantView> tenants = {}) const;

 private:
  void count_success_n(std::string_view finish_reason, double n);

  std::string model_name_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Histogram* ttft_;
  prometheus::Histogram* inter_token_;
  prometheus::Histogram* e2e_;
  prometheus::Family<prometheus::Counter>* success_;
  prometheus::Family<prometheus::Counter>* lora_requests_;
  prometheus::Family<prometheus::Counter>* lora_prompt_tokens_;
  prometheus::Family<prometheus::Counter>* lora_generation_tokens_;
};

// The engine's counters and gauges as Prometheus families.
std::vector<prometheus::MetricFamily> engine_metric_families(const EngineStatsSnapshot& s,
                                                             const std::string& model_name);

}  // namespace met
