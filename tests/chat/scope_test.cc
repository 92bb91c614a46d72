// Scope: lookups walk outwards, assignments stay in their frame.
#include "chat/jinja/scope.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

TEST(Scope, InnerFramesSeeOuterNames) {
  Scope root(nullptr);
  root.set("x", Value::integer(1));
  Scope inner(&root);
  ASSERT_NE(inner.find("x"), nullptr);
  EXPECT_EQ(inner.find("x")->as_int(), 1);
  EXPECT_EQ(inner.find("y"), nullptr);
}

TEST(Scope, AssignmentsShadowWithoutLeaking) {
  Scope root(nullptr);
  root.set("x", Value::integer(1));
  Scope inner(&root);
  inner.set("x", Value::integer(2));
  EXPECT_EQ(inner.find("x")->as_int(), 2);
  EXPECT_EQ(root.find("x")->as_int(), 1);
  inner.clear();
  EXPECT_EQ(inner.find("x")->as_int(), 1);
}

TEST(Scope, RebindingReplacesTheValue) {
  Scope s(nullptr);
  s.set("a", Value::integer(1));
  s.set("a", Value::integer(3));
  EXPECT_EQ(s.find("a")->as_int(), 3);
}

}  // namespace
}  // namespace met::jinja
