// A property over every family: for random texts stitched from the family's
// markers, plausible call bodies and plain text (well formed or not), the
// parse never depends on how the text is split, events always concatenate to
// the message, and tool arguments are always JSON objects.
#include <random>

#include <gtest/gtest.h>

#include "chat/output/format_markers.h"
#include "output_test_support.h"

namespace met {
namespace {

const std::vector<std::string> kFragments = {
    "Hello", " world", "\n", "  ", "é東🎉", "{", "}", "\"", ":", ",", "[", "]", "```json\n", "```", "\\",
    "{\"name\": \"f\", \"arguments\": {\"a\": 1}}", "{\"name\": \"g\", \"parameters\": {}}", "{\"x\": [1, \"y\"]}",
    "get_weather", "functions.f:0", "<function=f>", "</function>", "<parameter=a>", "\nv\n", "</parameter>",
    "<arg_key>k</arg_key>", "<arg_value>3</arg_value>", "<｜DSML｜parameter name=\"p\" string=\"true\">",
    "</｜DSML｜parameter>", "<parameter name=\"q\">", "f\">", "[ARGS]", "[CALL_ID]abc", "all\n", ">>>",
    "<|channel|>", "analysis", "final", "commentary to=functions.f ", "<|message|>", "<|end|>", "<|call|>",
    "<|start|>assistant", "Action:", "<|tool_call_argument_begin|>", "<｜tool▁sep｜>", "function",
};

std::vector<std::string> family_pieces(ChatFamily family) {
  const ChatFormat format{family, "<think>", "</think>"};
  const FormatMarkers markers = format_markers(format);
  std::vector<std::string> pieces = kFragments;
  pieces.insert(pieces.end(), markers.special_strings.begin(), markers.special_strings.end());
  if (!markers.tool_call_start.empty()) pieces.push_back(markers.tool_call_start);
  if (!markers.tool_call_end.empty()) pieces.push_back(markers.tool_call_end);
  return pieces;
}

std::string random_text(const std::vector<std::string>& pieces, std::mt19937& rng) {
  std::uniform_int_distribution<size_t> count(1, 14);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::string text;
  for (size_t n = count(rng); n > 0; --n) text += pieces[pick(rng)];
  return text;
}

TEST(SplitInvariance, RandomMarkupParsesTheSameInEverySplitForEveryFamily) {
  std::mt19937 rng(20260101);
  for (int f = 0; f <= static_cast<int>(ChatFamily::kApriel); ++f) {
    const auto family = static_cast<ChatFamily>(f);
    SCOPED_TRACE(std::string(chat_family_name(family)));
    const std::vector<std::string> pieces = family_pieces(family);
    const ChatFormat format{family, family == ChatFamily::kGptOss ? "<|channel|>analysis<|message|>" : "<think>",
                            family == ChatFamily::kGptOss ? "<|end|>" : "</think>"};
    for (int trial = 0; trial < 60 && !HasFailure(); ++trial) {
      const std::string text = random_text(pieces, rng);
      SCOPED_TRACE(text);
      testing::SplitCheck check;
      check.content_is_clean = false;
      check.options.starts_in_thinking = trial % 3 == 0;
      check.options.stream_tool_calls = trial % 2 == 0;
      (void)testing::parse_every_way(format, text, check);
    }
  }
}

}  // namespace
}  // namespace met
