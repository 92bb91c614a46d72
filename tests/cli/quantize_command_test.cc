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
  for (const std::string dtype :
       {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q3_k", "q4_k", "q5_k", "q6_k", "f16", "bf16"}) {
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

// llama.cpp's Q4_K_M on 8 layers: attention V and FFN down of layers 0, 3,
// 6 and 7 (use_more_bits) and the output matrix in Q6_K, the rest Q4_K.
TEST(MetQuantize, Q4_K_MWritesLlamaCppsMixAndFileType) {
  testing::TempDir dir;
  const std::string f32 = dir.file("f32.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(f32) +
                        " --layers 8 --embd 256 --heads 4 --ff 512 --vocab 512")
                .exit_code,
            0);
  const std::string out = dir.file("q4_k_m.gguf");
  auto r = run_command(met_binary() + " quantize " + shell_quote(f32) + " " + shell_quote(out) + " --dtype q4_k_m");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto info = run_command(met_binary() + " info --json " + shell_quote(out));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q6_k"]["tensors"], 4 + 4 + 1);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q4_k"]["tensors"], 8 * 7 + 2 - 9);
  EXPECT_EQ(j["file_type"], 15);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
}

// llama.cpp's Q3_K_M on 8 layers (4 query heads per 4 KV heads): attention
// V of the first two layers in Q5_K, the rest of V, all FFN down and
// attention output in Q4_K, the output matrix in Q6_K, the rest Q3_K; the
// file runs.
TEST(MetQuantize, Q3_K_MWritesLlamaCppsMixAndRuns) {
  testing::TempDir dir;
  const std::string f32 = dir.file("f32.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(f32) +
                        " --layers 8 --embd 256 --heads 4 --ff 512 --vocab 512")
                .exit_code,
            0);
  const std::string out = dir.file("q3_k_m.gguf");
  auto r = run_command(met_binary() + " quantize " + shell_quote(f32) + " " + shell_quote(out) + " --dtype q3_k_m");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto info = run_command(met_binary() + " info --json " + shell_quote(out));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q5_k"]["tensors"], 2);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q4_k"]["tensors"], 6 + 8 + 8);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q6_k"]["tensors"], 1);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q3_k"]["tensors"], 8 * 4 + 1);  // q, k, gate, up; token_embd
  EXPECT_EQ(j["file_type"], 12);  // LLAMA_FTYPE_MOSTLY_Q3_K_M
  auto run = run_command(met_binary() + " run " + shell_quote(out) + " -p hello -n 4 --temp 0");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(MetQuantize, UnknownDtypeExitsNonZeroWithOneLine) {
  auto r = run_command(met_binary() + " quantize a.gguf b.gguf --dtype q9_9");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("q9_9"), std::string::npos);
}

}  // namespace
}  // namespace met
