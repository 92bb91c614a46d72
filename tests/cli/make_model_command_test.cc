// Tests for `met make-model`, run as a user would run it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

TEST(MetMakeModel, WritesAModelThatInfoReadsBack) {
  testing::TempDir dir;
  const std::string out = dir.file("m.gguf");
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(out) +
                       " --arch qwen3 --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256"
                       " --vocab 800 --ctx 256 --dtype q8_0 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("random weights"), std::string::npos) << r.out;
  auto info = run_command(met_binary() + " info --json " + shell_quote(out));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["architecture"], "qwen3");
  EXPECT_EQ(j["hparams"]["layers"], 2);
  EXPECT_EQ(j["hparams"]["embedding"], 128);
  EXPECT_EQ(j["hparams"]["kv_heads"], 2);
  EXPECT_EQ(j["vocab"]["size"], 800);
  EXPECT_EQ(j["vocab"]["model"], "gpt2");
  EXPECT_EQ(j["vocab"]["pre"], "qwen2");
  EXPECT_TRUE(j["tensors"]["by_dtype"].contains("q8_0"));
  EXPECT_TRUE(j["chat_template"]);
}

TEST(MetMakeModel, UsesAChatTemplateFile) {
  testing::TempDir dir;
  const std::string tmpl = dir.file("t.jinja");
  ASSERT_EQ(run_command("printf '{{ messages }}' > " + shell_quote(tmpl)).exit_code, 0);
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("m.gguf")) +
                       " --layers 1 --vocab 512 --chat-template " + shell_quote(tmpl));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(MetMakeModel, BadArgumentsExitNonZeroWithOneLine) {
  testing::TempDir dir;
  const std::string base = met_binary() + " make-model -o " + shell_quote(dir.file("m.gguf"));
  for (const std::string& args : {std::string(" --arch gpt9"), std::string(" --heads 3"),
                                  std::string(" --dtype q2_k"), std::string(" --vocab 10"),
                                  std::string(" --chat-template /nonexistent.jinja")}) {
    auto r = run_command(base + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("met make-model: ", 0), 0u) << r.err;
  }
}

}  // namespace
}  // namespace met
