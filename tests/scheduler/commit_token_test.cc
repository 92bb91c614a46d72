// Tests for scheduler/commit_token.h: the per-token guards.
#include "scheduler/commit_token.h"

#include <gtest/gtest.h>

#include <cmath>

#include "scheduler_fixture.h"

namespace met {
namespace {

class Settle : public ::testing::Test {
 protected:
  Settle() : device_(testing::FakeDeviceOptions{}), dev_(device_), kv_(device_) {}

  ActiveSeq seq(int32_t remaining, std::vector<std::string> stops = {}) {
    ActiveSeq a;
    a.seq.tokens = {1, 20, 21};
    a.out.prompt_len = 3;
    a.limits.remaining = remaining;
    a.limits.eos_tokens = {2};
    DetokenizerOptions d;
    d.stop_strings = std::move(stops);
    a.out.detok.emplace(testing::test_tokenizer(), std::move(d));
    a.sink = ResponseSink(RequestId(1), nullptr);
    return a;
  }
  SchedIo io() { return SchedIo{dev_, kv_, req_, tel_, clock_}; }

  testing::FakeDevice device_;
  DevPort dev_;
  KvManager kv_;
  testing::RecordingReq req_;
  testing::CountingTel tel_;
  FakeClock clock_;
};

TEST_F(Settle, ATokenIsAppendedToTheOutputAndTheSequenceAndStreamed) {
  ActiveSeq a = seq(5);
  accept_token(io(), a, 300, 0);
  EXPECT_EQ(a.out.tokens, std::vector<TokenId>{300});
  EXPECT_EQ(a.seq.tokens.back(), 300);
  EXPECT_EQ(a.limits.remaining, 4);
  EXPECT_FALSE(a.status.finished);
  EXPECT_EQ(req_.at(1).tokens, std::vector<TokenId>{300});
  EXPECT_TRUE(a.timing.decode_start.has_value());
  a.sink.error("done");
}

TEST_F(Settle, EosFinishesAndItsTextIsNotStreamed) {
  ActiveSeq a = seq(5);
  accept_token(io(), a, 2, 0);
  EXPECT_TRUE(a.status.finished);
  EXPECT_EQ(req_.at(1).text, "");
  a.sink.error("done");
}

TEST_F(Settle, TheLastBudgetTokenFinishes) {
  ActiveSeq a = seq(1);
  accept_token(io(), a, 300, 0);
  EXPECT_TRUE(a.status.finished);
  EXPECT_FALSE(a.status.stop_string_hit);
  a.sink.error("done");
}

TEST_F(Settle, TheContextCeilingFinishes) {
  ActiveSeq a = seq(100);
  accept_token(io(), a, 300, 4);  // prompt 3 + 1 token = the ceiling of 4
  EXPECT_TRUE(a.status.finished);
  a.sink.error("done");
}

TEST_F(Settle, StopsAreSuppressedBeforeMinTokensOnly) {
  ActiveSeq a = seq(10);
  a.limits.min_tokens = 1;
  EXPECT_TRUE(suppressing_stops(a));
  EXPECT_FALSE(needs_logits(a));  // greedy: the device bans EOS in its argmax
  std::vector<float> logits(8, 0.0f);
  logits[2] = 5.0f;
  suppress_stops(a, logits);
  EXPECT_TRUE(std::isinf(logits[2]) && logits[2] < 0);
  accept_token(io(), a, 300, 0);
  EXPECT_FALSE(suppressing_stops(a));
  a.sink.error("done");
}

}  // namespace
}  // namespace met
