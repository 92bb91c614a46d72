// chat_control_tokens lists the markers and literal special strings a chat
// template needs as control tokens.
#include "chat/output/chat_control_tokens.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "testing/shared_data.h"

namespace met {
namespace {

bool has_entry(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string read_shared(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(ChatControlTokens, ChatMlWithToolsGivesMarkersAndLiterals) {
  const auto tokens = chat_control_tokens(
      "{{- '<|im_start|>' + m.role }}{{ '<tool_call>\\n' }}{{ '</tool_call>' }}{% if x %}<think>{% endif %}"
      "{{ '<|im_end|>' }}{{ '<|im_start|>' }}");
  EXPECT_EQ(tokens, (std::vector<std::string>{"<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>",
                                              "<|im_end|>"}));
}

TEST(ChatControlTokens, MistralBracketsAndDeepSeekFullWidthLiterals) {
  const auto mistral = chat_control_tokens("{{ '[INST]' + c + '[/INST]' }}{{ '[TOOL_CALLS]' }}{{ x[0] }}{{ y[ID] }}");
  EXPECT_TRUE(has_entry(mistral, "[INST]"));
  EXPECT_TRUE(has_entry(mistral, "[/INST]"));
  EXPECT_TRUE(has_entry(mistral, "[TOOL_CALLS]"));
  EXPECT_TRUE(has_entry(mistral, "[ARGS]"));  // from the family's markers
  EXPECT_FALSE(has_entry(mistral, "[ID]"));   // too short to be a token
  const auto deepseek = chat_control_tokens("{{ '<｜User｜>' + c + '<｜Assistant｜>' }}");
  EXPECT_TRUE(has_entry(deepseek, "<｜User｜>"));
  EXPECT_TRUE(has_entry(deepseek, "<｜Assistant｜>"));
}

TEST(ChatControlTokens, SharedTemplatesGetTheirToolAndThinkMarkers) {
  MET_REQUIRE_SHARED(qwen3, "chat-templates/Qwen-Qwen3-0.6B.jinja");
  const auto tokens = chat_control_tokens(read_shared(qwen3));
  for (const char* marker : {"<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"}) {
    EXPECT_TRUE(has_entry(tokens, marker)) << marker;
  }
  MET_REQUIRE_SHARED(r1, "chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja");
  const auto r1_tokens = chat_control_tokens(read_shared(r1));
  for (const char* marker : {"<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>", "<｜Assistant｜>", "<think>"}) {
    EXPECT_TRUE(has_entry(r1_tokens, marker)) << marker;
  }
}

}  // namespace
}  // namespace met
