// Macros: defaults, keyword arguments, extra arguments, caller(), recursion,
// and what a macro sees of the template around it.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Macros, ArgumentsBindByPositionNameOrDefault) {
  testing::expect_renders({
      {R"j({% macro m(a, b=2, c='x') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c='y') }} {{ m(c='z', a=0) }})j", R"j(12x 13x 12y 02z)j"},
      {R"j({% macro m(a, b=a * 2) %}{{ b }}{% endmacro %}{{ m(4) }})j", R"j(8)j"},
  });
}

TEST(Macros, AMissingArgumentIsUndefined) {
  testing::expect_renders({
      {R"j({% macro m(a) %}[{{ a }}]{{ a is defined }}{% endmacro %}{{ m() }})j", R"j([]False)j"},
  });
}

TEST(Macros, ExtraArgumentsLandInVarargsAndKwargs) {
  testing::expect_renders({
      {R"j({% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, a=3) }})j", R"j((1, 2){'a': 3})j"},
  });
}

TEST(Macros, CallBlocksPassTheirBodyAsCaller) {
  testing::expect_renders({
      {R"j({% macro m(a) %}[{{ a }}|{{ caller(a) }}]{% endmacro %}{% call(x) m(5) %}got {{ x }}{% endcall %})j", R"j([5|got 5])j"},
      {R"j({% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}body{% endcall %})j", R"j(<body>)j"},
  });
}

TEST(Macros, MacrosRecurse) {
  testing::expect_renders({
      {R"j({% macro f(x) %}{% if x > 0 %}{{ x }}{{ f(x - 1) }}{% endif %}{% endmacro %}{{ f(5) }})j", R"j(54321)j"},
  });
}

TEST(Macros, MacrosSeeTopLevelNamesAsTheyAreWhenCalled) {
  testing::expect_renders({
      {R"j({% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }})j", R"j(2)j"},
      {R"j({% macro outer() %}{% macro inner() %}I{% endmacro %}{{ inner() }}O{% endmacro %}{{ outer() }})j", R"j(IO)j"},
      {R"j({% for i in [1, 2] %}{% macro show() %}{{ i }}{% endmacro %}{{ show() }}{% endfor %})j", R"j(12)j"},
  });
}

TEST(Macros, MacroOutputIsAString) {
  testing::expect_renders({
      {R"j({% macro m() %}  x  {% endmacro %}[{{ m()|trim }}]{{ m()|length }})j", R"j([x]5)j"},
  });
}

}  // namespace
}  // namespace met
