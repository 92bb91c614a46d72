// for loops: the loop variable, else, the `if` filter, break and continue,
// unpacking, and what iterating each kind of value visits.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Loop, LoopVariableCountsFromBothEnds) {
  testing::expect_renders({
      {R"j({% for i in range(4) %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %})j", R"j(1043TrueFalse4|2132FalseFalse4|3221FalseFalse4|4310FalseTrue4|)j"},
      {R"j({% for i in 'ab' %}{{ loop.depth }}{{ loop.depth0 }}{% endfor %})j", R"j(1010)j"},
  });
}

TEST(Loop, PrevitemAndNextitemAreUndefinedAtTheEnds) {
  testing::expect_renders({
      {R"j({% for i in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }},{% endfor %})j", R"j(-2,1-3,2-,)j"},
      {R"j({% for i in [1,2] %}{{ loop.previtem is defined }}{{ loop.nextitem is defined }},{% endfor %})j", R"j(FalseTrue,TrueFalse,)j"},
  });
}

TEST(Loop, CycleAndChangedFollowTheIndex) {
  testing::expect_renders({
      {R"j({% for i in range(5) %}{{ loop.cycle('a', 'b', 'c') }}{% endfor %})j", R"j(abcab)j"},
      {R"j({% for i in range(4) %}{{ loop.changed(i // 2) }}{% endfor %})j", R"j(TrueFalseTrueFalse)j"},
  });
}

TEST(Loop, ElseRendersOnlyWhenNothingWasIterated) {
  testing::expect_renders({
      {R"j({% for i in [] %}a{% else %}empty{% endfor %})j", R"j(empty)j"},
      {R"j({% for i in [1] %}a{% else %}empty{% endfor %})j", R"j(a)j"},
      {R"j({% for i in [1, 2] if i > 5 %}a{% else %}none passed{% endfor %})j", R"j(none passed)j"},
  });
}

TEST(Loop, IfFilterSkipsItemsAndRenumbersTheLoop) {
  testing::expect_renders({
      {R"j({% for i in range(10) if i is odd %}{{ loop.index }}:{{ i }}/{{ loop.length }} {% endfor %})j", R"j(1:1/5 2:3/5 3:5/5 4:7/5 5:9/5 )j"},
  });
}

TEST(Loop, BreakAndContinueLeaveTheInnermostLoop) {
  testing::expect_renders({
      {R"j({% for i in range(10) %}{% if i > 3 %}{% break %}{% endif %}{{ i }}{% endfor %})j", R"j(0123)j"},
      {R"j({% for i in range(6) %}{% if i is even %}{% continue %}{% endif %}{{ i }}{% endfor %})j", R"j(135)j"},
      {R"j({% for x in [1,2] %}{% for y in [1,2,3] %}{% if y == 2 %}{% break %}{% endif %}{{ x }}{{ y }} {% endfor %}{% endfor %})j", R"j(11 21 )j"},
  });
}

TEST(Loop, BreakOutsideALoopIsASyntaxError) {
  testing::expect_renders({
      {R"j({% break %})j", R"j(ERROR: TemplateSyntaxError)j"},
      {R"j({% for i in [1] %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %})j", R"j(ERROR: TemplateSyntaxError)j"},
  });
}

TEST(Loop, TargetsUnpackPairs) {
  testing::expect_renders({
      {R"j({% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %})j", R"j(a=1;b=2;)j"},
      {R"j({% for a, b in [(1, 2), [3, 4]] %}{{ a + b }},{% endfor %})j", R"j(3,7,)j"},
      {R"j({% for (a, b) in [(1, 2)] %}{{ a }}{{ b }}{% endfor %})j", R"j(12)j"},
  });
}

TEST(Loop, UnpackingTheWrongNumberOfValuesFails) {
  testing::expect_renders({
      {R"j({% for a, b in [[1, 2, 3]] %}{% endfor %})j", R"j(ERROR: ValueError)j"},
  });
}

TEST(Loop, IteratingVisitsItemsKeysOrCharacters) {
  testing::expect_renders({
      {R"j({% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %})j", R"j(xy)j"},
      {R"j({% for c in 'héllo' %}{{ c }},{% endfor %})j", R"j(h,é,l,l,o,)j"},
      {R"j({% for x in undefined_thing %}never{% endfor %}done)j", R"j(done)j"},
      {R"j({% for x in (1, 2) %}{{ x }}{% endfor %})j", R"j(12)j"},
  });
}

TEST(Loop, IteratingANumberFails) {
  testing::expect_renders({
      {R"j({% for x in 5 %}{% endfor %})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(Loop, NestedLoopsEachHaveTheirOwnLoopVariable) {
  testing::expect_renders({
      {R"j({% for x in [1,2] %}{% for y in [3,4] %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{{ loop.index }}|{% endfor %})j", R"j(113 214 1|123 224 2|)j"},
  });
}

}  // namespace
}  // namespace met
