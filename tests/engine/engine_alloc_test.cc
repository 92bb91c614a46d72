// The engine thread allocates nothing per token in steady-state decode: four
// greedy streams on a random-weight model (make-model's tiny preset, slow
// enough per step that the test's reader keeps up) through the whole engine (the scheduler, the
// pipelined lane, the CPU device's launch and await, the sinks and the
// publisher), counted by a replacement operator new on the thread named
// "met-engine". A count, not a timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "engine/engine.h"
#include "model_engine.h"
#include "testing/allocation_counter.h"
#include "model/random_model.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

constexpr int kNumStreams = 4;

// Reads the handles' events in turn, one at a time (so no stream falls far
// behind), until each has at least `tokens` tokens; false if a stream ended
// or nothing came for a while.
bool read_until(std::vector<RequestHandle>& handles, std::vector<size_t>& counts, size_t tokens) {
  StreamEvent ev;
  for (bool behind = true; behind;) {
    behind = false;
    for (size_t i = 0; i < handles.size(); ++i) {
      if (counts[i] >= tokens) continue;
      if (!handles[i].next_for(ev, std::chrono::seconds(30))) return false;
      const auto* d = std::get_if<DeltaEvent>(&ev);
      if (d == nullptr) return false;  // ended early
      counts[i] += d->tokens.size();
      behind = behind || counts[i] < tokens;
    }
  }
  return true;
}

// Decodes four streams and counts the engine thread's allocations over 160
// tokens each in steady state; with `subscribe`, a telemetry subscriber is
// attached all along (and reads nothing: the ring wraps).
void expect_no_allocation_per_token(bool subscribe) {
  testing::TempDir dir;
  const std::string path = dir.file("tiny.gguf");
  ASSERT_TRUE(make_random_model(*random_model_preset("tiny"), path).ok());
  testing::count_allocations_on_threads_named("met-engine");
  testing::ModelEngine m(path, 256, kNumStreams, std::nullopt);
  std::optional<TelemetryFeed::Subscription> sub;
  if (subscribe) sub.emplace(m.engine().subscribe_telemetry());
  std::vector<RequestHandle> handles;
  for (int i = 0; i < kNumStreams; ++i) {
    EngineRequest r;
    r.prompt = m.tokenizer().encode(i % 2 == 0 ? "Once upon a time" : "The little dog",
                                    EncodeOptions{.add_special = true});
    r.max_tokens = 400;
    r.ignore_eos = true;
    Result<RequestHandle> h = m.engine().submit(std::move(r));
    ASSERT_TRUE(h.ok()) << h.status().message();
    handles.push_back(std::move(*h));
  }
  std::vector<size_t> counts(handles.size(), 0);
  // Past admission, prefill and the first blocks: every stream decoding.
  ASSERT_TRUE(read_until(handles, counts, 48));
  const int64_t before = testing::num_named_thread_allocations();
  ASSERT_TRUE(read_until(handles, counts, 48 + 160));
  const int64_t after = testing::num_named_thread_allocations();
  // At least 160 tokens per stream were decoded in between.
  EXPECT_EQ(after - before, 0) << "allocations on the engine thread over " << 160 * kNumStreams << " tokens";
  EXPECT_GT(before, 0) << "the counter saw no allocation on the engine thread at all (is it named?)";
  for (RequestHandle& h : handles) h.cancel();
  m.engine().stop();
}

TEST(EngineAllocations, TheEngineThreadAllocatesNothingPerTokenInSteadyStateDecode) {
  expect_no_allocation_per_token(/*subscribe=*/false);
}

TEST(EngineAllocations, NorWithATelemetrySubscriberAttached) { expect_no_allocation_per_token(/*subscribe=*/true); }

}  // namespace
}  // namespace met
