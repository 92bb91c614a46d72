// Tests for the tool-call arguments probe and rewrite: a template that reads
// arguments as a mapping gets objects, one that prints the string gets it.
#include "chat/tool_call_arguments.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "testing/shared_data.h"

namespace met {
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

TEST(ToolCallArguments, ATemplateThatPrintsTheStringKeepsStrings) {
  const ChatTemplate t = parse(
      "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments }}{% endfor %}{% endfor %}");
  EXPECT_FALSE(template_wants_object_arguments(t));
}

TEST(ToolCallArguments, ATemplateThatIteratesOrEncodesTheArgumentsGetsObjects) {
  const ChatTemplate items = parse(
      "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
      "{{ k }}={{ v }}{% endfor %}{% endfor %}{% endfor %}");
  EXPECT_TRUE(template_wants_object_arguments(items));
  const ChatTemplate tojson = parse(
      "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson }}{% endfor %}"
      "{% endfor %}");
  EXPECT_TRUE(template_wants_object_arguments(tojson)) << "a string would come out double-encoded";
}

TEST(ToolCallArguments, RealTemplatesAreProbedAsLlamaCppTreatsThem) {
  MET_REQUIRE_SHARED(qwen35, "chat-templates/Qwen3.5-4B.jinja");
  MET_REQUIRE_SHARED(r1, "chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja");
  MET_REQUIRE_SHARED(functionary, "chat-templates/meetkai-functionary-medium-v3.2.jinja");
  MET_REQUIRE_SHARED(kimi, "chat-templates/Kimi-K2-Instruct.jinja");
  EXPECT_TRUE(template_wants_object_arguments(from_file(qwen35))) << "iterates arguments.items()";
  EXPECT_TRUE(template_wants_object_arguments(from_file(r1))) << "writes arguments | tojson";
  EXPECT_FALSE(template_wants_object_arguments(from_file(functionary))) << "concatenates the string";
  EXPECT_FALSE(template_wants_object_arguments(from_file(kimi))) << "takes either; a string verbatim";
}

TEST(ToolCallArguments, TheRewriteTurnsJsonStringsIntoObjectsAndBack) {
  const Json messages = Json::parse(R"([{"role": "user", "content": "x"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"city\": \"Oslo\"}"}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "not json"}}]}])");
  const Json objects = with_arguments_as(messages, true);
  EXPECT_EQ(objects[1]["tool_calls"][0]["function"]["arguments"], Json::parse(R"({"city": "Oslo"})"));
  EXPECT_EQ(objects[1]["tool_calls"][1]["function"]["arguments"], "not json") << "kept as sent";
  const Json strings = with_arguments_as(objects, false);
  EXPECT_EQ(Json::parse(strings[1]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            Json::parse(R"({"city": "Oslo"})"));
  EXPECT_EQ(strings[0], messages[0]);
}

}  // namespace
}  // namespace met
