// Tests for `met run`, `met info`, `met tokenize` and `met convert` on a
// Hugging Face model folder, run as a user would run them: ../shared's
// tinystories-656k-hf against its expected.jsonl (skipped with a message
// when ../shared is absent), and the one-line errors of bad input.
#include <fstream>
#include <sstream>

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

constexpr const char* kFolder = "models/tinystories-656k-hf";

std::vector<nlohmann::json> expected_runs(const std::string& dir) {
  std::ifstream in(dir + "/expected.jsonl");
  std::vector<nlohmann::json> runs;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) runs.push_back(nlohmann::json::parse(line));
  }
  return runs;
}

// `met run MODEL -p PROMPT` greedily for expected.jsonl's 48 tokens.
testing::CommandOutput greedy_run(const std::string& model, const std::string& prompt) {
  return run_command(met_binary() + " run " + shell_quote(model) + " -p " + shell_quote(prompt) +
                     " -n 48 --temp 0");
}

int num_lines_of(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(MetRunHfFolder, PrintsTheExpectedGreedyText) {
  MET_REQUIRE_SHARED(dir, kFolder);
  const auto runs = expected_runs(dir);
  ASSERT_EQ(runs.size(), 5u);
  for (const nlohmann::json& r : runs) {
    const auto out = greedy_run(dir, r["prompt"].get<std::string>());
    ASSERT_EQ(out.exit_code, 0) << out.err;
    EXPECT_EQ(out.out, r["output_text"].get<std::string>()) << r["prompt"];
  }
}

TEST(MetConvert, TheGgufPrintsWhatTheFolderPrints) {
  MET_REQUIRE_SHARED(dir, kFolder);
  testing::TempDir tmp;
  const std::string gguf = tmp.file("tinystories.gguf");
  const auto convert = run_command(met_binary() + " convert " + shell_quote(dir) + " -o " + shell_quote(gguf));
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_NE(convert.out.find("wrote " + gguf + ": 20 tensors"), std::string::npos) << convert.out;
  for (const nlohmann::json& r : expected_runs(dir)) {
    const std::string prompt = r["prompt"].get<std::string>();
    const auto from_gguf = greedy_run(gguf, prompt);
    ASSERT_EQ(from_gguf.exit_code, 0) << from_gguf.err;
    EXPECT_EQ(from_gguf.out, greedy_run(dir, prompt).out) << prompt;
    EXPECT_EQ(from_gguf.out, r["output_text"].get<std::string>()) << prompt;
  }
}

TEST(MetConvert, QuantizedTypesWriteModelsThatRun) {
  MET_REQUIRE_SHARED(dir, kFolder);
  testing::TempDir tmp;
  for (const char* dtype : {"f16", "bf16", "q8_0"}) {
    const std::string gguf = tmp.file(std::string(dtype) + ".gguf");
    const auto convert = run_command(met_binary() + " convert " + shell_quote(dir) + " -o " + shell_quote(gguf) +
                                     " --dtype " + dtype);
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    const auto info = run_command(met_binary() + " info --json " + shell_quote(gguf));
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)["format"], "gguf");
    const auto run = greedy_run(gguf, "Once upon a time");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_FALSE(run.out.empty()) << dtype;
  }
}

TEST(MetInfoHfFolder, DescribesTheFolderAsItsConversion) {
  MET_REQUIRE_SHARED(dir, kFolder);
  const auto r = run_command(met_binary() + " info --json " + shell_quote(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "hf-folder");
  EXPECT_EQ(j["hparams"]["layers"], 2);  // README.md
  EXPECT_EQ(j["hparams"]["embedding"], 128);
  EXPECT_EQ(j["hparams"]["heads"], 8);
  EXPECT_EQ(j["hparams"]["kv_heads"], 4);
  EXPECT_EQ(j["hparams"]["feed_forward"], 384);
  EXPECT_EQ(j["vocab"]["size"], 2048);
  EXPECT_EQ(j["vocab"]["model"], "llama");
}

TEST(MetTokenizeHfFolder, GivesTheExpectedPromptIds) {
  MET_REQUIRE_SHARED(dir, kFolder);
  for (const nlohmann::json& r : expected_runs(dir)) {
    const auto out = run_command(met_binary() + " tokenize --bos --json " + shell_quote(dir) + " --text " +
                                 shell_quote(r["prompt"].get<std::string>()));
    ASSERT_EQ(out.exit_code, 0) << out.err;
    EXPECT_EQ(nlohmann::json::parse(out.out), r["prompt_ids"]) << r["prompt"];
  }
}

TEST(MetConvert, AFileInsteadOfAFolderExitsWithOneLine) {
  testing::TempDir tmp;
  std::ofstream(tmp.file("model.gguf")) << "x";
  const auto r = run_command(met_binary() + " convert " + shell_quote(tmp.file("model.gguf")) + " -o " +
                             shell_quote(tmp.file("out.gguf")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(num_lines_of(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("met convert: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("is not a folder"), std::string::npos) << r.err;
}

// A hostile model.safetensors whose tensor name holds a newline (JSON
// "\n"): the refusal stays one line, the name quoted printable.
TEST(MetConvert, AHostileTensorNameIsQuotedOnOneLine) {
  MET_REQUIRE_SHARED(dir, kFolder);
  testing::TempDir tmp;
  for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
    std::ifstream in(dir + "/" + f, std::ios::binary);
    std::ofstream(tmp.file(f), std::ios::binary) << in.rdbuf();
  }
  const std::string header = R"({"a\nb": {"shape": [2], "data_offsets": [0, 8]}})";
  std::string file(8, '\0');
  for (size_t i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  std::ofstream(tmp.file("model.safetensors"), std::ios::binary) << file << header << std::string(8, '\0');
  const auto r = run_command(met_binary() + " convert " + shell_quote(tmp.path()) + " -o " +
                             shell_quote(tmp.file("out.gguf")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(num_lines_of(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(R"(tensor 'a\nb': no 'dtype')"), std::string::npos) << r.err;
}

TEST(MetRunHfFolder, AFolderWithoutConfigExitsNamingTheFile) {
  testing::TempDir tmp;
  const auto r = greedy_run(tmp.path(), "Once");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(tmp.path() + "/config.json is missing"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace met
