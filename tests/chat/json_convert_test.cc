// JSON in (context) and out (tojson) as Python's json.dumps writes it.
#include "chat/jinja/json_convert.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

std::string dumps(Heap& heap, const char* json, JsonStyle style = {}) {
  auto v = value_from_json(heap, nlohmann::ordered_json::parse(json));
  EXPECT_TRUE(v.ok());
  std::string out;
  const Status s = append_json(*v, style, out, 1 << 20);
  return s.ok() ? out : "ERROR: " + s.message();
}

TEST(JsonConvert, RoundTripsWithPythonSeparators) {
  Heap heap(1 << 20);
  EXPECT_EQ(dumps(heap, R"({"b": [1, 2.5, "x"], "a": {"n": null, "t": true}, "e": [], "o": {}})"),
            R"({"b": [1, 2.5, "x"], "a": {"n": null, "t": true}, "e": [], "o": {}})");
}

TEST(JsonConvert, IndentUsesCommaAndNewlines) {
  Heap heap(1 << 20);
  JsonStyle style;
  style.indent = "  ";
  style.item_separator = ",";
  EXPECT_EQ(dumps(heap, R"({"a": [1, {}], "b": 2})", style), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": 2\n}");
}

TEST(JsonConvert, SortKeysAndEnsureAscii) {
  Heap heap(1 << 20);
  JsonStyle style;
  style.sort_keys = true;
  style.ensure_ascii = true;
  EXPECT_EQ(dumps(heap, "{\"b\": \"\xC3\xA9\xF0\x9F\x99\x82\", \"a\": 1}", style),
            R"({"a": 1, "b": "\u00e9\ud83d\ude42"})");
}

TEST(JsonConvert, EscapesControlCharactersOnly) {
  std::string out;
  append_json_string("a\"\\\n\r\t\b\f\x01/\xC3\xA9\x7F", false, out);
  EXPECT_EQ(out, "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001/\xC3\xA9\x7F\"");
}

TEST(JsonConvert, ValuesJsonCannotHoldAreTypeErrors) {
  std::string out;
  const Status s = append_json(Value(), JsonStyle{}, out, 100);
  EXPECT_TRUE(s.message().starts_with("TypeError: Object of type Undefined is not JSON serializable"));
}

TEST(JsonConvert, HugeUnsignedIntegersBecomeFloats) {
  Heap heap(1 << 20);
  EXPECT_EQ(dumps(heap, "[18446744073709551615, 9223372036854775807, -9223372036854775808]"),
            "[1.8446744073709552e+19, 9223372036854775807, -9223372036854775808]");
}

}  // namespace
}  // namespace met::jinja
