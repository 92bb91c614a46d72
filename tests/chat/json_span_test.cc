// json_span finds where a JSON object or array ends without parsing it.
#include "chat/output/json_span.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(JsonSpan, CompleteObjectEndsAfterItsClosingBrace) {
  const JsonSpan span = json_span("  {\"a\": [1, {\"b\": 2}]} tail");
  EXPECT_EQ(span.kind, JsonSpanKind::kComplete);
  EXPECT_EQ(span.end, 22u);
}

TEST(JsonSpan, BracketsInsideStringsDoNotCount) {
  const JsonSpan span = json_span(R"({"s": "}]\"{"} x)");
  EXPECT_EQ(span.kind, JsonSpanKind::kComplete);
  EXPECT_EQ(span.end, 14u);
}

TEST(JsonSpan, UnclosedValueIsIncomplete) {
  EXPECT_EQ(json_span(R"([{"a": "b")").kind, JsonSpanKind::kIncomplete);
  EXPECT_EQ(json_span("   ").kind, JsonSpanKind::kIncomplete);
}

TEST(JsonSpan, TextThatOpensNoObjectIsNotJson) {
  const JsonSpan span = json_span("  hello", 0);
  EXPECT_EQ(span.kind, JsonSpanKind::kNotJson);
  EXPECT_EQ(span.end, 2u);
}

}  // namespace
}  // namespace met
