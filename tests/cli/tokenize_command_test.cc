// Tests for `met tokenize`, run as a user would run it.
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

std::string tokenize(const std::string& model, const std::string& args) {
  return met_binary() + " tokenize " + shell_quote(model) + " " + args;
}

TEST(MetTokenize, PrintsLlama3IdsAsOneLineOrAJsonArray) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-bpe.gguf");
  auto r = run_command(tokenize(path, "--text 'Hello world'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "9906 1917\n");
  r = run_command(tokenize(path, "--json --text 'Hello world'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::array({9906, 1917}));
  r = run_command(tokenize(path, "--bos --json --text 'Hello world'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::array({128000, 9906, 1917}));
}

TEST(MetTokenize, IdsDecodeToTheTextExactlyWithoutANewline) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-spm.gguf");
  const std::string text = " Hello  world\n\tagain";
  auto r = run_command(tokenize(path, "--json --text " + shell_quote(text)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string ids;
  for (int id : nlohmann::json::parse(r.out)) ids += std::to_string(id) + " ";
  r = run_command(tokenize(path, "--ids " + shell_quote(ids)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, text);
}

TEST(MetTokenize, SpecialFlagMatchesChatTokensInTheText) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-qwen2.gguf");
  auto r = run_command(tokenize(path, "--json --special --text '<|im_start|>user'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ids = nlohmann::json::parse(r.out);
  EXPECT_EQ(ids.front(), 151644);
  r = run_command(tokenize(path, "--json --text '<|im_start|>user'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out).front(), 151644);
  r = run_command(tokenize(path, "--special --ids '151644 872'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<|im_start|>user");
  r = run_command(tokenize(path, "--ids '151644 872'"));
  EXPECT_EQ(r.out, "user");
}

TEST(MetTokenize, WorksOnAModelFromMakeModelAndReadsTextFiles) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  auto made = run_command(met_binary() + " make-model -o " + shell_quote(model) +
                          " --layers 1 --embd 64 --heads 2 --ff 128 --vocab 600 --ctx 64");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string text = "hello there,\nthe cat sat on the mat";
  std::ofstream(dir.file("t.txt"), std::ios::binary) << text;
  auto r = run_command(tokenize(model, "--text-file " + shell_quote(dir.file("t.txt"))));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.back(), '\n');
  auto back = run_command(tokenize(model, "--ids " + shell_quote(r.out)));
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, text);
}

TEST(MetTokenize, BadInvocationsExitNonZeroWithOneLine) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) +
                        " --layers 1 --embd 64 --heads 2 --ff 128 --vocab 512 --ctx 64")
                .exit_code,
            0);
  const std::vector<std::string> cases = {
      tokenize(model, ""),
      tokenize(model, "--text a --ids 1"),
      tokenize(model, "--ids '1 x'"),
      tokenize(model, "--ids 99999"),
      tokenize(model, "--ids '5 -1'"),
      tokenize(model, "--text-file /nonexistent/file.txt"),
      tokenize("/nonexistent/model.gguf", "--text a"),
  };
  for (const std::string& command : cases) {
    auto r = run_command(command);
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << ": " << r.err;
    EXPECT_EQ(r.err.rfind("met tokenize: ", 0), 0u) << command << ": " << r.err;
  }
}

}  // namespace
}  // namespace met
