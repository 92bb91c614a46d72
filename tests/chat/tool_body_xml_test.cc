// XML-like tool-call bodies become JSON arguments in pieces, one per parameter.
#include "chat/output/tool_body_xml.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(ToolBodyXml, FunctionTagsGiveOnePiecePerParameter) {
  auto calls = parse_function_tags(
      "\n<function=f>\n<parameter=city>\nParis\n</parameter>\n<parameter=n>\n2\n</parameter>\n</function>\n");
  ASSERT_TRUE(calls.ok()) << calls.status().message();
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].name, "f");
  EXPECT_EQ((*calls)[0].argument_pieces, (std::vector<std::string>{R"({"city":"Paris")", R"(,"n":2)", "}"}));
}

TEST(ToolBodyXml, UnclosedParameterEndsAtTheNextOne) {
  auto calls = parse_function_tags("<function=f><parameter=a>x<parameter=b>y</function>");
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ((*calls)[0].argument_pieces, (std::vector<std::string>{R"({"a":"x")", R"(,"b":"y")", "}"}));
}

TEST(ToolBodyXml, ArgKeyValuesWithJsonValues) {
  auto calls = parse_arg_key_values("get\n<arg_key>q</arg_key>\n<arg_value>{\"a\": null}</arg_value>");
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ((*calls)[0].name, "get");
  EXPECT_EQ((*calls)[0].argument_pieces, (std::vector<std::string>{R"({"q":{"a":null})", "}"}));
}

TEST(ToolBodyXml, InvokeObeysTheStringAttribute) {
  auto calls = parse_invoke(
      "f\">\n<P:parameter name=\"a\" string=\"true\">1</P:parameter>\n<P:parameter name=\"b\" "
      "string=\"false\">1</P:parameter>\n",
      "P:");
  ASSERT_TRUE(calls.ok()) << calls.status().message();
  EXPECT_EQ((*calls)[0].argument_pieces, (std::vector<std::string>{R"({"a":"1")", R"(,"b":1)", "}"}));
}

TEST(ToolBodyXml, MissingNamesAreErrors) {
  EXPECT_FALSE(parse_function_tags("no function here").ok());
  EXPECT_FALSE(parse_function_tags("<function=>").ok());
  EXPECT_FALSE(parse_arg_key_values("<arg_key>a</arg_key><arg_value>1</arg_value>").ok());
  EXPECT_FALSE(parse_invoke("no closing quote", "").ok());
}

}  // namespace
}  // namespace met
