// str() and repr() of Values as Python prints them.
#include "chat/jinja/value_format.h"

#include <limits>

#include <gtest/gtest.h>

#include "chat/jinja/heap.h"

namespace met::jinja {
namespace {

std::string float_repr(double d) {
  std::string out;
  append_float_repr(d, out);
  return out;
}

std::string string_repr(std::string_view s) {
  std::string out;
  append_string_repr(s, out);
  return out;
}

TEST(ValueFormat, FloatsUseShortestRoundTripDigits) {
  EXPECT_EQ(float_repr(1.0), "1.0");
  EXPECT_EQ(float_repr(0.1), "0.1");
  EXPECT_EQ(float_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(float_repr(1e16), "1e+16");
  EXPECT_EQ(float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(float_repr(0.0001), "0.0001");
  EXPECT_EQ(float_repr(0.00001), "1e-05");
  EXPECT_EQ(float_repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(float_repr(-0.0), "-0.0");
  EXPECT_EQ(float_repr(123456789.123), "123456789.123");
  EXPECT_EQ(float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(float_repr(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(float_repr(1.7976931348623157e308), "1.7976931348623157e+308");
}

TEST(ValueFormat, StringReprPicksQuotesAndEscapes) {
  EXPECT_EQ(string_repr("a"), "'a'");
  EXPECT_EQ(string_repr("it's"), "\"it's\"");
  EXPECT_EQ(string_repr("'\""), "'\\'\"'");
  EXPECT_EQ(string_repr("a\\b\n\t\x01"), "'a\\\\b\\n\\t\\x01'");
  EXPECT_EQ(string_repr("\xC3\xA9\xC2\xA0\xE2\x80\x8B"), "'\xC3\xA9\\xa0\\u200b'");
}

TEST(ValueFormat, ContainersPrintTheirItemsRepr) {
  Heap heap(1 << 20);
  const Value s = *heap.string(std::string_view("x"));
  const Value inner = *heap.tuple({Value::integer(1)});
  DictObj* d = *heap.dict();
  ASSERT_TRUE(heap.set_item(*d, s, Value::none()).ok());
  const Value list = *heap.list({s, Value::boolean(true), Value::floating(2.0), inner, Value::dict(d)});
  std::string out;
  ASSERT_TRUE(append_str(list, out, 1 << 20).ok());
  EXPECT_EQ(out, "['x', True, 2.0, (1,), {'x': None}]");
  out.clear();
  ASSERT_TRUE(append_str(Value(), out, 100).ok());
  EXPECT_EQ(out, "");
}

TEST(ValueFormat, PrintingStopsAtTheByteLimit) {
  Heap heap(1 << 20);
  const Value s = *heap.string(std::string(100, 'x'));
  const Value list = *heap.list(std::vector<Value>(100, s));
  std::string out;
  const Status st = append_str(list, out, 1000);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace met::jinja
