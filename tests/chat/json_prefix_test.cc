// json_object_prefix streams only what some closing turns into a valid object.
#include "chat/output/json_prefix.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace met {
namespace {

std::string safe_part(std::string_view text) {
  const auto prefix = json_object_prefix(text);
  EXPECT_TRUE(prefix.has_value()) << text;
  if (!prefix) return {};
  const std::string closed = std::string(text.substr(0, prefix->safe_end)) + prefix->closing;
  EXPECT_FALSE(nlohmann::json::parse(closed, nullptr, false).is_discarded()) << closed;
  return std::string(text.substr(0, prefix->safe_end));
}

TEST(JsonPrefix, StringValuesStreamInsideAndNumbersWaitForADelimiter) {
  EXPECT_EQ(safe_part("{"), "{");
  EXPECT_EQ(safe_part(R"({"ke)"), "{");
  EXPECT_EQ(safe_part(R"({"key": "val)"), R"({"key": "val)");
  EXPECT_EQ(safe_part(R"({"n": 12)"), "{");
  EXPECT_EQ(safe_part(R"({"n": 12,)"), R"({"n": 12)");
  EXPECT_EQ(safe_part(R"({"a": [1, {"b": tr)"), R"({"a": [1, {)");
  EXPECT_EQ(safe_part(R"({"a": [1, {"b": true}])"), R"({"a": [1, {"b": true}])");
}

TEST(JsonPrefix, EscapesAndUtf8SequencesAreNeverCut) {
  EXPECT_EQ(safe_part(R"({"s": "a\)"), R"({"s": "a)");
  EXPECT_EQ(safe_part(R"({"s": "a\u00)"), R"({"s": "a)");
  EXPECT_EQ(safe_part("{\"s\": \"\xE6\x9D"), "{\"s\": \"");
  EXPECT_EQ(safe_part("{\"s\": \"\xE6\x9D\xB1"), "{\"s\": \"\xE6\x9D\xB1");
}

TEST(JsonPrefix, StopsAtTheFirstImpossibleByteAndAtTheObjectsEnd) {
  EXPECT_EQ(safe_part(R"({"a": 1, "b": Paris})"), R"({"a": 1)");
  EXPECT_EQ(safe_part(R"({"a": 1,})"), R"({"a": 1)");
  EXPECT_EQ(safe_part(R"({"a": 1} trailing)"), R"({"a": 1})");
  EXPECT_FALSE(json_object_prefix("[1]").has_value());
}

}  // namespace
}  // namespace met
