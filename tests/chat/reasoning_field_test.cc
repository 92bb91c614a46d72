// Tests for the reasoning field probe and rewrite (chat/reasoning_field.h): a
// template that reads a turn's reasoning from `thinking` (gpt-oss's, LFM2.5's)
// gets the reasoning_content clients send back there; others keep it as sent.
#include "chat/reasoning_field.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "testing/shared_data.h"

namespace met {
namespace reasoning_field_test {
namespace {

using Json = nlohmann::ordered_json;

ChatTemplate parse(const std::string& source) {
  Result<ChatTemplate> t = ChatTemplate::parse(source);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(*t);
}

ChatTemplate from_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

TEST(ReasoningField, OnlyATemplateThatPrintsThinkingAndNotReasoningContentReadsThinking) {
  EXPECT_TRUE(template_reads_thinking(parse("{% for m in messages %}{{ m.thinking }}{% endfor %}")));
  EXPECT_FALSE(template_reads_thinking(parse("{% for m in messages %}{{ m.reasoning_content }}{% endfor %}")));
  EXPECT_FALSE(template_reads_thinking(parse("{% for m in messages %}{{ m.content }}{% endfor %}")));
  EXPECT_FALSE(template_reads_thinking(
      parse("{% for m in messages %}{{ m.thinking }}{{ m.reasoning_content }}{% endfor %}")))
      << "a template that reads both gets what the client sent";
}

TEST(ReasoningField, RealTemplatesAreProbed) {
  MET_REQUIRE_SHARED(gpt_oss, "chat-templates/openai-gpt-oss-120b.jinja");
  MET_REQUIRE_SHARED(qwen35, "chat-templates/Qwen3.5-4B.jinja");
  EXPECT_TRUE(template_reads_thinking(from_file(gpt_oss))) << "harmony's analysis of a tool-call turn";
  EXPECT_FALSE(template_reads_thinking(from_file(qwen35))) << "reads reasoning_content";
}

TEST(ReasoningField, TheRewriteCopiesReasoningContentIntoThinkingWhereItIsMissing) {
  const Json messages = Json::parse(R"([{"role": "user", "content": "x"},
      {"role": "assistant", "content": null, "reasoning_content": "Need f.",
       "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "assistant", "content": "Done.", "reasoning_content": "r", "thinking": "own"},
      {"role": "assistant", "content": "Also.", "reasoning_content": "Said so.",
       "tool_calls": [{"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "assistant", "content": "Plain.", "reasoning_content": "Thought."}])");
  const Json out = with_reasoning_as_thinking(messages);
  EXPECT_EQ(out[0], messages[0]);
  EXPECT_EQ(out[1]["thinking"], "Need f.");
  EXPECT_EQ(out[2]["thinking"], "own") << "a turn's own thinking wins";
  EXPECT_FALSE(out[3].contains("thinking")) << "a call turn with content: harmony takes one or the other";
  EXPECT_EQ(out[4]["thinking"], "Thought.");
}

}  // namespace
}  // namespace reasoning_field_test
}  // namespace met
