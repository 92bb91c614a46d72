// Tests (`is`): Jinja2's meanings for each kind of value.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(JinjaTests, DefinedAndNone) {
  testing::expect_renders({
      {R"j({{ x is defined }} {{ x is undefined }} {{ x is none }} {{ none is none }} {{ none is defined }} {{ x is not defined }} {{ 1 is not none }})j", R"j(False True False True True True True)j"},
  });
}

TEST(JinjaTests, TypeTestsFollowPythonTypes) {
  testing::expect_renders({
      {R"j({{ 1 is number }} {{ true is number }} {{ true is integer }} {{ 1 is integer }} {{ 1.0 is float }} {{ 1 is float }} {{ true is boolean }} {{ 1 is boolean }})j", R"j(True True False True True False True False)j"},
      {R"j({{ 'a' is string }} {{ {} is mapping }} {{ [] is mapping }} {{ namespace() is mapping }} {{ range is callable }} {{ 'a' is callable }})j", R"j(True True False False True False)j"},
  });
}

TEST(JinjaTests, IterableAndSequenceIncludeStringsAndUndefined) {
  testing::expect_renders({
      {R"j({{ [] is iterable }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ {} is iterable }} {{ x is iterable }} {{ [] is sequence }} {{ 'a' is sequence }} {{ {} is sequence }} {{ 1 is sequence }} {{ x is sequence }})j", R"j(True True False True True True True True False True)j"},
  });
}

TEST(JinjaTests, TrueAndFalseAreIdentityWithTheBooleans) {
  testing::expect_renders({
      {R"j({{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ none is false }})j", R"j(True False True False False)j"},
  });
}

TEST(JinjaTests, NumberTests) {
  testing::expect_renders({
      {R"j({{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 3.0 is odd }})j", R"j(True True True False True)j"},
  });
}

TEST(JinjaTests, ComparisonTestsTakeOneArgument) {
  testing::expect_renders({
      {R"j({{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is le 2 }} {{ 3 is gt 2 }} {{ 2 is ge 3 }} {{ 'a' is in 'abc' }} {{ 3 is in [1, 2] }})j", R"j(True False True True True True False True False)j"},
  });
}

TEST(JinjaTests, SameasComparesIdentity) {
  testing::expect_renders({
      {R"j({{ none is sameas none }} {{ true is sameas true }} {{ 1 is sameas true }} {% set l = [] %}{{ l is sameas l }} {{ [] is sameas [] }})j", R"j(True True False True False)j"},
  });
}

TEST(JinjaTests, CaseAndRegistryTests) {
  testing::expect_renders({
      {R"j({{ 'abc' is lower }} {{ 'aBc' is lower }} {{ 'ABC' is upper }} {{ 'upper' is filter }} {{ 'odd' is test }} {{ 'nope' is filter }})j", R"j(True False True True True False)j"},
  });
}

TEST(JinjaTests, UnknownTestsFail) {
  testing::expect_renders({
      {R"j({{ 1 is no_such_test }})j", R"j(ERROR: TemplateRuntimeError)j"},
  });
}

}  // namespace
}  // namespace met
