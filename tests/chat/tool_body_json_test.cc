// JSON tool-call bodies: call objects, lists, named arguments, and errors
// (never exceptions) for malformed ones.
#include "chat/output/tool_body_json.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(ToolBodyJson, CallObjectGivesNameAndCompactArguments) {
  auto calls = parse_call_object(" {\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": [true]}} ", CallKeys{});
  ASSERT_TRUE(calls.ok()) << calls.status().message();
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].name, "f");
  EXPECT_EQ((*calls)[0].argument_pieces, std::vector<std::string>{R"({"a":1,"b":[true]})"});
}

TEST(ToolBodyJson, ParametersKeyAndMissingArguments) {
  auto with_parameters = parse_call_object(R"({"name": "f", "parameters": {"x": "y"}})", CallKeys{});
  ASSERT_TRUE(with_parameters.ok());
  EXPECT_EQ((*with_parameters)[0].argument_pieces[0], R"({"x":"y"})");
  auto without = parse_call_object(R"({"name": "f"})", CallKeys{});
  ASSERT_TRUE(without.ok());
  EXPECT_EQ((*without)[0].argument_pieces[0], "{}");
  CallKeys strict;
  strict.require_arguments = true;
  EXPECT_FALSE(parse_call_object(R"({"name": "f"})", strict).ok());
}

TEST(ToolBodyJson, MalformedBodiesAreErrors) {
  EXPECT_FALSE(parse_call_object("{\"name\": ", CallKeys{}).ok());
  EXPECT_FALSE(parse_call_object(R"({"arguments": {}})", CallKeys{}).ok());
  EXPECT_FALSE(parse_call_object(R"({"name": "f", "arguments": [1]})", CallKeys{}).ok());
  EXPECT_FALSE(parse_call_list("[]", CallKeys{}).ok());
  EXPECT_FALSE(parse_named_arguments("", "{}").ok());
  EXPECT_FALSE(parse_named_arguments("f", "{oops}").ok());
}

TEST(ToolBodyJson, ListOfCallsKeepsItsOrder) {
  auto calls = parse_call_list(R"([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": 2}}])", CallKeys{});
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[1].name, "b");
}

TEST(ToolBodyJson, CodeFencesAreStripped) {
  EXPECT_EQ(strip_code_fence("\n```json\n{\"a\": 1}\n```\n"), "{\"a\": 1}");
  EXPECT_EQ(strip_code_fence(" {} "), "{}");
}

}  // namespace
}  // namespace met
