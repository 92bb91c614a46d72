// Tests for ServerMetrics and RequestTimer: the exposition parses, every
// family is under met:, engine counters and request latencies show up.
#include "server/server_metrics.h"

#include <gtest/gtest.h>

#include "server/prometheus_text.h"
#include "server/request_timer.h"

namespace met {
namespace {

using std::chrono::milliseconds;
using testing::parse_prometheus_text;

TEST(ServerMetrics, TheTextParsesAndEveryFamilyIsUnderTheMetPrefix) {
  ServerMetrics metrics("tiny");
  const auto text = parse_prometheus_text(metrics.render(EngineStatsSnapshot{}));
  ASSERT_EQ(text.error, "");
  ASSERT_FALSE(text.types.empty());
  for (const auto& [name, type] : text.types) EXPECT_EQ(name.rfind("met:", 0), 0u) << name;
  EXPECT_EQ(text.types.at("met:num_requests_running"), "gauge");
  EXPECT_EQ(text.types.at("met:num_requests_waiting"), "gauge");
  EXPECT_EQ(text.types.at("met:kv_cache_blocks_used"), "gauge");
  EXPECT_EQ(text.types.at("met:kv_cache_blocks_total"), "gauge");
  EXPECT_EQ(text.types.at("met:prefix_cache_queries_total"), "counter");
  EXPECT_EQ(text.types.at("met:prefix_cache_hits_total"), "counter");
  EXPECT_EQ(text.types.at("met:num_preemptions_total"), "counter");
  EXPECT_EQ(text.types.at("met:prompt_tokens_total"), "counter");
  EXPECT_EQ(text.types.at("met:generation_tokens_total"), "counter");
  EXPECT_EQ(text.types.at("met:time_to_first_token_seconds"), "histogram");
  EXPECT_EQ(text.types.at("met:inter_token_latency_seconds"), "histogram");
  EXPECT_EQ(text.types.at("met:e2e_request_latency_seconds"), "histogram");
  EXPECT_EQ(text.types.at("met:request_success_total"), "counter");
}

TEST(ServerMetrics, EngineCountersAndLoadAreReportedWithTheModelName) {
  ServerMetrics metrics("tiny");
  EngineStatsSnapshot s;
  s.num_running = 3;
  s.num_waiting = 2;
  s.blocks_in_use = 10;
  s.blocks_total = 40;
  s.cache_query_tokens = 100;
  s.cache_hit_tokens = 32;
  s.preemptions_swap = 1;
  s.preemptions_recompute = 2;
  s.prompt_tokens = 77;
  s.output_tokens = 55;
  const auto text = parse_prometheus_text(metrics.render(s));
  ASSERT_EQ(text.error, "");
  EXPECT_EQ(text.samples.at("met:num_requests_running{model_name=\"tiny\"}"), 3);
  EXPECT_EQ(text.value("met:num_requests_waiting"), 2);
  EXPECT_EQ(text.value("met:kv_cache_blocks_used"), 10);
  EXPECT_EQ(text.value("met:kv_cache_blocks_total"), 40);
  EXPECT_EQ(text.value("met:kv_cache_usage_perc"), 0.25);
  EXPECT_EQ(text.value("met:prefix_cache_queries_total"), 100);
  EXPECT_EQ(text.value("met:prefix_cache_hits_total"), 32);
  EXPECT_EQ(text.value("met:num_preemptions_total"), 3);
  EXPECT_EQ(text.value("met:prompt_tokens_total"), 77);
  EXPECT_EQ(text.value("met:generation_tokens_total"), 55);
}

TEST(ServerMetrics, ARecurrentModelsStateSlotsAreGaugesAndADenseModelHasNone) {
  ServerMetrics metrics("hybrid");
  EngineStatsSnapshot s;
  s.state_slots_in_use = 3;
  s.state_slots_total = 64;
  s.state_snapshots_cached = 5;
  s.state_snapshots_total = 16;
  const auto text = parse_prometheus_text(metrics.render(s));
  ASSERT_EQ(text.error, "");
  EXPECT_EQ(text.types.at("met:recurrent_state_slots_used"), "gauge");
  EXPECT_EQ(text.value("met:recurrent_state_slots_used"), 3);
  EXPECT_EQ(text.value("met:recurrent_state_slots_total"), 64);
  EXPECT_EQ(text.types.at("met:recurrent_state_snapshots_cached"), "gauge");
  EXPECT_EQ(text.value("met:recurrent_state_snapshots_cached"), 5);
  EXPECT_EQ(text.value("met:recurrent_state_snapshots_total"), 16);
  const auto dense = parse_prometheus_text(metrics.render(EngineStatsSnapshot{}));
  EXPECT_EQ(dense.types.count("met:recurrent_state_slots_used"), 0u);
}

TEST(ServerMetrics, AMoeModelsExpertLoadIsOneCounterPerLayerAndExpert) {
  ServerMetrics metrics("moe");
  EngineStatsSnapshot s;
  s.num_experts = 3;
  s.expert_tokens = {4, 0, 2, 1, 5, 0};  // two layers
  const auto text = parse_prometheus_text(metrics.render(s));
  ASSERT_EQ(text.error, "");
  EXPECT_EQ(text.types.at("met:moe_expert_tokens_total"), "counter");
  EXPECT_EQ(text.samples.at("met:moe_expert_tokens_total{model_name=\"moe\",layer=\"0\",expert=\"0\"}"), 4);
  EXPECT_EQ(text.samples.at("met:moe_expert_tokens_total{model_name=\"moe\",layer=\"0\",expert=\"2\"}"), 2);
  EXPECT_EQ(text.samples.at("met:moe_expert_tokens_total{model_name=\"moe\",layer=\"1\",expert=\"1\"}"), 5);
  EXPECT_EQ(text.samples.at("met:moe_expert_tokens_total{model_name=\"moe\",layer=\"1\",expert=\"2\"}"), 0);
  int num_samples = 0;
  for (const auto& [key, v] : text.samples) num_samples += key.rfind("met:moe_expert_tokens_total{", 0) == 0 ? 1 : 0;
  EXPECT_EQ(num_samples, 6);
}

TEST(ServerMetrics, ADenseModelHasNoExpertFamily) {
  ServerMetrics metrics("dense");
  const auto text = parse_prometheus_text(metrics.render(EngineStatsSnapshot{}));
  ASSERT_EQ(text.error, "");
  EXPECT_EQ(text.types.count("met:moe_expert_tokens_total"), 0u);
}

TEST(RequestTimer, ARequestsEventsBecomeTtftInterTokenAndEndToEndObservations) {
  ServerMetrics metrics("tiny");
  FakeClock clock;
  RequestTimer timer(metrics, clock, clock.now());
  clock.advance(milliseconds(30));
  timer.on_event(DeltaEvent{{5}, "a"});
  clock.advance(milliseconds(10));
  timer.on_event(DeltaEvent{{}, ""});  // held-back text: no token, no observation
  timer.on_event(DeltaEvent{{6, 7}, "bc"});
  clock.advance(milliseconds(5));
  FinishEvent finish;
  finish.finish_reason = "length";
  timer.on_event(finish);
  const auto text = parse_prometheus_text(metrics.render(EngineStatsSnapshot{}));
  ASSERT_EQ(text.error, "");
  EXPECT_EQ(text.value("met:time_to_first_token_seconds_count"), 1);
  EXPECT_NEAR(*text.value("met:time_to_first_token_seconds_sum"), 0.030, 1e-9);
  EXPECT_EQ(text.value("met:inter_token_latency_seconds_count"), 2);
  EXPECT_NEAR(*text.value("met:inter_token_latency_seconds_sum"), 0.010, 1e-9);
  EXPECT_EQ(text.value("met:e2e_request_latency_seconds_count"), 1);
  EXPECT_NEAR(*text.value("met:e2e_request_latency_seconds_sum"), 0.045, 1e-9);
  EXPECT_EQ(text.samples.at("met:request_success_total{finished_reason=\"length\",model_name=\"tiny\"}"), 1);
}

TEST(RequestTimer, AnErrorFrameEndsTheRequestWithoutASuccess) {
  ServerMetrics metrics("tiny");
  FakeClock clock;
  RequestTimer timer(metrics, clock, clock.now());
  timer.on_event(ErrorEvent{"cancelled"});
  const auto text = parse_prometheus_text(metrics.render(EngineStatsSnapshot{}));
  EXPECT_EQ(text.value("met:e2e_request_latency_seconds_count"), 1);
  EXPECT_EQ(text.value("met:time_to_first_token_seconds_count"), 0);
  EXPECT_EQ(text.samples.at("met:request_success_total{finished_reason=\"stop\",model_name=\"tiny\"}"), 0);
}

}  // namespace
}  // namespace met
