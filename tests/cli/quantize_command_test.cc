// Tests for `met quantize`, run as a user would run it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

TEST(MetQuantize, EveryDtypeItOffersReadsBack) {
  testing::TempDir dir;
  const std::string f32 = dir.file("f32.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(f32) +
                        " --layers 1 --embd 256 --heads 4 --ff 512 --vocab 512")
                .exit_code,
            0);
  for (const std::string dtype : {"q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "f16", "bf16"}) {
    const std::string out = dir.file(dtype + ".gguf");
    auto r = run_command(met_binary() + " quantize " + shell_quote(f32) + " " + shell_quote(out) +
                         " --dtype " + dtype);
    ASSERT_EQ(r.exit_code, 0) << dtype << ": " << r.err;
    auto info = run_command(met_binary() + " info --json " + shell_quote(out));
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto j = nlohmann::json::parse(info.out);
    EXPECT_EQ(j["tensors"]["by_dtype"][dtype]["tensors"], 9) << dtype;
  }
}

TEST(MetQuantize, UnknownDtypeExitsNonZeroWithOneLine) {
  auto r = run_command(met_binary() + " quantize a.gguf b.gguf --dtype q9_9");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("q9_9"), std::string::npos);
}

}  // namespace
}  // namespace met
