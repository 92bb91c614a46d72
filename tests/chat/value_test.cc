// Value handles and the ordered dict.
#include "chat/jinja/value.h"

#include <gtest/gtest.h>

#include "chat/jinja/heap.h"

namespace met::jinja {
namespace {

TEST(Value, IsSixteenBytesAndCopiesFreely) {
  EXPECT_EQ(sizeof(Value), 16u);
  EXPECT_TRUE(std::is_trivially_copyable_v<Value>);
}

TEST(Value, TruthinessFollowsPython) {
  Heap heap(1 << 20);
  EXPECT_FALSE(is_truthy(Value()));
  EXPECT_FALSE(is_truthy(Value::none()));
  EXPECT_FALSE(is_truthy(Value::integer(0)));
  EXPECT_FALSE(is_truthy(Value::floating(0.0)));
  EXPECT_FALSE(is_truthy(heap.empty_string()));
  EXPECT_FALSE(is_truthy(*heap.list({})));
  EXPECT_TRUE(is_truthy(*heap.string(std::string_view("0"))));
  EXPECT_TRUE(is_truthy(Value::floating(0.5)));
  EXPECT_TRUE(is_truthy(Value::name_space(*heap.dict())));
}

TEST(Value, BoolsAreIntegers) {
  EXPECT_TRUE(Value::boolean(true).is_integral());
  EXPECT_EQ(Value::boolean(true).as_int(), 1);
  EXPECT_DOUBLE_EQ(Value::integer(3).as_float(), 3.0);
  EXPECT_EQ(type_name(Value::boolean(false)), "bool");
  EXPECT_EQ(type_name(Value::none()), "NoneType");
}

TEST(DictObj, KeepsInsertionOrderAndReplacesInPlace) {
  Heap heap(1 << 20);
  DictObj d;
  for (const char* k : {"z", "a", "m"}) d.set(*heap.string(std::string_view(k)), Value::integer(1));
  d.set(*heap.string(std::string_view("a")), Value::integer(2));
  ASSERT_EQ(d.entries.size(), 3u);
  EXPECT_EQ(d.entries[1].first.as_string(), "a");
  EXPECT_EQ(d.entries[1].second.as_int(), 2);
}

TEST(DictObj, FindsKeysByPythonEquality) {
  DictObj d;
  d.set(Value::integer(1), Value::integer(10));
  EXPECT_NE(d.find(Value::floating(1.0)), nullptr);
  EXPECT_NE(d.find(Value::boolean(true)), nullptr);
  EXPECT_EQ(d.find(Value::integer(2)), nullptr);
}

TEST(DictObj, StaysCorrectPastTheIndexThresholdAndAfterErasing) {
  Heap heap(1 << 20);
  DictObj d;
  for (int i = 0; i < 50; ++i) d.set(*heap.string(std::to_string(i)), Value::integer(i));
  for (int i = 0; i < 50; i += 2) EXPECT_TRUE(d.erase(*heap.string(std::to_string(i))));
  EXPECT_EQ(d.entries.size(), 25u);
  for (int i = 0; i < 50; ++i) {
    const Value* v = d.find(std::to_string(i));
    if (i % 2 == 0) {
      EXPECT_EQ(v, nullptr);
    } else {
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(v->as_int(), i);
    }
  }
}

}  // namespace
}  // namespace met::jinja
