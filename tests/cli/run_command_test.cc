// Tests for `met run`, run as a user would run it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

// A small random-weight model in `dir` (f32, so batching cannot move an argmax).
std::string make_small_model(const testing::TempDir& dir) {
  const std::string model = dir.file("small.gguf");
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(model) +
                       " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 600 --dtype f32");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model;
}

std::string write_file(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::vector<std::string> texts_of(const std::vector<nlohmann::json>& lines) {
  std::vector<std::string> texts;
  for (const auto& j : lines) texts.push_back(j.at("text").get<std::string>());
  return texts;
}

struct Preemptions {
  int swap = -1;
  int recompute = -1;
};

// The preemptions counted on `met run --prompts-file`'s summary line.
Preemptions preemptions(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex("preemptions: (\\d+) swap, (\\d+) recompute"))) return {};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

const char kPrompts[] =
    "\"hello world\"\n"
    "\n"
    "\"Once upon a time there was a cat\"\n"
    "\"abc\"\n"
    "\"the quick brown fox jumps over the lazy dog, again and again\"\n";

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

// --draft-model through the CLI: the model drafting for itself gives the
// known text, and its drafts are all accepted (the per-request log line).
TEST(MetRun, ADraftModelGivesTheKnownTextAndItsDraftsAreAccepted) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " run " + shell_quote(path) + " --prompt 'Once upon a time' -n 48 --temp 0" +
                       " --threads 2 --draft-model " + shell_quote(path) + " --spec-adaptive off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            ", there was a little girl named Lily. She loved to play outside in the park. One day, "
            "she saw a big, red ball. She wanted to play with it,");
  EXPECT_NE(r.err.find("accepted (100%)"), std::string::npos) << r.err;
}

// `met run target` greedy, 40 tokens, with and without `draft` drafting
// (every proposal verified): the same text, every draft accepted.
void expect_draft_model_keeps_the_text(const std::string& target, const std::string& draft) {
  const std::string run = met_binary() + " run " + shell_quote(target) + " --prompt 'hello world' -n 40 --temp 0";
  const auto plain = run_command(run);
  const auto drafted = run_command(run + " --spec-adaptive off --draft-model " + shell_quote(draft));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(drafted.exit_code, 0) << drafted.err;
  EXPECT_EQ(drafted.out, plain.out);
  EXPECT_NE(drafted.err.find("accepted (100%)"), std::string::npos) << drafted.err;
}

// A draft model with recurrent layers through the CLI: a qwen35 model
// drafting for itself gives the text without a draft model, every draft
// accepted.
TEST(MetRun, ARecurrentDraftModelGivesTheTextWithoutIt) {
  testing::TempDir dir;
  const std::string model = dir.file("hybrid.gguf");
  const auto made = run_command(met_binary() + " make-model -o " + shell_quote(model) +
                                " --arch qwen35 --preset tiny --vocab 600 --dtype q8_0");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  expect_draft_model_keeps_the_text(model, model);
}

// make-model's quantized-twin fixture through the CLI: an F16 model with a
// successor head drafted by its Q4_0 copy (same seed) gives the text
// without drafting, and the copy's drafts are all accepted; the head is
// refused on a tied output by name.
TEST(MetRun, ASuccessorHeadModelsQ4_0TwinDraftsWhatItPicks) {
  testing::TempDir dir;
  const std::string make = met_binary() + " make-model --layers 2 --embd 256 --heads 4 --kv-heads 2 --ff 512"
                           " --vocab 600 --successor-head --branch-scale 0.05 --dtype ";
  const std::string target = dir.file("f16.gguf"), twin = dir.file("q4_0.gguf");
  ASSERT_EQ(run_command(make + "f16 -o " + shell_quote(target)).exit_code, 0);
  ASSERT_EQ(run_command(make + "q4_0 -o " + shell_quote(twin)).exit_code, 0);
  expect_draft_model_keeps_the_text(target, twin);
  const auto tied = run_command(make + "f16 --tie-embeddings -o " + shell_quote(dir.file("tied.gguf")));
  EXPECT_NE(tied.exit_code, 0);
  EXPECT_NE(tied.err.find("--successor-head needs an output.weight"), std::string::npos) << tied.err;
}

// make-model's MTP fixture (the block a copy of the last attention layer
// over scaled-down layers), of the qwen35 family and of a dense qwen3,
// drafts through --spec-mtp, one a step or chained: the text is the text
// without it, and drafts are accepted; --spec-mtp on a model without an MTP
// block is refused by name.
TEST(MetRun, AModelsMtpBlockDraftsAndTheTextIsTheTextWithoutIt) {
  testing::TempDir dir;
  for (const char* arch : {"qwen35", "qwen3"}) {
    const std::string model = dir.file(std::string(arch) + ".gguf");
    const auto made = run_command(met_binary() + " make-model -o " + shell_quote(model) + " --arch " + arch +
                                  " --preset tiny --layers 4 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 600"
                                  " --dtype q8_0 --mtp-layers 1 --mtp-copy-last-layer --branch-scale 0.01");
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const std::string run = met_binary() + " run " + shell_quote(model) + " --prompt 'hello world' -n 40 --temp 0";
    const auto plain = run_command(run);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    for (const char* drafts : {"1", "4"}) {
      const auto mtp = run_command(run + " --spec-mtp --spec-adaptive off --spec-mtp-drafts " + drafts);
      ASSERT_EQ(mtp.exit_code, 0) << mtp.err;
      EXPECT_EQ(mtp.out, plain.out) << arch << " " << drafts;
      EXPECT_NE(mtp.err.find("drafted tokens accepted"), std::string::npos) << mtp.err;
      EXPECT_EQ(mtp.err.find(" 0 of "), std::string::npos) << mtp.err;
    }
  }
  const std::string dense = dir.file("dense.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(dense) +
                        " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 600")
                .exit_code,
            0);
  const auto refused = run_command(met_binary() + " run " + shell_quote(dense) + " --prompt hi -n 4 --spec-mtp");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--spec-mtp: the model has no MTP block"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("KV pool"), std::string::npos) << refused.err;  // not blamed on the pool
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

TEST(MetRun, PromptsFileGivesOneJsonLinePerPromptInInputOrder) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);
  const std::string prompts = write_file(dir, "prompts.jsonl", kPrompts);
  auto r = run_command(met_binary() + " run " + shell_quote(model) + " --prompts-file " + shell_quote(prompts) +
                       " -n 12 --temp 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  const std::vector<std::string> texts = {"hello world", "Once upon a time there was a cat", "abc",
                                          "the quick brown fox jumps over the lazy dog, again and again"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& j = lines[i];
    EXPECT_EQ(j.at("index"), i);
    EXPECT_TRUE(j.at("finish_reason") == "stop" || j.at("finish_reason") == "length") << j;
    EXPECT_GT(j.at("prompt_tokens").get<int>(), 0);
    EXPECT_LE(j.at("completion_tokens").get<int>(), 12);
    EXPECT_GE(j.at("cached_tokens").get<int>(), 0);
    // The same prompt alone through --prompt streams the same text: the lines are in input order.
    auto alone = run_command(met_binary() + " run " + shell_quote(model) + " --prompt " + shell_quote(texts[i]) +
                             " -n 12 --temp 0");
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    EXPECT_EQ(j.at("text"), alone.out) << i;
  }
  EXPECT_GT(lines[3].at("prompt_tokens").get<int>(), lines[2].at("prompt_tokens").get<int>());
}

TEST(MetRun, TinyPoolAndSwapGiveTheSameTextsAsABigPool) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);
  const std::string prompts = write_file(dir, "prompts.jsonl", kPrompts);
  const std::string base = met_binary() + " run " + shell_quote(model) + " --prompts-file " + shell_quote(prompts) +
                           " -n 60 --temp 0 --threads 2";
  auto big = run_command(base);
  auto recompute = run_command(base + " --kv-blocks 6 --preempt recompute");
  auto swap = run_command(base + " --kv-blocks 6 --spill-dir " + shell_quote(dir.file("spill")));
  ASSERT_EQ(big.exit_code, 0) << big.err;
  ASSERT_EQ(recompute.exit_code, 0) << recompute.err;
  ASSERT_EQ(swap.exit_code, 0) << swap.err;
  EXPECT_EQ(preemptions(big.err).swap + preemptions(big.err).recompute, 0) << big.err;
  EXPECT_GT(preemptions(recompute.err).recompute, 0) << recompute.err;  // the small pool did preempt
  EXPECT_EQ(preemptions(recompute.err).swap, 0) << recompute.err;
  EXPECT_GT(preemptions(swap.err).swap, 0) << swap.err;  // --spill-dir alone means swap
  EXPECT_EQ(preemptions(swap.err).recompute, 0) << swap.err;
  const auto expected = texts_of(json_lines(big.out));
  ASSERT_EQ(expected.size(), 4u);
  EXPECT_EQ(texts_of(json_lines(recompute.out)), expected);
  EXPECT_EQ(texts_of(json_lines(swap.out)), expected);
}

// A Q8_0 cache (keys tokens in lanes, values token pairs in lanes, spilled
// as rows: kv_cache.h)
// swapped out and back, or recomputed, gives the texts a roomy one gives.
TEST(MetRun, AQ8_0CacheSwappedOrRecomputedGivesTheTextsOfABigPool) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);  // head_dim 32: one Q8_0 block a head
  const std::string prompts = write_file(dir, "prompts.jsonl", kPrompts);
  const std::string base = met_binary() + " run " + shell_quote(model) + " --prompts-file " + shell_quote(prompts) +
                           " -n 60 --temp 0 --threads 2 --kv-dtype q8_0";
  auto big = run_command(base);
  auto swap = run_command(base + " --kv-blocks 6 --spill-dir " + shell_quote(dir.file("spill")));
  auto recompute = run_command(base + " --kv-blocks 6 --preempt recompute");
  ASSERT_EQ(big.exit_code, 0) << big.err;
  ASSERT_EQ(swap.exit_code, 0) << swap.err;
  ASSERT_EQ(recompute.exit_code, 0) << recompute.err;
  EXPECT_GT(preemptions(swap.err).swap, 0) << swap.err;
  EXPECT_GT(preemptions(recompute.err).recompute, 0) << recompute.err;
  const auto expected = texts_of(json_lines(big.out));
  ASSERT_EQ(expected.size(), 4u);
  EXPECT_EQ(texts_of(json_lines(swap.out)), expected);
  EXPECT_EQ(texts_of(json_lines(recompute.out)), expected);
}

TEST(MetRun, PromptsFileGreedyStories260KIsTheKnownText) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  testing::TempDir dir;
  const std::string prompts = write_file(dir, "prompts.jsonl", "\"Once upon a time\"\n\"\"\n\"Once upon a time\"\n");
  auto r = run_command(met_binary() + " run " + shell_quote(path) + " --prompts-file " + shell_quote(prompts) +
                       " --max-tokens 48 --temp 0 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  const std::string known =
      ", there was a little girl named Lily. She loved to play outside in the park. One day, "
      "she saw a big, red ball. She wanted to play with it,";
  EXPECT_EQ(lines[0].at("text"), known);
  EXPECT_EQ(lines[2].at("text"), known);
  EXPECT_EQ(lines[0].at("finish_reason"), "length");
  EXPECT_EQ(lines[0].at("completion_tokens"), 48);
  // From BOS alone the model tells the same story from its start.
  EXPECT_EQ(lines[1].at("text").get<std::string>().rfind("Once upon a time, there was a little girl named Lily.", 0),
            0u)
      << lines[1];
  EXPECT_EQ(lines[1].at("prompt_tokens"), 1);
}

TEST(MetRun, StopStringEndsTheTextBeforeIt) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " run " + shell_quote(path) +
                       " --prompt 'Once upon a time' -n 48 --temp 0 --stop Lily --stop elephant");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ", there was a little girl named ");
  EXPECT_NE(r.err.find("finish stop"), std::string::npos) << r.err;
}

TEST(MetRun, APromptThePoolCannotHoldGetsAnErrorLineAndANonZeroExit) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);
  const std::string prompts = write_file(
      dir, "prompts.jsonl",
      "\"hi\"\n\"" + std::string(200, 'x') + " " + std::string(200, 'y') + "\"\n\"there\"\n");
  auto r = run_command(met_binary() + " run " + shell_quote(model) + " --prompts-file " + shell_quote(prompts) +
                       " -n 4 --temp 0 --kv-blocks 3");
  EXPECT_NE(r.exit_code, 0);
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_TRUE(lines[0].contains("text"));
  EXPECT_EQ(lines[1].at("index"), 1);
  EXPECT_NE(lines[1].at("error").get<std::string>().find("KV blocks"), std::string::npos) << lines[1];
  EXPECT_FALSE(lines[1].contains("text"));
  EXPECT_TRUE(lines[2].contains("text"));
  EXPECT_NE(r.err.find("met run: 1 of 3 prompts failed"), std::string::npos) << r.err;
}

TEST(MetRun, BadPromptsFileLineIsNamedAndNothingRuns) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);
  for (const std::string bad : {"42", "[\"a\"]", "{\"prompt\": \"a\"}", "\"unterminated", "plain text"}) {
    const std::string prompts = write_file(dir, "bad.jsonl", "\"fine\"\n\n" + bad + "\n\"fine\"\n");
    auto r = run_command(met_binary() + " run " + shell_quote(model) + " --prompts-file " + shell_quote(prompts) +
                         " -n 4");
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_EQ(r.err.rfind("met run: " + prompts + ":3: ", 0), 0u) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(MetRun, BadEngineFlagsExitWithOneLineNamingTheFlag) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --kv-mem 64M --kv-blocks 100", "--kv-mem 64M and --kv-blocks 100"},
      {" --preempt swap", "--preempt swap needs --spill-dir"},
      {" --preempt sometimes", "--preempt 'sometimes'"},
      {" --kv-mem 12Q", "--kv-mem '12Q'"},
      {" --kv-mem 100", "--kv-mem 100 holds no KV block"},
      {" --kv-blocks 0", "--kv-blocks 0"},
      {" --max-seqs 0", "--max-seqs 0"},
      {" --max-seqs 16 --max-batch-tokens 8", "--max-batch-tokens 8"},
      {" --max-seqs 100000 --max-batch-tokens 100000", "--max-seqs 100000"},
      {" --max-batch-tokens 100000000", "--max-batch-tokens 100000000"},
      {" --threads -2", "--threads -2"},
      {" --kv-dtype q4_0", "--kv-dtype 'q4_0'"},
  };
  for (const auto& [args, expected] : cases) {
    auto r = run_command(met_binary() + " run " + shell_quote(model) + " --prompt hi -n 2" + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err.rfind("met run: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

// A hybrid model's state snapshots count in --kv-mem: asking for more than
// it holds beside one block is refused naming both flags. The tiny qwen35
// keeps about 1 MiB of state a sequence.
TEST(MetRun, StateSnapshotsThatLeaveNoKvBlockAreRefusedNamingTheFlags) {
  testing::TempDir dir;
  auto made = run_command(met_binary() + " make-model --arch qwen35 --preset tiny -o " +
                          shell_quote(dir.file("q35.gguf")));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto r = run_command(met_binary() + " run " + shell_quote(dir.file("q35.gguf")) +
                       " --prompt hi -n 2 --kv-mem 4M --state-snapshots 64");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--kv-mem 4M holds no KV block"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--state-snapshots"), std::string::npos) << r.err;
  auto fits = run_command(met_binary() + " run " + shell_quote(dir.file("q35.gguf")) +
                          " --prompt hi -n 2 --kv-mem 64M");
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
}

TEST(MetRun, KvMemSizesThePool) {
  testing::TempDir dir;
  const std::string model = make_small_model(dir);
  // 8 KiB blocks: 16 KiB holds two, too few for a 40-token prompt; 1 MiB is plenty.
  const std::string prompt = shell_quote(std::string(120, 'z'));
  auto small = run_command(met_binary() + " run " + shell_quote(model) + " -n 2 --kv-mem 16K --prompt " + prompt);
  EXPECT_NE(small.exit_code, 0);
  EXPECT_NE(small.err.find("KV blocks"), std::string::npos) << small.err;
  auto big = run_command(met_binary() + " run " + shell_quote(model) + " -n 2 --kv-mem 1MiB --prompt " + prompt);
  EXPECT_EQ(big.exit_code, 0) << big.err;
}

}  // namespace
}  // namespace met
