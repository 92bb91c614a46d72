// ServerMetrics. Tested by tests/server/server_metrics_test.cc.
#include "server/server_metrics.h"

#include "server/tenant_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <sstream>
#include <utility>

namespace met {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// vLLM's buckets, with finer ones at the low end for fast CPU models.
const prometheus::Histogram::BucketBoundaries kTtftBuckets = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,   0.75,  1.0,
    2.5,   5.0,   7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
const prometheus::Histogram::BucketBoundaries kInterTokenBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2, 0.3,
    0.4,    0.5,   0.75,   1.0,   2.5,  5.0,   7.5,  10.0,  20.0, 40.0, 80.0};
const prometheus::Histogram::BucketBoundaries kE2eBuckets = {
    0.01, 0.025, 0.05, 0.1,  0.3,  0.5,  0.8,  1.0,   1.5,   2.0,   2.5,    5.0,   10.0,
    15.0, 20.0,  30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

MetricFamily family(std::string name, std::string help, MetricType type, double value,
                    const std::string& model_name) {
  ClientMetric m;
  m.label.push_back({"model_name", model_name});
  switch (type) {
    case MetricType::Counter: m.counter.value = value; break;
    case MetricType::Gauge: m.gauge.value = value; break;
    case MetricType::Summary:
    case MetricType::Untyped:
    case MetricType::Histogram: m.untyped.value = value; break;
  }
  return MetricFamily{std::move(name), std::move(help), type, {std::move(m)}};
}

prometheus::Histogram& histogram(prometheus::Registry& r, const char* name, const char* help,
                                 const std::string& model_name, const prometheus::Histogram::BucketBoundaries& b) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add({{"model_name", model_name}}, b);
}

// One sample per layer and expert: met:moe_expert_tokens_total{layer, expert}.
MetricFamily expert_tokens_family(const EngineStatsSnapshot& s, const std::string& model_name) {
  MetricFamily f{"met:moe_expert_tokens_total",
                 "(token, choice) pairs routed to each expert of each MoE layer, as the forward ran them (prompt and "
                 "generated tokens, k choices each).",
                 MetricType::Counter,
                 {}};
  const size_t n = static_cast<size_t>(s.num_experts);
  f.metric.reserve(s.expert_tokens.size());
  for (size_t i = 0; i < s.expert_tokens.size(); ++i) {
    ClientMetric m;
    m.label = {{"model_name", model_name}, {"layer", std::to_string(i / n)}, {"expert", std::to_string(i % n)}};
    m.counter.value = static_cast<double>(s.expert_tokens[i]);
    f.metric.push_back(std::move(m));
  }
  return f;
}

}  // namespace

std::vector<MetricFamily> engine_metric_families(const EngineStatsSnapshot& s, const std::string& model_name) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  const double usage = s.blocks_total > 0 ? d(s.blocks_in_use) / d(s.blocks_total) : 0.0;
  constexpr MetricType kGauge = MetricType::Gauge;
  constexpr MetricType kCounter = MetricType::Counter;
  std::vector<MetricFamily> families = {
      family("met:num_requests_running", "Requests running on the engine (in a batch).", kGauge, d(s.num_running),
             model_name),
      family("met:num_requests_waiting", "Requests waiting to be admitted (preempted ones included).", kGauge,
             d(s.num_waiting), model_name),
      family("met:num_requests_swapped", "Requests swapped out to the spill store.", kGauge, d(s.num_swapped),
             model_name),
      family("met:kv_cache_blocks_used", "KV cache blocks in use.", kGauge, d(s.blocks_in_use), model_name),
      family("met:kv_cache_blocks_total", "KV cache blocks in the pool.", kGauge, d(s.blocks_total), model_name),
      family("met:kv_cache_usage_perc", "Fraction of KV cache blocks in use (1 = full).", kGauge, usage, model_name),
      family("met:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", kCounter,
             d(s.cache_query_tokens), model_name),
      family("met:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", kCounter,
             d(s.cache_hit_tokens), model_name),
      family("met:num_preemptions_total", "Sequences preempted (swapped out or dropped for recompute).", kCounter,
             d(s.preemptions_swap + s.preemptions_recompute), model_name),
      family("met:prompt_tokens_total", "Prompt tokens of finished requests.", kCounter, d(s.prompt_tokens),
             model_name),
      family("met:generation_tokens_total", "Tokens generated for finished requests.", kCounter, d(s.output_tokens),
             model_name),
      family("met:request_failure_total", "Requests ended by an error frame (cancelled, failed, shut down).",
             kCounter, d(s.requests_failed), model_name),
      family("met:engine_steps_total", "Forward steps the engine completed.", kCounter, d(s.steps), model_name),
      family("met:spec_decode_num_draft_tokens_total", "Draft tokens verify steps checked (speculative decoding).",
             kCounter, d(s.spec_drafted), model_name),
      family("met:spec_decode_num_accepted_tokens_total", "Draft tokens committed in place after verification.",
             kCounter, d(s.spec_accepted), model_name),
      family("met:spec_decode_num_withheld_tokens_total",
             "Draft tokens proposed and not verified: the draft budget judged a row worth less (the batch is "
             "compute-bound or the sequence's drafts are mostly rejected).",
             kCounter, d(s.spec_withheld), model_name),
      family("met:slow_clients_cut_total",
             "Requests cancelled because their client left more than --max-pending-bytes unread for "
             "--slow-client-timeout.",
             kCounter, d(s.slow_clients_cut), model_name),
  };
  if (s.num_experts > 0 && !s.expert_tokens.empty()) families.push_back(expert_tokens_family(s, model_name));
  if (s.state_slots_total > 0) {  // models with recurrent layers
    families.push_back(family("met:recurrent_state_slots_used", "Recurrent-state slots held by running sequences.",
                              kGauge, d(s.state_slots_in_use), model_name));
    families.push_back(family("met:recurrent_state_slots_total", "Recurrent-state slots in the pool.", kGauge,
                              d(s.state_slots_total), model_name));
    families.push_back(family("met:recurrent_state_snapshots_cached",
                              "Recurrent-state snapshots the hybrid prefix cache keeps.", kGauge,
                              d(s.state_snapshots_cached), model_name));
    families.push_back(family("met:recurrent_state_snapshots_total",
                              "Recurrent-state snapshot slots of the hybrid prefix cache.", kGauge,
                              d(s.state_snapshots_total), model_name));
  }
  return families;
}

ServerMetrics::ServerMetrics(std::string model_name)
    : model_name_(std::move(model_name)), registry_(std::make_shared<prometheus::Registry>()) {
  ttft_ = &histogram(*registry_, "met:time_to_first_token_seconds",
                     "Seconds from a request's arrival to its first generated token.", model_name_, kTtftBuckets);
  inter_token_ = &histogram(*registry_, "met:inter_token_latency_seconds",
                            "Seconds between consecutive generated tokens of a request.", model_name_,
                            kInterTokenBuckets);
  e2e_ = &histogram(*registry_, "met:e2e_request_latency_seconds",
                    "Seconds from a request's arrival to its last event.", model_name_, kE2eBuckets);
  success_ = &prometheus::BuildCounter()
                  .Name("met:request_success_total")
                  .Help("Requests that finished, by finish reason.")
                  .Register(*registry_);
  lora_requests_ = &prometheus::BuildCounter()
                        .Name("met:lora_requests_total")
                        .Help("Requests that ended, by the LoRA adapter they ran with.")
                        .Register(*registry_);
  lora_prompt_tokens_ = &prometheus::BuildCounter()
                             .Name("met:lora_prompt_tokens_total")
                             .Help("Prompt tokens of requests that ran a LoRA adapter, by adapter.")
                             .Register(*registry_);
  lora_generation_tokens_ = &prometheus::BuildCounter()
                                 .Name("met:lora_generation_tokens_total")
                                 .Help("Tokens generated with a LoRA adapter, by adapter.")
                                 .Register(*registry_);
  // Each finish reason's series exists from the start (at 0), as in vLLM.
  for (const char* reason : {"stop", "length", "timeout", "tool_calls"}) count_success_n(reason, 0);
}

ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::observe_ttft(double seconds) { ttft_->Observe(seconds); }

void ServerMetrics::observe_inter_token(double gap_seconds, size_t num_tokens) {
  if (num_tokens == 0) return;
  const double each = gap_seconds / static_cast<double>(num_tokens);
  for (size_t i = 0; i < num_tokens; ++i) inter_token_->Observe(each);
}

void ServerMetrics::observe_e2e(double seconds) { e2e_->Observe(seconds); }

void ServerMetrics::count_success(std::string_view finish_reason) { count_success_n(finish_reason, 1); }

void ServerMetrics::count_success_n(std::string_view finish_reason, double n) {
  success_->Add({{"model_name", model_name_}, {"finished_reason", std::string(finish_reason)}}).Increment(n);
}

void ServerMetrics::count_adapter(const std::string& adapter, int64_t prompt_tokens, int64_t generation_tokens) {
  const std::map<std::string, std::string> labels = {{"model_name", model_name_}, {"adapter", adapter}};
  lora_requests_->Add(labels).Increment();
  lora_prompt_tokens_->Add(labels).Increment(static_cast<double>(prompt_tokens));
  lora_generation_tokens_->Add(labels).Increment(static_cast<double>(generation_tokens));
}

std::string ServerMetrics::render(const EngineStatsSnapshot& stats, std::span<const TenantView> tenants) const {
  std::vector<MetricFamily> families = engine_metric_families(stats, model_name_);
  for (MetricFamily& f : tenant_metric_families(tenants, model_name_)) families.push_back(std::move(f));
  for (MetricFamily& f : registry_->Collect()) families.push_back(std::move(f));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace met
