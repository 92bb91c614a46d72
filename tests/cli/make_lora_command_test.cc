// Tests for `met make-lora` and `met run --lora`, running the built binary:
// an adapter is written for a made model, the same for a seed; `met run`
// with it continues a prompt differently from the base model, the same way
// each time; bad invocations exit non-zero with one line naming the fault.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

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
