// Tests for cli/sampling_flags.h.
#include "cli/sampling_flags.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(SamplingFlags, FillEveryFieldTheyName) {
  CLI::App app;
  SamplingParams p;
  add_sampling_flags(app, p);
  const char* argv[] = {"met",          "--temp", "0.7",  "--top-k",          "20",  "--top-p",
                        "0.9",          "--seed", "42",   "--min-p",          "0.05", "--typical-p",
                        "0.8",          "--top-n-sigma",  "1.5", "--xtc-probability", "0.5",
                        "--xtc-threshold", "0.2", "--repeat-penalty", "1.1", "--repeat-last-n", "64",
                        "--presence-penalty", "0.3", "--frequency-penalty", "0.4", "--dry-multiplier", "0.8",
                        "--dry-base",   "2",      "--dry-allowed-length", "3", "--lz-penalty", "0.6",
                        "--adaptive-temperature"};
  app.parse(static_cast<int>(std::size(argv)), argv);
  EXPECT_FLOAT_EQ(p.temperature, 0.7f);
  EXPECT_EQ(p.top_k, 20);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.seed, 42u);
  EXPECT_FLOAT_EQ(p.min_p, 0.05f);
  EXPECT_FLOAT_EQ(p.typical_p, 0.8f);
  EXPECT_FLOAT_EQ(p.top_n_sigma, 1.5f);
  EXPECT_FLOAT_EQ(p.xtc_probability, 0.5f);
  EXPECT_FLOAT_EQ(p.xtc_threshold, 0.2f);
  EXPECT_FLOAT_EQ(p.repetition_penalty, 1.1f);
  EXPECT_EQ(p.repetition_penalty_window, 64);
  EXPECT_FLOAT_EQ(p.presence_penalty, 0.3f);
  EXPECT_FLOAT_EQ(p.frequency_penalty, 0.4f);
  EXPECT_FLOAT_EQ(p.dry_multiplier, 0.8f);
  EXPECT_FLOAT_EQ(p.dry_base, 2.0f);
  EXPECT_EQ(p.dry_allowed_length, 3);
  EXPECT_FLOAT_EQ(p.lz_penalty, 0.6f);
  EXPECT_TRUE(p.adaptive_temperature);
  EXPECT_TRUE(validate_sampling(p).ok()) << validate_sampling(p).message();
}

}  // namespace
}  // namespace met
