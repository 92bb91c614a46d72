// Attribute, item and slice access, iteration and len().
#include "chat/jinja/access.h"

#include <gtest/gtest.h>

#include "chat/jinja/heap.h"

namespace met::jinja {
namespace {

class AccessTest : public ::testing::Test {
 protected:
  Value str(std::string_view s) { return *heap_.string(s); }
  Heap heap_{1 << 20};
  Runtime rt_{heap_, std::tm{}, 1'000'000};
};

TEST_F(AccessTest, DictAttributesPreferMethodsAndItemsPreferKeys) {
  DictObj* d = *heap_.dict();
  ASSERT_TRUE(heap_.set_item(*d, str("items"), str("key")).ok());
  const Value dict = Value::dict(d);
  const std::string items = "items";
  EXPECT_EQ(get_attribute(rt_, dict, items)->kind(), ValueKind::kFunction);
  EXPECT_EQ(get_item(rt_, dict, str("items"))->as_string(), "key");
  const std::string missing = "missing";
  const Value undef = *get_attribute(rt_, dict, missing);
  EXPECT_TRUE(undef.is_undefined());
  EXPECT_EQ(undef.undefined_reason(), UndefinedReason::kAttribute);
}

TEST_F(AccessTest, NegativeIndexesCountFromTheEnd) {
  const Value l = *heap_.list({Value::integer(1), Value::integer(2), Value::integer(3)});
  EXPECT_EQ(get_item(rt_, l, Value::integer(-1))->as_int(), 3);
  EXPECT_TRUE(get_item(rt_, l, Value::integer(3))->is_undefined());
  EXPECT_EQ(get_item(rt_, str("h\xC3\xA9llo"), Value::integer(1))->as_string(), "\xC3\xA9");
}

TEST_F(AccessTest, SlicesFollowPython) {
  const Value l = *heap_.list({Value::integer(0), Value::integer(1), Value::integer(2), Value::integer(3)});
  const Value rev = *get_slice(rt_, l, Value::none(), Value::none(), Value::integer(-1));
  ASSERT_EQ(rev.as_list().items.size(), 4u);
  EXPECT_EQ(rev.as_list().items[0].as_int(), 3);
  const Value mid = *get_slice(rt_, l, Value::integer(1), Value::integer(-1), Value());
  EXPECT_EQ(mid.as_list().items.size(), 2u);
  EXPECT_FALSE(get_slice(rt_, l, Value(), Value(), Value::integer(0)).ok());
  EXPECT_EQ(get_slice(rt_, str("abcdef"), Value::integer(-100), Value::integer(100), Value::integer(2))->as_string(),
            "ace");
}

TEST_F(AccessTest, AnyAccessOnUndefinedFails) {
  const std::string name = "x";
  EXPECT_FALSE(get_attribute(rt_, Value(), name).ok());
  EXPECT_FALSE(get_item(rt_, Value(), Value::integer(0)).ok());
  EXPECT_FALSE(get_slice(rt_, Value(), Value(), Value(), Value()).ok());
}

TEST_F(AccessTest, IterationAndLength) {
  EXPECT_EQ(iterate(rt_, Value())->size(), 0u);
  EXPECT_EQ(iterate(rt_, str("h\xC3\xA9"))->size(), 2u);
  EXPECT_FALSE(iterate(rt_, Value::integer(3)).ok());
  EXPECT_EQ(*length(str("h\xC3\xA9")), 2);
  EXPECT_EQ(*length(Value()), 0);
  EXPECT_FALSE(length(Value::integer(1)).ok());
}

}  // namespace
}  // namespace met::jinja
