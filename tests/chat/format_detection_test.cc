// Format detection against every chat template in ../shared/chat-templates
// (each file has its expected family and think markers), plus the
// generation-starts-in-thinking query.
#include "chat/output/format_detection.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "testing/shared_data.h"

namespace met {
namespace {

struct Expected {
  ChatFamily family;
  std::string think_start;
};

const std::map<std::string, Expected>& expected_formats() {
  using F = ChatFamily;
  static const std::map<std::string, Expected> table = {
      {"Apertus-8B-Instruct", {F::kGeneric, ""}},
      {"Apriel-1.6-15b-Thinker-fixed", {F::kApriel, ""}},
      {"Bielik-11B-v3.0-Instruct", {F::kHermes, "<think>"}},
      {"ByteDance-Seed-OSS", {F::kSeedOss, "<seed:think>"}},
      {"CohereForAI-c4ai-command-r-plus-tool_use", {F::kCommandR, ""}},
      {"CohereForAI-c4ai-command-r7b-12-2024-tool_use", {F::kCommandR7B, "<|START_THINKING|>"}},
      {"GLM-4.6", {F::kGlm45, "<think>"}},
      {"GLM-4.7-Flash", {F::kGlm45, "<think>"}},
      {"GigaChat3-10B-A1.8B", {F::kGeneric, ""}},
      {"GigaChat3.1-10B-A1.8B", {F::kGeneric, ""}},
      {"HuggingFaceTB-SmolLM3-3B", {F::kGeneric, "<think>"}},
      {"Kimi-K2-Instruct", {F::kKimiK2, ""}},
      {"Kimi-K2-Thinking", {F::kKimiK2, "<think>"}},
      {"LFM2-8B-A1B", {F::kGeneric, ""}},
      {"LFM2.5-8B-A1B", {F::kGeneric, "<think>"}},
      {"LFM2.5-Instruct", {F::kGeneric, "<think>"}},
      {"MiMo-VL", {F::kHermes, ""}},
      {"MiniMax-M2", {F::kMiniMaxM2, "<think>"}},
      {"Mistral-Small-3.2-24B-Instruct-2506", {F::kMistral, ""}},
      {"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", {F::kQwen3Coder, "<think>"}},
      {"NVIDIA-Nemotron-Nano-v2", {F::kGeneric, "<think>"}},
      {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", {F::kHermes, ""}},
      {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", {F::kHermes, ""}},
      {"Qwen-QwQ-32B", {F::kHermes, "<think>"}},
      {"Qwen-Qwen2.5-7B-Instruct", {F::kHermes, ""}},
      {"Qwen-Qwen3-0.6B", {F::kHermes, "<think>"}},
      {"Qwen3-Coder", {F::kQwen3Coder, ""}},
      {"Qwen3.5-4B", {F::kQwen3Coder, "<think>"}},
      {"Reka-Edge", {F::kHermes, "<think>"}},
      {"StepFun3.5-Flash", {F::kQwen3Coder, "<think>"}},
      {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", {F::kDeepSeekR1, "<think>"}},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", {F::kDeepSeekR1, "<think>"}},
      {"deepseek-ai-DeepSeek-V3.1", {F::kDeepSeekV31, "<think>"}},
      {"deepseek-ai-DeepSeek-V3.2", {F::kDeepSeekV32, "<think>"}},
      {"fireworks-ai-llama-3-firefunction-v2", {F::kGeneric, ""}},
      {"google-gemma-2-2b-it", {F::kGeneric, ""}},
      {"google-gemma-4-31B-it-interleaved", {F::kGeneric, ""}},
      {"google-gemma-4-31B-it", {F::kGeneric, ""}},
      {"ibm-granite-granite-3.3-2B-Instruct", {F::kGeneric, "<think>"}},
      {"ibm-granite-granite-4.0", {F::kHermes, ""}},
      {"ibm-granite-granite-4.1", {F::kHermes, ""}},
      {"llama-cpp-deepseek-r1", {F::kDeepSeekR1, "<think>"}},
      {"llama-cpp-rwkv-world", {F::kGeneric, "<think>"}},
      {"meetkai-functionary-medium-v3.1", {F::kFunctionaryV31, ""}},
      {"meetkai-functionary-medium-v3.2", {F::kFunctionaryV32, ""}},
      {"meta-llama-Llama-3.1-8B-Instruct", {F::kLlama3, ""}},
      {"meta-llama-Llama-3.2-3B-Instruct", {F::kLlama3, ""}},
      {"meta-llama-Llama-3.3-70B-Instruct", {F::kLlama3, ""}},
      {"microsoft-Phi-3.5-mini-instruct", {F::kGeneric, ""}},
      {"mistralai-Ministral-3-14B-Reasoning-2512", {F::kMistral, "[THINK]"}},
      {"mistralai-Mistral-Nemo-Instruct-2407", {F::kMistral, ""}},
      {"moonshotai-Kimi-K2", {F::kKimiK2, ""}},
      {"openai-gpt-oss-120b", {F::kGptOss, "<|channel|>analysis<|message|>"}},
      {"stepfun-ai-Step-3.5-Flash", {F::kQwen3Coder, "<think>"}},
      {"unsloth-Apriel-1.5", {F::kApriel, ""}},
      {"unsloth-mistral-Devstral-Small-2507", {F::kMistral, ""}},
      {"upstage-Solar-Open-100B", {F::kGeneric, ""}},
  };
  return table;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(FormatDetection, EverySharedTemplateGetsItsFamilyAndThinkMarkers) {
  MET_REQUIRE_SHARED(dir, "chat-templates");
  size_t num_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    const std::string name = entry.path().stem().string();
    const auto it = expected_formats().find(name);
    ASSERT_NE(it, expected_formats().end()) << name << " has no expected format in this test";
    const ChatFormat format = detect_chat_format(read_file(entry.path()));
    EXPECT_EQ(chat_family_name(format.family), chat_family_name(it->second.family)) << name;
    EXPECT_EQ(format.think_start, it->second.think_start) << name;
    EXPECT_EQ(format.think_start.empty(), format.think_end.empty()) << name;
    ++num_checked;
  }
  EXPECT_EQ(num_checked, expected_formats().size());
}

TEST(FormatDetection, UnknownTemplateIsGeneric) {
  EXPECT_EQ(detect_chat_format("{{ messages[0].content }}"), ChatFormat{});
}

TEST(FormatDetection, VocabThinkTokensApplyWhenTheTemplateShowsNone) {
  const std::string tokens[] = {"<|im_start|>", "<think>", "</think>"};
  const ChatFormat format = detect_chat_format("{{ '<tool_call>' }}", tokens);
  EXPECT_EQ(format, (ChatFormat{ChatFamily::kHermes, "<think>", "</think>"}));
}

TEST(FormatDetection, GenerationStartsInThinkingWhenThePromptEndsWithThinkStart) {
  const ChatFormat qwen3{ChatFamily::kHermes, "<think>", "</think>"};
  EXPECT_TRUE(generation_starts_in_thinking("<|im_start|>assistant\n<think>\n", qwen3));
  EXPECT_FALSE(generation_starts_in_thinking("<|im_start|>assistant\n<think>\n\n</think>\n\n", qwen3));
  EXPECT_FALSE(generation_starts_in_thinking("<|im_start|>assistant\n", qwen3));
  EXPECT_TRUE(generation_starts_in_thinking("<think>old</think>answer<|im_end|>\n<|im_start|>assistant\n<think>\n", qwen3));
  const ChatFormat r1{ChatFamily::kDeepSeekR1, "<think>", "</think>"};
  EXPECT_TRUE(generation_starts_in_thinking("<｜User｜>hi<｜Assistant｜><think>\n", r1));
  EXPECT_FALSE(generation_starts_in_thinking("<think>\n", ChatFormat{}));
  const ChatFormat harmony{ChatFamily::kGptOss, "<|channel|>analysis<|message|>", "<|end|>"};
  EXPECT_FALSE(generation_starts_in_thinking("<|start|>assistant", harmony));
  EXPECT_TRUE(generation_starts_in_thinking("<|start|>assistant<|channel|>analysis<|message|>", harmony));
  EXPECT_FALSE(generation_starts_in_thinking("<|start|>assistant<|channel|>analysis<|message|>Hm.<|end|>"
                                             "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}"
                                             "<|call|><|start|>assistant", harmony))
      << "an earlier turn's analysis is closed";
}

}  // namespace
}  // namespace met
