// Text filters: trim, case, replace, indent, center, wordcount, escape, safe,
// string.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(TextFilters, TrimStripsWhitespaceOrGivenCharacters) {
  testing::expect_renders({
      {R"j([{{ '  abc \n'|trim }}]|{{ 'xxabcxx'|trim('x') }}|{{ 42|trim }}|[{{ undefined_name|trim }}])j", R"j([abc]|abc|42|[])j"},
  });
}

TEST(TextFilters, CaseFiltersHandleNonAsciiLetters) {
  testing::expect_renders({
      {R"j({{ 'Hello World'|lower }}|{{ 'hello world'|upper }}|{{ 'hELLO wORLD'|capitalize }})j", R"j(hello world|HELLO WORLD|Hello world)j"},
      {R"j({{ 'Ünïcödé'|upper }} {{ 'ÀÉÎ'|lower }} {{ 'straße'|upper }} {{ 'ΑΒΓ'|lower }} {{ 'привет'|upper }})j", R"j(ÜNÏCÖDÉ àéî STRASSE αβγ ПРИВЕТ)j"},
  });
}

TEST(TextFilters, TitleCapitalizesAfterSpacesDashesAndBrackets) {
  testing::expect_renders({
      {R"j({{ 'hello wORLD-x (y [z <w'|title }}|{{ "they're bill's"|title }}|{{ 'héllo wörld'|title }})j", R"j(Hello World-X (Y [Z <W|They're Bill's|Héllo Wörld)j"},
  });
}

TEST(TextFilters, ReplaceReplacesAllOrCount) {
  testing::expect_renders({
      {R"j({{ 'aaa'|replace('a','b') }} {{ 'aaa'|replace('a','b',2) }} {{ 'abc'|replace('', '-') }} {{ 123|replace(2, 9) }})j", R"j(bbb bba -a-b-c- 193)j"},
  });
}

TEST(TextFilters, IndentIndentsLinesAfterTheFirst) {
  testing::expect_renders({
      {R"j({{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(2, blank=true) }}|{{ 'x\ny'|indent('>>') }}|{{ 'a\n'|indent }}|)j", R"j(a
    b

    c|  a
  b|a
  
  b|x
>>y|a
|)j"},
  });
}

TEST(TextFilters, CenterAndWordcount) {
  testing::expect_renders({
      {R"j([{{ 'x'|center(7) }}][{{ 'ab'|center(7) }}] {{ 'a b  c, d-e'|wordcount }})j", R"j([   x   ][   ab  ] 5)j"},
  });
}

TEST(TextFilters, EscapeMakesHtmlEntitiesAndSafeMarksText) {
  testing::expect_renders({
      {R"j({{ '<a href="x">&\'</a>'|e }} {{ '<b>'|escape|escape }} {{ '<b>'|safe }} {{ '<b>'|forceescape }})j", R"j(&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt; &lt;b&gt; <b> &lt;b&gt;)j"},
  });
}

TEST(TextFilters, StringPrintsAnyValue) {
  testing::expect_renders({
      {R"j({{ 42|string }}{{ [1, 'a']|string }}{{ none|string }}[{{ undefined_name|string }}]{{ 1.0|string }})j", R"j(42[1, 'a']None[]1.0)j"},
  });
}

}  // namespace
}  // namespace met
