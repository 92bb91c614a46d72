// Tests for `met make-lora`, `met run --lora` and `met bench --lora`,
// running the built binary: an adapter is written for a made model, the
// same for a seed; `met run` with it continues a prompt differently from the
// base model, the same way each time; `met bench` reports each decode figure
// plain and with adapters; bad invocations exit non-zero with one line
// naming the fault.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(MetMakeLora, WritesAnAdapterThatMetRunRuns) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) +
                        " --layers 2 --embd 64 --heads 4 --kv-heads 2 --ff 128 --vocab 600")
                .exit_code,
            0);
  for (const char* name : {"a.gguf", "b.gguf"}) {
    auto r = run_command(met_binary() + " make-lora " + shell_quote(model) + " -o " + shell_quote(dir.file(name)) +
                         " --rank 4 --targets q,v,down --seed 3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("rank 4 on 6 matrices (q,v,down)"), std::string::npos) << r.out;
  }
  EXPECT_EQ(bytes_of(dir.file("a.gguf")), bytes_of(dir.file("b.gguf")));
  const std::string run = met_binary() + " run " + shell_quote(model) + " -p 'Once upon' -n 10 --temp 0 --threads 1";
  const auto base = run_command(run);
  const auto adapted = run_command(run + " --lora " + shell_quote(dir.file("a.gguf")));
  const auto again = run_command(run + " --lora mine=" + shell_quote(dir.file("a.gguf")));
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  EXPECT_NE(base.out, adapted.out);
  EXPECT_EQ(adapted.out, again.out);
}

TEST(MetMakeLora, MetBenchReportsEachDecodeFigureWithAndWithoutAdapters) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) +
                        " --layers 1 --embd 64 --heads 4 --kv-heads 2 --ff 128 --vocab 600")
                .exit_code,
            0);
  std::string loras;
  for (const char* name : {"a", "b"}) {
    const std::string path = dir.file(std::string(name) + ".gguf");
    ASSERT_EQ(run_command(met_binary() + " make-lora " + shell_quote(model) + " -o " + shell_quote(path)).exit_code, 0);
    loras += std::string(" --lora ") + name + "=" + shell_quote(path);
  }
  const auto r = run_command(met_binary() + " bench " + shell_quote(model) +
                             " --prompt-tokens 8 --gen-tokens 2 --batch 1,4 --threads 1 --json" + loras);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["decode"].size(), 4u) << r.out;
  const int adapters[] = {0, 1, 0, 2};  // batch 1 plain, with 1; batch 4 plain, over both
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(j["decode"][i]["adapters"], adapters[i]) << i;
    EXPECT_GT(j["decode"][i]["tok_s"].get<double>(), 0.0);
  }
  const auto bad = run_command(met_binary() + " bench " + shell_quote(model) + " --gen-tokens 2 --lora x=" +
                               shell_quote(model));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("not a LoRA adapter file"), std::string::npos) << bad.err;
}

TEST(MetMakeLora, BadInvocationsExitNonZeroWithOneLine) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) +
                        " --layers 1 --embd 64 --heads 4 --kv-heads 2 --ff 128 --vocab 600")
                .exit_code,
            0);
  const std::string make = met_binary() + " make-lora " + shell_quote(model) + " -o " + shell_quote(dir.file("x"));
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {" --targets q,lm_head", "'lm_head' is not one of"},
           {" --rank 0", "--rank 0 is outside 1 to 4096"},
           {" --dtype q4_0", "adapters are f32, f16, bf16 or q8_0"},
           {" --rank 16 --dtype q8_0", "cannot be q8_0"}}) {
    const auto r = run_command(make + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.err.find("met make-lora: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
  }
  const auto run = run_command(met_binary() + " run " + shell_quote(model) + " -p x -n 2 --lora " +
                               shell_quote(model));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("not a LoRA adapter file"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace met
