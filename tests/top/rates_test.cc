// compute_rates between two snapshots, kv_usage, and History's bound.
#include "top/rates.h"

#include <gtest/gtest.h>

namespace met::top {
namespace {

Snapshot at(int64_t now_ms, int64_t prompt, int64_t output, double busy_ms, int64_t query, int64_t hit) {
  Snapshot s;
  s.now_ms = now_ms;
  s.engine.prompt_tokens = prompt;
  s.engine.output_tokens = output;
  s.engine.device_busy_ms = busy_ms;
  s.engine.cache_query_tokens = query;
  s.engine.cache_hit_tokens = hit;
  return s;
}

TEST(ComputeRates, TokensPerSecondBusyShareAndHitRateComeFromTheDeltas) {
  const Rates r = compute_rates(at(10'000, 100, 50, 1000, 200, 50), at(12'000, 300, 250, 2500, 600, 350));
  ASSERT_TRUE(r.prompt_tokens_per_s && r.output_tokens_per_s && r.device_busy_share && r.cache_hit_rate);
  EXPECT_DOUBLE_EQ(*r.prompt_tokens_per_s, 100.0);
  EXPECT_DOUBLE_EQ(*r.output_tokens_per_s, 100.0);
  EXPECT_DOUBLE_EQ(*r.device_busy_share, 0.75);
  EXPECT_DOUBLE_EQ(*r.cache_hit_rate, 0.75);
}

TEST(ComputeRates, NoLookupsMeansNoHitRate) {
  const Rates r = compute_rates(at(0, 0, 0, 0, 10, 5), at(1000, 0, 10, 0, 10, 5));
  EXPECT_FALSE(r.cache_hit_rate.has_value());
  EXPECT_DOUBLE_EQ(r.output_tokens_per_s.value_or(-1), 10.0);
  EXPECT_DOUBLE_EQ(r.device_busy_share.value_or(-1), 0.0);
}

TEST(ComputeRates, AClockThatDidNotMoveGivesNoRates) {
  const Rates r = compute_rates(at(5000, 0, 0, 0, 0, 0), at(5000, 10, 10, 10, 10, 10));
  EXPECT_FALSE(r.prompt_tokens_per_s || r.output_tokens_per_s || r.device_busy_share || r.cache_hit_rate);
}

TEST(ComputeRates, CountersThatWentBackGiveNoRates) {
  const Rates r = compute_rates(at(0, 500, 500, 100, 10, 5), at(1000, 3, 2, 1, 0, 0));
  EXPECT_FALSE(r.prompt_tokens_per_s || r.output_tokens_per_s || r.device_busy_share || r.cache_hit_rate);
}

TEST(ComputeRates, BusyShareIsCappedAtOne) {
  const Rates r = compute_rates(at(0, 0, 0, 0, 0, 0), at(1000, 0, 0, 1500, 0, 0));
  EXPECT_DOUBLE_EQ(r.device_busy_share.value_or(-1), 1.0);
}

TEST(KvUsage, IsTheShareOfThePoolInUse) {
  EngineCounters e;
  EXPECT_FALSE(kv_usage(e).has_value());
  e.kv_blocks_total = 200;
  e.kv_blocks_in_use = 50;
  EXPECT_DOUBLE_EQ(kv_usage(e).value_or(-1), 0.25);
}

TEST(History, KeepsTheNewestSamplesUpToItsCapacity) {
  History h(3);
  for (int i = 0; i < 5; ++i) {
    Sample s;
    s.running = i;
    h.add(s);
  }
  ASSERT_EQ(h.samples().size(), 3u);
  EXPECT_EQ(h.samples().front().running, 2);
  EXPECT_EQ(h.samples().back().running, 4);
}

}  // namespace
}  // namespace met::top
