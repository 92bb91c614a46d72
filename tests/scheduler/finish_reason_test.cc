// Tests for scheduler/finish_reason.h: every branch of the precedence, from
// the reference's own words.
#include "scheduler/finish_reason.h"

#include <gtest/gtest.h>

namespace met {
namespace {

constexpr TokenId kEos = 2;
constexpr TokenId kToolEnd = 7;
const std::vector<TokenId> kEosList = {kEos};

struct Row {
  const char* name;
  std::optional<GuardStop> guard;
  std::optional<TokenId> last;
  std::optional<TokenId> tool_end;
  bool stop_string;
  size_t remaining;
  size_t seq_len;
  size_t max_seq_len;
  std::string_view want;
};

TEST(DeriveFinishReason, FollowsThePrecedenceTable) {
  const Row rows[] = {
      // 1. the deadline outranks everything, even an EOS last token
      {"timeout beats eos", GuardStop::kRequestTimeout, kEos, kToolEnd, false, 5, 10, 100, "timeout"},
      {"timeout with empty output", GuardStop::kRequestTimeout, std::nullopt, std::nullopt, false, 5, 10, 100,
       "timeout"},
      {"timeout beats an exhausted budget", GuardStop::kRequestTimeout, 9, std::nullopt, false, 0, 10, 100, "timeout"},
      // 2. token-derived natural stops outrank other guards and the budget
      {"eos is stop", std::nullopt, kEos, std::nullopt, false, 5, 10, 100, "stop"},
      {"eos beats another guard", GuardStop::kKvExhausted, kEos, std::nullopt, false, 5, 10, 100, "stop"},
      {"eos on the last budget token is stop", std::nullopt, kEos, std::nullopt, false, 0, 10, 100, "stop"},
      {"tool-call close", std::nullopt, kToolEnd, kToolEnd, false, 5, 10, 100, "tool_calls"},
      {"tool-call close beats another guard", GuardStop::kKvExhausted, kToolEnd, kToolEnd, false, 5, 10, 100,
       "tool_calls"},
      {"stop string on the last budget token", std::nullopt, 9, std::nullopt, true, 0, 10, 100, "stop"},
      // the empty output never reads as tool_calls when no tool token is set
      {"empty output, no tool token, budget 0", std::nullopt, std::nullopt, std::nullopt, false, 0, 10, 100,
       "length"},
      {"empty output, no tool token, budget left", std::nullopt, std::nullopt, std::nullopt, false, 5, 10, 100,
       "stop"},
      // 3. any other guard is "length"
      {"kv exhausted guard", GuardStop::kKvExhausted, 9, std::nullopt, false, 5, 10, 100, "length"},
      {"guard with empty output", GuardStop::kKvExhausted, std::nullopt, std::nullopt, false, 5, 10, 100, "length"},
      // 4. an exhausted budget is "length"
      {"max_tokens spent", std::nullopt, 9, std::nullopt, false, 0, 10, 100, "length"},
      {"context ceiling", std::nullopt, 9, std::nullopt, false, 5, 100, 100, "length"},
      {"past the ceiling", std::nullopt, 9, std::nullopt, false, 5, 101, 100, "length"},
      // 5. otherwise "stop"
      {"budget left, no guard, not eos", std::nullopt, 9, std::nullopt, false, 5, 10, 100, "stop"},
      {"unlimited context", std::nullopt, 9, std::nullopt, false, 5, 100000, 0, "stop"},
  };
  for (const Row& r : rows) {
    FinishInputs in;
    in.guard_stop = r.guard;
    in.last_tok = r.last;
    in.eos_tokens = kEosList;
    in.tool_call_end_token = r.tool_end;
    in.stop_string_hit = r.stop_string;
    in.remaining = r.remaining;
    in.seq_len = r.seq_len;
    in.max_seq_len = r.max_seq_len;
    EXPECT_EQ(derive_finish_reason(in), r.want) << r.name;
  }
}

TEST(GuardStopWireReason, MapsTheTimeoutToTimeoutAndEveryOtherGuardToLength) {
  EXPECT_EQ(guard_stop_wire_reason(GuardStop::kRequestTimeout), "timeout");
  EXPECT_EQ(guard_stop_wire_reason(GuardStop::kKvExhausted), "length");
}

TEST(HardCeilingHit, IsTheBudgetOrTheContextCeiling) {
  EXPECT_TRUE(hard_ceiling_hit(0, 1, 100));
  EXPECT_TRUE(hard_ceiling_hit(3, 100, 100));
  EXPECT_FALSE(hard_ceiling_hit(3, 99, 100));
  EXPECT_FALSE(hard_ceiling_hit(3, 1000000, 0));
}

}  // namespace
}  // namespace met
