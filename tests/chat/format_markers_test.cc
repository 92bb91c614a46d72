// format_markers exposes each family's markers as plain strings.
#include "chat/output/format_markers.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace met {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

TEST(FormatMarkers, Qwen3HasThinkAndToolCallMarkers) {
  const FormatMarkers markers = format_markers(ChatFormat{ChatFamily::kHermes, "<think>", "</think>"});
  EXPECT_EQ(markers.think_end, "</think>");
  EXPECT_EQ(markers.tool_call_start, "<tool_call>");
  EXPECT_EQ(markers.tool_call_end, "</tool_call>");
  EXPECT_EQ(markers.special_strings, (std::vector<std::string>{"<think>", "</think>", "<tool_call>", "</tool_call>"}));
}

TEST(FormatMarkers, SpecialStringsHoldOnlySingleTokensWithoutDuplicates) {
  for (int f = 0; f <= static_cast<int>(ChatFamily::kApriel); ++f) {
    const FormatMarkers markers = format_markers(ChatFormat{static_cast<ChatFamily>(f), "<think>", "</think>"});
    for (const std::string& s : markers.special_strings) {
      EXPECT_FALSE(s.empty());
      EXPECT_EQ(std::count(markers.special_strings.begin(), markers.special_strings.end(), s), 1) << s;
    }
  }
  const FormatMarkers command_r = format_markers(ChatFormat{ChatFamily::kCommandR, "", ""});
  EXPECT_EQ(command_r.tool_call_start, "Action:");
  EXPECT_FALSE(contains(command_r.special_strings, "Action:"));
}

TEST(FormatMarkers, HarmonyListsItsChannelTokensButNotCompositeThinkMarkers) {
  const FormatMarkers markers =
      format_markers(ChatFormat{ChatFamily::kGptOss, "<|channel|>analysis<|message|>", "<|end|>"});
  EXPECT_TRUE(contains(markers.special_strings, "<|channel|>"));
  EXPECT_TRUE(contains(markers.special_strings, "<|call|>"));
  EXPECT_FALSE(contains(markers.special_strings, "<|channel|>analysis<|message|>"));
}

TEST(FormatMarkers, DeepSeekAndKimiListTheirCallTokens) {
  EXPECT_TRUE(contains(format_markers(ChatFormat{ChatFamily::kDeepSeekR1, "<think>", "</think>"}).special_strings,
                       "<｜tool▁sep｜>"));
  EXPECT_TRUE(contains(format_markers(ChatFormat{ChatFamily::kKimiK2, "", ""}).special_strings,
                       "<|tool_call_argument_begin|>"));
}

}  // namespace
}  // namespace met
