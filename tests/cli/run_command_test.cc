// Tests for `met run`, run as a user would run it.
#include <gtest/gtest.h>

#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

TEST(MetRun, GreedyContinuationOfStories260KIsTheKnownText) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " run " + shell_quote(path) +
                       " --prompt 'Once upon a time' -n 48 --temp 0 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Exactly the continuation llama.cpp produces (shared/reference-outputs), nothing else.
  EXPECT_EQ(r.out,
            ", there was a little girl named Lily. She loved to play outside in the park. One day, "
            "she saw a big, red ball. She wanted to play with it,");
  EXPECT_NE(r.err.find("tok/s"), std::string::npos) << r.err;
}

TEST(MetRun, SameSeedSameTextAtATemperature) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const std::string cmd = met_binary() + " run " + shell_quote(path) + " -n 40 --temp 1.0 --seed 9";
  auto a = run_command(cmd);
  auto b = run_command(cmd);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_FALSE(a.out.empty());
}

TEST(MetRun, RunsAMadeModelOfEveryArchitecture) {
  testing::TempDir dir;
  for (const std::string arch : {"llama", "mistral", "qwen2", "qwen3"}) {
    const std::string model = dir.file(arch + ".gguf");
    ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) + " --arch " + arch +
                          " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 600 --dtype q8_0")
                  .exit_code,
              0);
    auto r = run_command(met_binary() + " run " + shell_quote(model) + " --prompt 'hello world' -n 8");
    EXPECT_EQ(r.exit_code, 0) << arch << ": " << r.err;
  }
}

TEST(MetRun, BadArgumentsExitNonZeroWithOneLine) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  for (const std::string args : {" --temp -1", " --top-p 0", " -n 5000", " --kv-dtype q9"}) {
    auto r = run_command(met_binary() + " run " + shell_quote(path) + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("met run: ", 0), 0u) << r.err;
  }
}

}  // namespace
}  // namespace met
