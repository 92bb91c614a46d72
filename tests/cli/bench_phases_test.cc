// Tests for `met bench --phases` tables: a line per phase above the share
// given, the rest on one line, the host's time between jobs as what the
// step's wall time holds beyond the phases; the JSON per step.
#include "cli/bench_phases.h"

#include <gtest/gtest.h>

#include <string>

namespace met {
namespace {

PhaseReport two_steps() {
  PhaseReport r;
  r.steps = 2;
  r.step_seconds = 0.010;  // 10 ms a step
  r.phases = {{"model/moe_ffn.cc", 174, "run_experts", 56, 0.012, 0.0012},
              {"model/forward_pass.cc", 228, "attention_block", 56, 0.006, 0.0},
              {"model/linear.cc", 117, "linear", 114, 0.00002, 0.00001},
              {"model/forward_pass.cc", 350, "add_residual", 112, 0.00004, 0.0}};
  return r;
}

TEST(BenchPhases, TableHasALinePerPhaseTheRestAndTheHost) {
  const std::string t = phase_table(two_steps());
  EXPECT_NE(t.find("6000.0   60.0%   10.0%       28.0  model/moe_ffn.cc:174 run_experts"), std::string::npos)
      << t;
  EXPECT_NE(t.find("3000.0   30.0%    0.0%       28.0  model/forward_pass.cc:228 attention_block"),
            std::string::npos)
      << t;
  // 10 + 20 us a step, each under half a percent of it.
  EXPECT_NE(t.find("30.0    0.3%                     2 other phases"), std::string::npos) << t;
  EXPECT_EQ(t.find("linear.cc"), std::string::npos) << t;
  // 10 ms - 9.03 ms of phases.
  EXPECT_NE(t.find("970.0    9.7%                     between jobs"), std::string::npos) << t;
}

TEST(BenchPhases, EveryPhaseShowsAtAZeroShare) {
  const std::string t = phase_table(two_steps(), 0.0);
  EXPECT_NE(t.find("model/linear.cc:117 linear"), std::string::npos) << t;
  EXPECT_EQ(t.find("other phases"), std::string::npos) << t;
}

TEST(BenchPhases, JsonGivesEachPhasePerStep) {
  const nlohmann::json j = phase_json(two_steps());
  EXPECT_EQ(j["steps"], 2);
  ASSERT_EQ(j["phases"].size(), 4u);
  EXPECT_EQ(j["phases"][0]["file"], "model/moe_ffn.cc");
  EXPECT_EQ(j["phases"][0]["line"], 174);
  EXPECT_DOUBLE_EQ(j["phases"][0]["seconds_per_step"].get<double>(), 0.006);
  EXPECT_DOUBLE_EQ(j["phases"][0]["waited_seconds_per_step"].get<double>(), 0.0006);
  EXPECT_DOUBLE_EQ(j["phases"][2]["calls_per_step"].get<double>(), 57.0);
  EXPECT_NEAR(j["host_seconds_per_step"].get<double>(), 0.00097, 1e-12);
}

}  // namespace
}  // namespace met
