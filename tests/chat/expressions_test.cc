// Expressions: literals, Python arithmetic, comparisons, logic, the inline
// if, `~`, precedence, and what `{{ }}` prints for each kind of value.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Expressions, ArithmeticFollowsPython) {
  testing::expect_renders({
      {R"j({{ 3/2 }} {{ 10/2 }} {{ 7//2 }} {{ -7//2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2**10 }} {{ 2**-1 }} {{ 2.5 // 1 }} {{ -2.5 % 1 }})j", R"j(1.5 5.0 3 -4 2 -2 1024 0.5 2.0 0.5)j"},
      {R"j({{ true + true }} {{ true * 3 }} {{ 1 + 1.5 }} {{ -3 // 2 }} {{ -3.0 // 2 }} {{ 7.5 % 2 }})j", R"j(2 3 2.5 -2 -2.0 1.5)j"},
      {R"j({{ 'a' * 3 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ [1] + [2] }} {{ (1,) + (2,) }} {{ 'a' * 0 }}|)j", R"j(aaa ababab [1, 1, 1] [1, 2] (1, 2) |)j"},
  });
}

TEST(Expressions, PrecedenceMatchesJinja) {
  testing::expect_renders({
      {R"j({{ -(3) }} {{ +3 }} {{ - 2 ** 2 }} {{ 2 * 3 + 4 }} {{ 2 + 3 * 4 }} {{ (2 + 3) * 4 }} {{ 10 - 2 - 3 }} {{ 2 ** 3 ** 2 }})j", R"j(-3 3 4 10 14 20 5 64)j"},
      {R"j({{ 1 ~ 2 * 3 }} {{ not 1 == 2 }} {{ not 'a' in 'abc' }} {{ -1|abs }})j", R"j(16 True False 1)j"},
      {R"j({{ 'yes' if 1 > 2 or 2 > 1 and true else 'no' }})j", R"j(yes)j"},
  });
}

TEST(Expressions, FloatsPrintLikePythonsRepr) {
  testing::expect_renders({
      {R"j({{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 1.5e-7 }} {{ 123456789.123 }} {{ -0.0 }} {{ 0.1+0.2 }})j", R"j(1e+20 1e+16 1000000000000000.0 0.0001 1e-05 1.5e-07 123456789.123 -0.0 0.30000000000000004)j"},
      {R"j({{ 0.1 * 3 }} {{ 1/3 }} {{ 2/3 }} {{ 100.0 }} {{ 1e-10 }} {{ 123e10 }} {{ 9999999999999999.0 }} {{ 1_000.5 }})j", R"j(0.30000000000000004 0.3333333333333333 0.6666666666666666 100.0 1e-10 1230000000000.0 1e+16 1000.5)j"},
  });
}

TEST(Expressions, ValuesPrintLikePythonsStr) {
  testing::expect_renders({
      {R"j({{ [1,'a',"b'c", 'd"e', 'x\'y"z', none, true, 1.0] }} {{ (1,) }} {{ () }} {{ {'a': [1, {'b': none}]} }})j", R"j([1, 'a', "b'c", 'd"e', 'x\'y"z', None, True, 1.0] (1,) () {'a': [1, {'b': None}]})j"},
      {R"j({{ none }} {{ true }} {{ false }} {{ 'text' }} {{ 42 }})j", R"j(None True False text 42)j"},
      {R"j({{ ['日本', 'é', '\x00\x7f\xa0\u200b', 'tab\there'] }})j", R"j(['日本', 'é', '\x00\x7f\xa0\u200b', 'tab\there'])j"},
      {R"j({{ ['a\\b'] }})j", R"j(['a\\b'])j"},
  });
}

TEST(Expressions, StringLiteralsDecodePythonEscapes) {
  testing::expect_renders({
      {R"j({{ 'a' 'b' }}|{{ "x\ty" }}|{{ 'it\'s' }}|{{ '\u00e9\x41\101' }}|{{ 'back\\slash' }}|{{ 'keep \d' }})j", R"j(ab|x	y|it's|éAA|back\slash|keep \d)j"},
  });
}

TEST(Expressions, ComparisonsChainAndCompareByValue) {
  testing::expect_renders({
      {R"j({{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }} {{ 1 == 1.0 }} {{ true == 1 }} {{ none == none }})j", R"j(True False True True True True True)j"},
      {R"j({{ 'abc' > 'abd' }}{{ 'B' < 'a' }}{{ [1] == [1.0] }}{{ (1,) == [1] }}{{ {'a':1} == {'a':1} }}{{ [] < [1] }}{{ (1, 2) > (1,) }})j", R"j(FalseTrueTrueFalseTrueTrueTrue)j"},
  });
}

TEST(Expressions, OrderingUnrelatedTypesFails) {
  testing::expect_renders({
      {R"j({{ 1 < 'a' }})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(Expressions, MembershipTestsSubstringsItemsAndKeys) {
  testing::expect_renders({
      {R"j({{ 'x' in 'xyz' }} {{ 1 in [1,2] }} {{ 'k' in {'k':1} }} {{ 3 not in [1] }} {{ 'a' in undefined_name }})j", R"j(True True True True False)j"},
  });
}

TEST(Expressions, AndOrReturnAnOperand) {
  testing::expect_renders({
      {R"j({{ x or 'fallback' }} {{ 0 and 1 }} {{ [] or none }} {{ 'a' and 'b' }} {{ not none }})j", R"j(fallback 0 None b True)j"},
  });
}

TEST(Expressions, InlineIfWithoutElseIsUndefined) {
  testing::expect_renders({
      {R"j({{ 'yes' if true }}|{{ 'yes' if false }}|{{ ('x' if false) is defined }})j", R"j(yes||False)j"},
  });
}

TEST(Expressions, TildeConcatenatesStrings) {
  testing::expect_renders({
      {R"j({{ 'a' ~ 1 ~ none ~ true ~ [1] ~ undefined_name }})j", R"j(a1NoneTrue[1])j"},
  });
}

TEST(Expressions, IndexingAndSlicingFollowPython) {
  testing::expect_renders({
      {R"j({{ 'abc'[1] }} {{ 'abc'[-1] }} {{ 'abcdef'[1:4] }} {{ 'abcdef'[::-1] }} {{ 'abcdef'[::2] }} {{ [1,2,3,4][-2:] }} {{ [1,2,3][5] }}|)j", R"j(b c bcd fedcba ace [3, 4] |)j"},
      {R"j({% set x = [1,2,3] %}{{ x[1:] }}{{ x[:-1] }}{{ x[::-1] }}{{ x[-5:10] }}{{ x[2:0:-1] }})j", R"j([2, 3][1, 2][3, 2, 1][1, 2, 3][3, 2])j"},
      {R"j({{ 'héllo'[1] }} {{ 'héllo'[1:3] }} {{ 'hello'[10:] }}|{{ 'hello'[-3:] }})j", R"j(é él |llo)j"},
      {R"j({{ [1,2,3][2::9223372036854775807] }} {{ [1,2,3][::-9223372036854775807] }} {{ 'abc'[-9223372036854775807:] }})j", R"j([3] [3] abc)j"},
      {R"j({{ a.0 }}{{ a.1.x }}{{ a[1]['x'] }})j", R"j(577)j", R"j({"a": [5, {"x": 7}]})j"},
  });
}

TEST(Expressions, AttributeAccessPrefersMethodsAndItemAccessPrefersKeys) {
  testing::expect_renders({
      {R"j({{ d.items is callable }} {{ d['items'] }} {{ d.other }})j", R"j(True key o)j", R"j({"d": {"items": "key", "other": "o"}})j"},
  });
}

TEST(Expressions, LiteralsBuildListsTuplesAndDicts) {
  testing::expect_renders({
      {R"j({{ [1, [2, 3], (4, 5), {'k': 'v'}] }} {{ {'a': 1, 'a': 2} }} {{ (1, 2)[0] }} {{ [1, 2,][1] }})j", R"j([1, [2, 3], (4, 5), {'k': 'v'}] {'a': 2} 1 2)j"},
  });
}

TEST(Expressions, DividingByZeroFails) {
  testing::expect_renders({
      {R"j({{ 5 // 0 }})j", R"j(ERROR: ZeroDivisionError)j"},
      {R"j({{ 5 / 0 }})j", R"j(ERROR: ZeroDivisionError)j"},
      {R"j({{ 5 % 0 }})j", R"j(ERROR: ZeroDivisionError)j"},
  });
}

TEST(Expressions, AddingAStringAndANumberFails) {
  testing::expect_renders({
      {R"j({{ 1 + 'a' }})j", R"j(ERROR: TypeError)j"},
      {R"j({{ 'a' + 1 }})j", R"j(ERROR: TypeError: can only concatenate str)j"},
      {R"j({{ 'a' ~ 1 + 2 }})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(Expressions, MarkupEscapesWhatIsAddedToIt) {
  testing::expect_renders({
      {R"j({{ '<b>'|safe + '<i>' }} {{ '<i>' + '<b>'|safe }} {{ '<i>' ~ '<b>'|safe }} {{ '&'|e }})j", R"j(<b>&lt;i&gt; &lt;i&gt;<b> <i><b> &amp;)j"},
  });
}

}  // namespace
}  // namespace met
