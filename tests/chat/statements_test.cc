// Statements: if, set (plain, unpacking, block, namespace attributes), with,
// filter blocks, generation, and Jinja's scoping of assignments.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Statements, IfTakesTheFirstTrueBranch) {
  testing::expect_renders({
      {R"j({% if true %}a{% elif false %}b{% else %}c{% endif %})j", R"j(a)j"},
      {R"j({% if false %}a{% elif true %}b{% else %}c{% endif %})j", R"j(b)j"},
      {R"j({% if false %}a{% elif false %}b{% else %}c{% endif %})j", R"j(c)j"},
      {R"j({% if [] %}a{% endif %}|{% if [0] %}b{% endif %})j", R"j(|b)j"},
      {R"j({% if x is defined and x > 1 %}big{% else %}small{% endif %})j", R"j(small)j"},
  });
}

TEST(Statements, SetBindsNamesAndUnpacksTuples) {
  testing::expect_renders({
      {R"j({% set x = 1 %}{{ x }})j", R"j(1)j"},
      {R"j({% set a, b = 1, 2 %}{{ a }}{{ b }})j", R"j(12)j"},
      {R"j({% set a, b = [3, 4] %}{{ b }}{{ a }})j", R"j(43)j"},
      {R"j({% set t = 1, 2 %}{{ t }})j", R"j((1, 2))j"},
  });
}

TEST(Statements, BlockSetCapturesRenderedTextThroughItsFilters) {
  testing::expect_renders({
      {R"j({% set b %}  block {{ 1 }} {% endset %}[{{ b }}])j", R"j([  block 1 ])j"},
      {R"j({% set c | trim | upper %}  t  {% endset %}[{{ c }}])j", R"j([T])j"},
  });
}

TEST(Statements, NamespaceAttributesOutliveTheLoopThatSetsThem) {
  testing::expect_renders({
      {R"j({% set ns = namespace(a=1, b=[]) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.b }})j", R"j(4[])j"},
      {R"j({% set ns = namespace(found=false) %}{% for m in [1,2,3] %}{% if m == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }})j", R"j(True)j"},
      {R"j({% set ns = namespace({'k': 'v'}) %}{{ ns.k }})j", R"j(v)j"},
      {R"j({% set ns = namespace(a=1) %}{{ ns }})j", R"j(<Namespace {'a': 1}>)j"},
  });
}

TEST(Statements, SetOnAnAttributeOfANonNamespaceFails) {
  testing::expect_renders({
      {R"j({% set x = 5 %}{% set x.y = 1 %})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(Statements, AssignmentsInsideLoopsAndMacrosDoNotLeak) {
  testing::expect_renders({
      {R"j({% set x = 1 %}{% for i in [1] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }})j", R"j(121)j"},
      {R"j({% for i in range(3) %}{% if i == 0 %}{% set x = 'a' %}{% endif %}[{{ x }}]{% endfor %})j", R"j([a][][])j"},
      {R"j({% macro m() %}{% set x = 5 %}{% endmacro %}{% set x = 1 %}{{ m() }}{{ x }})j", R"j(1)j"},
      {R"j({% for a in [1,2] %}{% set y = a %}{% endfor %}{{ y }})j", R"j()j"},
  });
}

TEST(Statements, AssignmentsInsideIfBlocksDoLeak) {
  testing::expect_renders({
      {R"j({% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }})j", R"j(2)j"},
  });
}

TEST(Statements, WithOpensAScope) {
  testing::expect_renders({
      {R"j({% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}])j", R"j(3[])j"},
  });
}

TEST(Statements, FilterBlocksFilterTheirRenderedBody) {
  testing::expect_renders({
      {R"j({% filter upper %}hello {{ 'world' }}{% endfilter %})j", R"j(HELLO WORLD)j"},
      {R"j({% filter trim | replace('a', 'o') %}  banana  {% endfilter %})j", R"j(bonono)j"},
  });
}

}  // namespace
}  // namespace met
