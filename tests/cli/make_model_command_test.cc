// Tests for `met make-model`, run as a user would run it.
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

TEST(MetMakeModel, ChatTemplateMarkersBecomeSingleControlTokens) {
  testing::TempDir dir;
  const std::string tmpl = dir.file("t.jinja");
  {
    std::ofstream out(tmpl);
    out << "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>' }}"
           "{%- if m.tool_calls %}{{ '<tool_call>' + m.tool_calls | tojson + '</tool_call>' }}{% endif %}"
           "{%- endfor %}{{ '<|im_start|>assistant\\n<think>\\n' }}";
  }
  for (const std::string arch : {"llama", "qwen3"}) {
    const std::string model = dir.file(arch + ".gguf");
    auto made = run_command(met_binary() + " make-model -o " + shell_quote(model) + " --arch " + arch +
                            " --layers 1 --vocab 600 --chat-template " + shell_quote(tmpl));
    ASSERT_EQ(made.exit_code, 0) << made.err;
    for (const std::string marker : {"<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>"}) {
      auto ids = run_command(met_binary() + " tokenize " + shell_quote(model) + " --special --json --text " +
                             shell_quote(marker));
      ASSERT_EQ(ids.exit_code, 0) << ids.err;
      const auto parsed = nlohmann::json::parse(ids.out);
      ASSERT_EQ(parsed.size(), 1u) << arch << " " << marker << ": " << ids.out;
      const std::string id = std::to_string(parsed[0].get<int>());
      auto shown = run_command(met_binary() + " tokenize " + shell_quote(model) + " --special --ids " + id);
      EXPECT_EQ(shown.out, marker) << arch;
      auto skipped = run_command(met_binary() + " tokenize " + shell_quote(model) + " --ids " + id);
      EXPECT_EQ(skipped.out, "") << arch << " " << marker << " is not a control token";
    }
  }
}

TEST(MetMakeModel, SharedChatTemplatesGetTheirFamilyMarkersAsSingleTokens) {
  const auto dir = testing::shared_path("chat-templates");
  if (!dir) GTEST_SKIP() << "../shared/chat-templates is absent (set MET_SHARED_DIR to the shared/ folder)";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"Qwen-Qwen3-0.6B", {"<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>"}},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", {"<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>", "<｜Assistant｜>"}},
      {"mistralai-Ministral-3-14B-Reasoning-2512", {"[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]", "[INST]"}},
      {"openai-gpt-oss-120b", {"<|channel|>", "<|message|>", "<|call|>", "<|end|>"}},
      {"moonshotai-Kimi-K2", {"<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>"}},
  };
  testing::TempDir tmp;
  for (const auto& [name, markers] : cases) {
    const std::string model = tmp.file(name + ".gguf");
    auto made = run_command(met_binary() + " make-model -o " + shell_quote(model) + " --layers 1 --vocab 600" +
                            " --chat-template " + shell_quote(*dir + "/" + name + ".jinja"));
    ASSERT_EQ(made.exit_code, 0) << name << ": " << made.err;
    for (const std::string& marker : markers) {
      auto ids = run_command(met_binary() + " tokenize " + shell_quote(model) + " --special --json --text " +
                             shell_quote(marker));
      ASSERT_EQ(ids.exit_code, 0) << ids.err;
      EXPECT_EQ(nlohmann::json::parse(ids.out).size(), 1u) << name << " " << marker << ": " << ids.out;
    }
  }
}

TEST(MetMakeModel, Qwen35GetsItsPresetShapesAndAnMtpBlock) {
  testing::TempDir dir;
  const std::string out = dir.file("m.gguf");
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(out) +
                       " --arch qwen35moe --vocab 600 --dtype q8_0 --layers 6 --full-attn-interval 3 --ssm-groups 2"
                       " --ssm-heads 4 --ssm-state 32 --mtp-layers 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("qwen35moe"), std::string::npos) << r.out;
  auto info = run_command(met_binary() + " info --json " + shell_quote(out));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["architecture"], "qwen35moe");
  EXPECT_EQ(j["hparams"]["layers"], 6);
  EXPECT_EQ(j["hparams"]["mtp_layers"], 1);
  EXPECT_EQ(j["hparams"]["head_dim"], 64);  // the tiny preset's
  EXPECT_EQ(j["hparams"]["gated_delta"]["layers"], nlohmann::json::parse("[0, 1, 3, 4]"));
  EXPECT_EQ(j["hparams"]["gated_delta"]["key_heads"], 2);
  EXPECT_EQ(j["hparams"]["gated_delta"]["value_heads"], 4);
  EXPECT_EQ(j["hparams"]["gated_delta"]["state_size"], 32);
  EXPECT_EQ(j["hparams"]["experts"]["shared_feed_forward"], 192);  // as wide as an expert
  auto text = run_command(met_binary() + " info " + shell_quote(out));
  EXPECT_NE(text.out.find("6 (4 gated delta, 2 attention) + 1 MTP"), std::string::npos) << text.out;
}

TEST(MetMakeModel, Qwen3NextIsQwen35MoeWithoutRopeSections) {
  testing::TempDir dir;
  const std::string out = dir.file("m.gguf");
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(out) + " --arch qwen3next --vocab 600");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto info = run_command(met_binary() + " info --json " + shell_quote(out));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["architecture"], "qwen3next");
  EXPECT_EQ(j["hparams"]["mtp_layers"], 1);
  EXPECT_FALSE(j["hparams"]["rope"].contains("sections")) << j["hparams"]["rope"].dump();
  EXPECT_GT(j["hparams"]["experts"]["count"], 0);
  EXPECT_GT(j["hparams"]["experts"]["shared_feed_forward"], 0);
  auto text = run_command(met_binary() + " info " + shell_quote(out));
  EXPECT_NE(text.out.find("8 (6 gated delta, 2 attention) + 1 MTP"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("sections"), std::string::npos) << text.out;
}

TEST(MetMakeModel, Mamba2HybridsGetTheirPatternAndInfoShowsLayerKindsAndStateBytes) {
  testing::TempDir dir;
  const std::string out = dir.file("m.gguf");
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(out) +
                       " --arch nemotron_h --vocab 600 --dtype q8_0 --layers 6 --pattern 'M-*' --ssm-state 32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto info = run_command(met_binary() + " info --json " + shell_quote(out));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["architecture"], "nemotron_h");
  EXPECT_EQ(j["hparams"]["mamba2"]["layers"], nlohmann::json::parse("[0, 3]"));
  EXPECT_EQ(j["hparams"]["mamba2"]["mlp_layers"], nlohmann::json::parse("[1, 4]"));
  EXPECT_EQ(j["hparams"]["mamba2"]["heads"], 8);  // the tiny preset's: d_inner 512 in heads of 64
  EXPECT_EQ(j["hparams"]["mamba2"]["state_size"], 32);
  // 2 layers x (3 x (512 + 2 x 2 x 32) conv + 512 x 32 scan) floats.
  EXPECT_EQ(j["hparams"]["mamba2"]["state_bytes_per_sequence"], 2 * (3 * 640 + 512 * 32) * 4);
  EXPECT_EQ(j["hparams"]["rope"]["enabled"], false);
  auto text = run_command(met_binary() + " info " + shell_quote(out));
  EXPECT_NE(text.out.find("6 (2 Mamba2, 2 attention, 2 MLP)"), std::string::npos) << text.out;
  r = run_command(met_binary() + " make-model -o " + shell_quote(out) + " --arch granitehybrid --vocab 600");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  text = run_command(met_binary() + " info " + shell_quote(out));
  EXPECT_NE(text.out.find("8 (6 Mamba2, 2 attention)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("scales         embedding 12, residual 0.22"), std::string::npos) << text.out;
  r = run_command(met_binary() + " make-model -o " + shell_quote(out) +
                  " --arch granitehybrid --vocab 600 --experts 4 --experts-used 2 --shared-expert-ff 96");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  text = run_command(met_binary() + " info " + shell_quote(out));
  EXPECT_NE(text.out.find("experts        4, 2 used per token, feed-forward 768, shared expert 96"), std::string::npos)
      << text.out;
  r = run_command(met_binary() + " make-model -o " + shell_quote(out) + " --arch granitehybrid --pattern 'M-*'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--pattern 'M-*' must be made of 'M*'"), std::string::npos) << r.err;
  r = run_command(met_binary() + " make-model -o " + shell_quote(out) + " --pattern 'M*'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("need --arch granitehybrid or nemotron_h"), std::string::npos) << r.err;
}

TEST(MetMakeModel, GatedDeltaFlagsNeedAQwen35Arch) {
  testing::TempDir dir;
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("m.gguf")) + " --ssm-state 32");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("need --arch qwen35, qwen35moe or qwen3next"), std::string::npos) << r.err;
  r = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("m.gguf")) +
                  " --arch qwen35 --ssm-groups 3 --ssm-heads 4");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--ssm-heads 4 must be a positive multiple of --ssm-groups 3"), std::string::npos) << r.err;
  r = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("m.gguf")) +
                  " --arch gpt-oss --mtp-layers 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("gpt-oss models get no MTP block"), std::string::npos) << r.err;
}

TEST(MetMakeModel, BadArgumentsExitNonZeroWithOneLine) {
  testing::TempDir dir;
  const std::string base = met_binary() + " make-model -o " + shell_quote(dir.file("m.gguf"));
  for (const std::string& args : {std::string(" --arch gpt9"), std::string(" --heads 3"),
                                  std::string(" --dtype iq2_xxs"), std::string(" --vocab 10"),
                                  std::string(" --chat-template /nonexistent.jinja")}) {
    auto r = run_command(base + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("met make-model: ", 0), 0u) << r.err;
  }
}

// --llama3-rope adds rope_freqs.weight (which met and llama.cpp apply; see
// cpu_device_test.cc), for llama only.
TEST(MetMakeModel, Llama3RopeWritesTheFrequencyTensorForLlamaOnly) {
  testing::TempDir dir;
  const std::string shape = " --layers 1 --embd 256 --heads 4 --ff 512 --vocab 512";
  const auto count = [&](const std::string& flags) {
    const std::string path = dir.file("m.gguf");
    auto r = run_command(met_binary() + " make-model -o " + shell_quote(path) + shape + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto info = run_command(met_binary() + " info --json " + shell_quote(path));
    EXPECT_EQ(info.exit_code, 0) << info.err;
    return nlohmann::json::parse(info.out)["tensors"]["count"].get<int>();
  };
  EXPECT_EQ(count(" --llama3-rope"), count("") + 1);
  auto refused = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("q.gguf")) + shape +
                             " --arch qwen3 --llama3-rope");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_NE(refused.err.find("--llama3-rope"), std::string::npos) << refused.err;
}

// Each dense arch beyond llama's shape: made, read back by `met info`, and
// run by `met run` (a real forward of the arch's graph end to end).
TEST(MetMakeModel, TheDenseArchsRunAsMade) {
  testing::TempDir dir;
  for (const std::string arch : {"gemma2", "gemma3", "granite", "smollm3", "olmo2", "phi3"}) {
    const std::string path = dir.file(arch + ".gguf");
    auto r = run_command(met_binary() + " make-model -o " + shell_quote(path) + " --arch " + arch +
                         " --layers 4 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 512 --seed 5");
    ASSERT_EQ(r.exit_code, 0) << arch << ": " << r.err;
    auto info = run_command(met_binary() + " info --json " + shell_quote(path));
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)["architecture"], arch);
    auto run = run_command(met_binary() + " run " + shell_quote(path) + " -p hello -n 4 --temp 0");
    EXPECT_EQ(run.exit_code, 0) << arch << ": " << run.err;
  }
  // gemma4 at 8 layers: layers 3 and 7 global, 4..7 reading the KV of 2 and 3.
  const std::string gemma4 = dir.file("gemma4.gguf");
  auto made = run_command(met_binary() + " make-model -o " + shell_quote(gemma4) +
                          " --arch gemma4 --layers 8 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 512 --seed 5");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto info = run_command(met_binary() + " info --json " + shell_quote(gemma4));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["architecture"], "gemma4");
  auto run = run_command(met_binary() + " run " + shell_quote(gemma4) + " -p hello -n 4 --temp 0");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto refused = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("x.gguf")) +
                             " --arch granite --sliding-window 8");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--sliding-window"), std::string::npos) << refused.err;
}

TEST(MetMakeModel, TheEncodersAreMadeAsEmbeddingModelsThatGenerateNothing) {
  testing::TempDir dir;
  for (const std::string arch : {"bert", "nomic-bert"}) {
    const std::string path = dir.file(arch + ".gguf");
    auto r = run_command(met_binary() + " make-model -o " + shell_quote(path) + " --arch " + arch +
                         " --layers 2 --embd 128 --heads 4 --ff 256 --vocab 600");
    ASSERT_EQ(r.exit_code, 0) << arch << ": " << r.err;
    auto info = run_command(met_binary() + " info --json " + shell_quote(path));
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const nlohmann::json j = nlohmann::json::parse(info.out);
    EXPECT_EQ(j["architecture"], arch);
    EXPECT_EQ(j["hparams"]["causal"], false);
    EXPECT_EQ(j["hparams"]["pooling"], arch == "bert" ? "cls" : "mean");
    auto run = run_command(met_binary() + " run " + shell_quote(path) + " -p hello -n 4 --temp 0");
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find("gives embeddings, not text"), std::string::npos) << run.err;
  }
  auto gqa = run_command(met_binary() + " make-model -o " + shell_quote(dir.file("x.gguf")) +
                         " --arch bert --heads 4 --kv-heads 2");
  EXPECT_NE(gqa.exit_code, 0);
  EXPECT_NE(gqa.err.find("as many key/value heads as heads"), std::string::npos) << gqa.err;
}

}  // namespace
}  // namespace met
