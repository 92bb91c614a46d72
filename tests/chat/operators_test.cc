// Python operators over Values.
#include "chat/jinja/operators.h"

#include <limits>

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

class OperatorsTest : public ::testing::Test {
 protected:
  Value str(std::string_view s) { return *heap_.string(s); }
  Heap heap_{1 << 20};
  Runtime rt_{heap_, std::tm{}, 1'000'000};
};

TEST_F(OperatorsTest, IntegerArithmeticStaysIntegral) {
  EXPECT_EQ(arithmetic(rt_, ArithOp::kAdd, Value::integer(2), Value::integer(3))->as_int(), 5);
  EXPECT_EQ(arithmetic(rt_, ArithOp::kFloorDiv, Value::integer(-7), Value::integer(2))->as_int(), -4);
  EXPECT_EQ(arithmetic(rt_, ArithOp::kMod, Value::integer(-7), Value::integer(3))->as_int(), 2);
  EXPECT_EQ(arithmetic(rt_, ArithOp::kPow, Value::integer(2), Value::integer(10))->as_int(), 1024);
  EXPECT_EQ(arithmetic(rt_, ArithOp::kDiv, Value::integer(3), Value::integer(2))->kind(), ValueKind::kFloat);
  EXPECT_DOUBLE_EQ(arithmetic(rt_, ArithOp::kDiv, Value::integer(3), Value::integer(2))->as_float(), 1.5);
}

TEST_F(OperatorsTest, OverflowAndDivisionByZeroAreErrors) {
  const Value max = Value::integer(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(arithmetic(rt_, ArithOp::kAdd, max, Value::integer(1)).ok());
  EXPECT_FALSE(arithmetic(rt_, ArithOp::kPow, Value::integer(3), Value::integer(100)).ok());
  EXPECT_FALSE(arithmetic(rt_, ArithOp::kMod, Value::integer(1), Value::integer(0)).ok());
  EXPECT_FALSE(arithmetic(rt_, ArithOp::kDiv, Value::floating(1), Value::floating(0)).ok());
  EXPECT_FALSE(negate(Value::integer(std::numeric_limits<int64_t>::min())).ok());
}

TEST_F(OperatorsTest, FloatFloorDivisionAndModuloFollowPython) {
  EXPECT_DOUBLE_EQ(arithmetic(rt_, ArithOp::kFloorDiv, Value::floating(-3.0), Value::integer(2))->as_float(), -2.0);
  EXPECT_DOUBLE_EQ(arithmetic(rt_, ArithOp::kMod, Value::floating(-2.5), Value::integer(1))->as_float(), 0.5);
}

TEST_F(OperatorsTest, StringsAndListsRepeatAndConcatenate) {
  EXPECT_EQ(arithmetic(rt_, ArithOp::kMul, str("ab"), Value::integer(3))->as_string(), "ababab");
  EXPECT_EQ(arithmetic(rt_, ArithOp::kAdd, str("a"), str("b"))->as_string(), "ab");
  const Value l = *heap_.list({Value::integer(1)});
  EXPECT_EQ(arithmetic(rt_, ArithOp::kMul, Value::integer(2), l)->as_list().items.size(), 2u);
  EXPECT_EQ(arithmetic(rt_, ArithOp::kAdd, str("a"), Value::integer(1)).status().message(),
            "TypeError: can only concatenate str (not \"int\") to str");
}

TEST_F(OperatorsTest, EqualityIsPythons) {
  EXPECT_TRUE(*values_equal(rt_, Value::integer(1), Value::floating(1.0)));
  EXPECT_TRUE(*values_equal(rt_, Value::boolean(true), Value::integer(1)));
  EXPECT_FALSE(*values_equal(rt_, str("1"), Value::integer(1)));
  EXPECT_TRUE(*values_equal(rt_, Value(), Value()));
  EXPECT_FALSE(*values_equal(rt_, Value(), Value::none()));
  const Value l1 = *heap_.list({Value::integer(1)});
  const Value l2 = *heap_.list({Value::floating(1.0)});
  const Value t = *heap_.tuple({Value::integer(1)});
  EXPECT_TRUE(*values_equal(rt_, l1, l2));
  EXPECT_FALSE(*values_equal(rt_, l1, t));
}

TEST_F(OperatorsTest, OrderingComparesLexicographically) {
  EXPECT_TRUE(*compare(rt_, CompareOp::kLt, str("B"), str("a")));
  const Value a = *heap_.list({Value::integer(1), Value::integer(2)});
  const Value b = *heap_.list({Value::integer(1), Value::integer(3)});
  EXPECT_TRUE(*compare(rt_, CompareOp::kLt, a, b));
  EXPECT_FALSE(compare(rt_, CompareOp::kLt, str("a"), Value::integer(1)).ok());
  EXPECT_FALSE(compare(rt_, CompareOp::kLt, Value(), Value::integer(1)).ok());
}

TEST_F(OperatorsTest, ContainsLooksForSubstringsItemsAndKeys) {
  EXPECT_TRUE(*contains(rt_, str("hello"), str("ell")));
  EXPECT_FALSE(*contains(rt_, Value(), str("x")));
  EXPECT_FALSE(contains(rt_, str("x"), Value::integer(1)).ok());
  EXPECT_FALSE(contains(rt_, Value::none(), str("x")).ok());
}

TEST_F(OperatorsTest, ConcatPrintsBothSides) {
  EXPECT_EQ(concat(rt_, Value::integer(1), Value())->as_string(), "1");
  EXPECT_EQ(concat(rt_, Value::none(), Value::floating(2.0))->as_string(), "None2.0");
}

}  // namespace
}  // namespace met::jinja
