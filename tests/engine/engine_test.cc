// Tests for engine/engine.h with a FakeDevice: the engine thread, the inbox,
// the handles, shutdown and the fault flag.
#include "engine/engine.h"
#include "testing/collected_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/fault_flag.h"
#include "testing/fake_device.h"
#include "testing/test_tokenizer.h"

namespace met {
namespace {

using testing::FakeDevice;
using testing::FakeDeviceOptions;

using Outcome = testing::CollectedStream;

EngineRequest request(int prompt_len, int max_tokens, uint32_t seed) {
  EngineRequest r;
  for (int i = 0; i < prompt_len; ++i) r.prompt.push_back(static_cast<TokenId>(10 + (seed * 31 + i * 7) % 400));
  r.max_tokens = max_tokens;
  return r;
}

class EngineTest : public ::testing::Test {
 protected:
  void start(int32_t num_blocks = 64, EngineOptions options = {}) {
    FakeDeviceOptions o;
    o.vocab_size = static_cast<int32_t>(testing::test_tokenizer().vocab().size());
    o.avoid = testing::test_tokenizer().vocab().eog_ids();
    o.num_kv_blocks = num_blocks;
    device_ = std::make_unique<FakeDevice>(o);
    if (options.scheduler.max_seqs > 16) options.scheduler.max_seqs = 16;
    Result<std::unique_ptr<Engine>> e =
        Engine::create(*device_, testing::test_tokenizer(), nullptr, clock_, std::move(options));
    ASSERT_TRUE(e.ok()) << e.status().message();
    engine_ = std::move(*e);
  }

  ScopedFaultReset reset_;
  RealClock clock_;
  std::unique_ptr<FakeDevice> device_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, RequestsFromManyThreadsAreEachAnsweredOnceAndThePoolIsFullAfterDrain) {
  start(24);
  std::atomic<int> finished{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 8; ++i) {
        Result<RequestHandle> h = engine_->submit(request(5 + i * 3, 10 + i, static_cast<uint32_t>(t * 100 + i)));
        ASSERT_TRUE(h.ok());
        Outcome o = testing::collect_stream(*h);
        EXPECT_EQ(o.num_terminal, 1);
        ASSERT_TRUE(o.finish.has_value()) << o.error.value_or("");
        EXPECT_EQ(o.finish->finish_reason, "length");
        EXPECT_EQ(static_cast<int>(o.tokens.size()), 10 + i);
        ++finished;
      }
    });
  }
  for (std::thread& c : clients) c.join();
  engine_->drain();
  EXPECT_EQ(finished.load(), 32);
  EXPECT_EQ(engine_->kv_blocks_in_use(), 0);
  const EngineStatsSnapshot s = engine_->stats();
  EXPECT_EQ(s.requests_finished, 32);
  EXPECT_EQ(s.cache_queries, 32);
  EXPECT_GT(s.steps, 0);
}

TEST_F(EngineTest, SubmitRefusesABadRequestAtOnce) {
  start();
  Result<RequestHandle> h = engine_->submit(request(0, 5, 1));
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("empty"), std::string::npos);
}

// Requests are validated once, at submit: one that can never run is refused
// there with a message saying what, and never reaches the scheduler.
TEST_F(EngineTest, RefusesBadRequestsWithAClearError) {
  EngineOptions options;
  options.scheduler.max_seq_len = 1000;
  start(/*num_blocks=*/4, options);  // 64 tokens
  struct Case {
    EngineRequest r;
    const char* needle;
  };
  std::vector<Case> cases;
  cases.push_back({request(0, 5, 1), "empty"});
  cases.push_back({request(80, 5, 1), "KV blocks"});
  EngineRequest oov = request(2, 5, 1);
  oov.prompt[1] = 100000;
  cases.push_back({std::move(oov), "vocabulary"});
  cases.push_back({request(5, -1, 1), "max_tokens"});
  EngineRequest mt = request(5, 3, 1);
  mt.min_tokens = 4;
  cases.push_back({std::move(mt), "min_tokens"});
  for (Case& c : cases) {
    Result<RequestHandle> h = engine_->submit(std::move(c.r));
    ASSERT_FALSE(h.ok()) << c.needle;
    EXPECT_NE(h.status().message().find(c.needle), std::string::npos) << h.status().message();
  }
  EXPECT_EQ(engine_->stats().requests_failed, 0);  // refused, not failed: nothing was queued
}

TEST_F(EngineTest, APromptAsLongAsTheContextIsRefused) {
  EngineOptions options;
  options.scheduler.max_seq_len = 32;
  start(64, options);
  Result<RequestHandle> h = engine_->submit(request(32, 5, 1));
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("context is 32"), std::string::npos) << h.status().message();
}

TEST_F(EngineTest, CancelThroughTheHandleEndsTheRequestWithAnErrorFrame) {
  start();
  Result<RequestHandle> h = engine_->submit(request(8, 100000 / 100, 2));
  ASSERT_TRUE(h.ok());
  StreamEvent e;
  ASSERT_TRUE(h->next(e));  // the first delta
  h->cancel();
  Outcome o = testing::collect_stream(*h);
  EXPECT_EQ(o.num_terminal, 1);
  EXPECT_TRUE(o.error.has_value() || o.finish.has_value());
  engine_->drain();
  EXPECT_EQ(engine_->kv_blocks_in_use(), 0);
}

TEST_F(EngineTest, StopAnswersEveryOpenRequestWithAnErrorFrame) {
  start();
  std::vector<RequestHandle> handles;
  for (int i = 0; i < 6; ++i) handles.push_back(*engine_->submit(request(8, 1000, static_cast<uint32_t>(i))));
  engine_->stop();
  for (RequestHandle& h : handles) {
    Outcome o = testing::collect_stream(h);
    EXPECT_EQ(o.num_terminal, 1);
  }
  EXPECT_EQ(engine_->kv_blocks_in_use(), 0);
  EXPECT_FALSE(engine_->submit(request(8, 5, 9)).ok());
}

TEST_F(EngineTest, ADeviceFaultAnswersEveryRequestAsksForShutdownAndRefusesNewRequests) {
  std::atomic<int> fault_calls{0};
  EngineOptions options;
  options.on_fault = [&] { ++fault_calls; };
  start(64, options);
  device_->fail_every(testing::DeviceCall::kAwait);
  std::vector<RequestHandle> handles;
  for (int i = 0; i < 4; ++i) {
    // The engine may fault on the first request before the later ones
    // arrive: those are then refused, saying so.
    Result<RequestHandle> h = engine_->submit(request(8, 50, static_cast<uint32_t>(i)));
    if (h.ok()) {
      handles.push_back(std::move(*h));
    } else {
      EXPECT_NE(h.status().message().find("faulted"), std::string::npos) << h.status().message();
    }
  }
  ASSERT_FALSE(handles.empty());
  for (RequestHandle& h : handles) {
    Outcome o = testing::collect_stream(h);
    EXPECT_EQ(o.num_terminal, 1);
    ASSERT_TRUE(o.error.has_value());
  }
  engine_->stop();
  EXPECT_TRUE(is_faulted());
  EXPECT_EQ(fault_calls.load(), 1);
  Result<RequestHandle> late = engine_->submit(request(8, 5, 9));
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("faulted"), std::string::npos);
}

}  // namespace
}  // namespace met
