// From chat template to parsed message: for each recorded generation in
// tests/chat/data/recorded_generations.json, render the template's generation
// prompt (user question, one tool), detect the format, tell from the prompt
// whether generation starts inside thinking, and parse the generation in every
// split. Skips when ../shared/chat-templates is absent.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "chat/output/format_detection.h"
#include "output_test_support.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Json render_context(const Json& kwargs) {
  Json context = Json::parse(R"({
    "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
               "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                              "required": ["location"]}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
  for (const auto& [key, value] : kwargs.items()) context[key] = value;
  return context;
}

// The prompt the template renders for the case, or an error message.
Result<std::string> render_prompt(const std::string& source, const Json& kwargs) {
  Result<ChatTemplate> tmpl = ChatTemplate::parse(source);
  if (!tmpl.ok()) return tmpl.status();
  TemplateOptions options;
  options.now_iso8601 = "2026-01-15";
  return tmpl->render(render_context(kwargs), options);
}

void check_case(const std::string& dir, const Json& c) {
  const std::string name = c["template"].get<std::string>();
  SCOPED_TRACE(name);
  const std::string source = read_file(dir + "/" + name);
  ASSERT_FALSE(source.empty());
  const ChatFormat format = detect_chat_format(source);
  Result<std::string> prompt = render_prompt(source, c["kwargs"]);
  ASSERT_TRUE(prompt.ok()) << prompt.status().to_string();
  testing::SplitCheck check;
  check.options.starts_in_thinking = generation_starts_in_thinking(*prompt, format);
  const ParsedMessage message = testing::parse_every_way(format, c["output"].get<std::string>(), check);
  std::vector<testing::ExpectedCall> calls;
  for (const Json& call : c["tool_calls"]) calls.push_back({call["name"].get<std::string>(), call["arguments"].dump()});
  testing::expect_message(message, c["reasoning"].get<std::string>(), c["content"].get<std::string>(), calls,
                          c["ended_with_tool_call"].get<bool>());
}

TEST(TemplateToParser, RecordedGenerationsParseAfterTheirRenderedPrompts) {
  MET_REQUIRE_SHARED(dir, "chat-templates");
  const Json data = Json::parse(read_file(MET_SOURCE_DIR "/tests/chat/data/recorded_generations.json"));
  ASSERT_GE(data["cases"].size(), 10u);
  for (const Json& c : data["cases"]) check_case(dir, c);
}

TEST(TemplateToParser, ThinkingTemplatesOpenThinkingInTheirGenerationPrompt) {
  MET_REQUIRE_SHARED(dir, "chat-templates");
  for (const char* name : {"Qwen-QwQ-32B.jinja", "Qwen3.5-4B.jinja", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
                           "GLM-4.7-Flash.jinja", "llama-cpp-deepseek-r1.jinja"}) {
    SCOPED_TRACE(name);
    const std::string source = read_file(dir + "/" + name);
    Result<std::string> prompt = render_prompt(source, Json::parse(R"({"enable_thinking": true})"));
    ASSERT_TRUE(prompt.ok()) << prompt.status().to_string();
    EXPECT_TRUE(generation_starts_in_thinking(*prompt, detect_chat_format(source)));
  }
  const std::string qwen3 = read_file(dir + "/Qwen-Qwen3-0.6B.jinja");
  Result<std::string> off = render_prompt(qwen3, Json::parse(R"({"enable_thinking": false})"));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(generation_starts_in_thinking(*off, detect_chat_format(qwen3)));
}

}  // namespace
}  // namespace met
