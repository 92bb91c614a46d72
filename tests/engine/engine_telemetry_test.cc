// The operator's view of an Engine (engine.h: inspect, cancel,
// subscribe_telemetry) with a FakeDevice slowed to a millisecond a step, so
// requests stay in flight while the test looks at them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/fault_flag.h"
#include "engine/engine.h"
#include "testing/collected_stream.h"
#include "testing/fake_device.h"
#include "testing/test_tokenizer.h"

namespace met {
namespace {

using namespace std::chrono_literals;

EngineRequest request(int prompt_len, int max_tokens, std::string tenant) {
  EngineRequest r;
  for (int i = 0; i < prompt_len; ++i) r.prompt.push_back(static_cast<TokenId>(10 + i * 7 % 400));
  r.max_tokens = max_tokens;
  r.tenant = std::move(tenant);
  return r;
}

class EngineTelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::FakeDeviceOptions o;
    o.vocab_size = static_cast<int32_t>(testing::test_tokenizer().vocab().size());
    o.avoid = testing::test_tokenizer().vocab().eog_ids();
    device_ = std::make_unique<testing::FakeDevice>(o);
    device_->set_next_token([this](std::span<const TokenId> context) {
      std::this_thread::sleep_for(1ms);
      return device_->default_next(context);
    });
    EngineOptions options;
    options.scheduler.max_seqs = 4;
    Result<std::unique_ptr<Engine>> e =
        Engine::create(*device_, testing::test_tokenizer(), nullptr, clock_, std::move(options));
    ASSERT_TRUE(e.ok()) << e.status().message();
    engine_ = std::move(*e);
  }

  // The view once request `id` has at least `tokens` output tokens.
  EngineView view_with_output(RequestId id, int tokens) {
    for (int i = 0; i < 5000; ++i) {
      Result<EngineView> v = engine_->inspect();
      EXPECT_TRUE(v.ok()) << v.status().message();
      if (!v.ok()) return {};
      for (const RequestView& r : v->requests) {
        if (r.id == id && r.output_tokens >= tokens) return *v;
      }
      std::this_thread::sleep_for(2ms);
    }
    ADD_FAILURE() << "request " << id.value() << " never reached " << tokens << " tokens";
    return {};
  }

  ScopedFaultReset reset_;
  RealClock clock_;
  std::unique_ptr<testing::FakeDevice> device_;
  std::unique_ptr<Engine> engine_;
};

const RequestView* find(const EngineView& v, RequestId id) {
  for (const RequestView& r : v.requests) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

TEST_F(EngineTelemetryTest, InspectShowsARunningRequestWithItsTenantTokensBlocksAndTimeline) {
  Result<RequestHandle> h = engine_->submit(request(40, 3000, "acme"));
  ASSERT_TRUE(h.ok());
  const EngineView v = view_with_output(h->id(), 5);
  const RequestView* r = find(v, h->id());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->state, RequestState::kRunning);
  EXPECT_EQ(r->tenant, "acme");
  EXPECT_EQ(r->prompt_tokens, 40);
  EXPECT_GE(r->kv_blocks, 3);  // 40 prompt tokens and more
  ASSERT_GE(r->timeline.size(), 3u);
  EXPECT_EQ(r->timeline[0].event, "queued");
  EXPECT_EQ(r->timeline[1].event, "admitted");
  EXPECT_EQ(r->timeline[2].event, "first_token");
  EXPECT_LE(r->queued_ms, *r->first_token_ms);
  EXPECT_LE(*r->first_token_ms, v.now_ms);
  ASSERT_FALSE(v.tenants.empty());
  EXPECT_EQ(v.tenants[0].tenant, "acme");
  EXPECT_EQ(v.tenants[0].requests, 1);
  EXPECT_EQ(v.tenants[0].running, 1);
  EXPECT_EQ(v.tenants[0].kv_blocks, r->kv_blocks);
  h->cancel();
  testing::collect_stream(*h);
}

TEST_F(EngineTelemetryTest, CancelEndsTheRequestWithAnErrorFrameAndItIsListedAsFailed) {
  Result<RequestHandle> h = engine_->submit(request(10, 3000, ""));
  ASSERT_TRUE(h.ok());
  view_with_output(h->id(), 2);
  EXPECT_TRUE(engine_->cancel(h->id(), "cancelled by an operator"));
  const testing::CollectedStream out = testing::collect_stream(*h);
  EXPECT_EQ(out.num_terminal, 1);
  ASSERT_TRUE(out.error.has_value());
  EXPECT_NE(out.error->find("cancelled by an operator"), std::string::npos) << *out.error;
  EXPECT_FALSE(engine_->cancel(h->id(), "again")) << "an ended request is not in flight";
  EXPECT_FALSE(engine_->cancel(RequestId(999), "unknown"));
  Result<EngineView> v = engine_->inspect();
  ASSERT_TRUE(v.ok());
  const RequestView* r = find(*v, h->id());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->state, RequestState::kFailed);
  EXPECT_EQ(r->kv_blocks, 0);
  EXPECT_NE(r->error.find("operator"), std::string::npos);
  EXPECT_EQ(r->timeline.back().event, "failed");
}

TEST_F(EngineTelemetryTest, ASubscriberGetsEveryStepAndEachLifecycleEventInOrder) {
  TelemetryFeed::Subscription sub = engine_->subscribe_telemetry();
  Result<RequestHandle> h = engine_->submit(request(20, 30, "t1"));
  ASSERT_TRUE(h.ok());
  const testing::CollectedStream out = testing::collect_stream(*h);
  ASSERT_TRUE(out.finish.has_value());
  std::vector<TelemetryRecord> records;
  for (int i = 0; i < 500; ++i) {  // the finish is flushed with the tick that sent it
    sub.read(records, 100000);
    const auto* last = records.empty() ? nullptr : std::get_if<RequestTelemetry>(&records.back().what);
    if (last != nullptr && last->event == "finished") break;
    std::this_thread::sleep_for(2ms);
  }
  std::vector<std::string_view> events;
  int64_t prefill = 0;
  int64_t decode = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].seq, records[0].seq + i);
    if (const auto* r = std::get_if<RequestTelemetry>(&records[i].what)) {
      EXPECT_EQ(r->id, h->id());
      EXPECT_EQ(r->tenant, "t1");
      events.push_back(r->event);
    } else {
      prefill += std::get<StepTelemetry>(records[i].what).prefill_tokens;
      decode += std::get<StepTelemetry>(records[i].what).decode_tokens;
    }
  }
  EXPECT_EQ(events, (std::vector<std::string_view>{"queued", "admitted", "first_token", "finished"}));
  EXPECT_EQ(prefill, 20);
  EXPECT_GE(decode, 29);  // the first token came from the prompt's last row; the lane may run one over
}

TEST_F(EngineTelemetryTest, InspectAfterTheEngineStoppedIsAnError) {
  engine_->stop();
  const Result<EngineView> v = engine_->inspect(1s);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("stopped"), std::string::npos) << v.status().message();
}

}  // namespace
}  // namespace met
