// BoundArgs: Python-style binding of a built-in's arguments.
#include "chat/jinja/callable.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

TEST(BoundArgs, BindsPositionalThenNamed) {
  CallArgs args;
  args.positional = {Value::integer(1)};
  args.named = {NamedArg{"c", Value::integer(3)}};
  auto b = BoundArgs::bind("f", args, {"a", "b", "c"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->get(0).as_int(), 1);
  EXPECT_FALSE(b->has(1));
  EXPECT_TRUE(b->get(1).is_undefined());
  EXPECT_EQ(*b->get_int(2, 0), 3);
  EXPECT_EQ(*b->get_int(1, 7), 7);
  EXPECT_TRUE(b->get_flag(2, false));
}

TEST(BoundArgs, RejectsWhatPythonRejects) {
  CallArgs too_many;
  too_many.positional = {Value::integer(1), Value::integer(2)};
  EXPECT_EQ(BoundArgs::bind("f", too_many, {"a"}).status().message(),
            "TypeError: f() takes at most 1 arguments (2 given)");
  CallArgs unknown;
  unknown.named = {NamedArg{"zz", Value::none()}};
  EXPECT_EQ(BoundArgs::bind("f", unknown, {"a"}).status().message(),
            "TypeError: f() got an unexpected keyword argument 'zz'");
  CallArgs twice;
  twice.positional = {Value::integer(1)};
  twice.named = {NamedArg{"a", Value::integer(2)}};
  EXPECT_FALSE(BoundArgs::bind("f", twice, {"a"}).ok());
}

TEST(BoundArgs, TypedGettersNameTheParameter) {
  CallArgs args;
  args.positional = {Value::floating(1.5)};
  auto b = BoundArgs::bind("indent", args, {"width"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->get_int(0, 4).status().message(),
            "TypeError: indent(): argument 'width' must be an integer, not float");
}

}  // namespace
}  // namespace met::jinja
