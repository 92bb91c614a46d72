// Whitespace control as Hugging Face configures Jinja2: trim_blocks,
// lstrip_blocks, `-` and `+` markers, comments, raw blocks, newlines.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Whitespace, TrimBlocksDropsTheFirstNewlineAfterABlockTag) {
  testing::expect_renders({
      {R"j({% if true %}
A
{% endif %}
B)j", R"j(A
B)j"},
      {R"j({% set x = 1 %}
{{ x }})j", R"j(1)j"},
      {R"j({% for i in [1,2] %}
{{ i }}
{% endfor %}
)j", R"j(1
2
)j"},
  });
}

TEST(Whitespace, TrimBlocksDoesNotApplyAfterAnExpression) {
  testing::expect_renders({
      {R"j({{ 'a' }}
b)j", R"j(a
b)j"},
      {R"j(a
  {{ 'v' }}
  b)j", R"j(a
  v
  b)j"},
  });
}

TEST(Whitespace, LstripBlocksDropsIndentBeforeABlockTagOnItsOwnLine) {
  testing::expect_renders({
      {R"j(line1
  {% if true %}
  inner
  {% endif %}
line2)j", R"j(line1
  inner
line2)j"},
      {R"j(	{% if true %}y{% endif %})j", R"j(y)j"},
      {R"j(  {% set x = 1 %}  
{{ x }})j", R"j(  
1)j"},
      {R"j(x  {% if true %}  y{% endif %})j", R"j(x    y)j"},
  });
}

TEST(Whitespace, MinusStripsAllWhitespaceOnThatSide) {
  testing::expect_renders({
      {R"j(a  {%- if true -%}  b  {%- endif -%}  c)j", R"j(abc)j"},
      {R"j(a {{- ' b ' -}} c)j", R"j(a b c)j"},
      {R"j({%- for i in [1,2] -%}
  {{ i }}
{%- endfor -%}
)j", R"j(12)j"},
      {R"j({% if true -%}
   A   
{%- endif %}
B)j", R"j(AB)j"},
  });
}

TEST(Whitespace, PlusKeepsWhitespaceThatLstripOrTrimWouldDrop) {
  testing::expect_renders({
      {R"j({%+ if true %}y{% endif %})j", R"j(y)j"},
      {R"j(a
  {%+ if true %}y{% endif %})j", R"j(a
  y)j"},
      {R"j(a
  {% if true +%}
y{% endif %})j", R"j(a

y)j"},
  });
}

TEST(Whitespace, CommentsVanishAndFollowTheSameRules) {
  testing::expect_renders({
      {R"j(x
    {# c #}
y)j", R"j(x
y)j"},
      {R"j(x
    {#- c -#}
   y)j", R"j(xy)j"},
      {R"j(  {{ 'x' }}  
  {# comment #}
after)j", R"j(  x  
after)j"},
      {R"j(a{# multi
line #}b)j", R"j(ab)j"},
  });
}

TEST(Whitespace, RawBlocksKeepTemplateSyntaxVerbatim) {
  testing::expect_renders({
      {R"j({% raw %}{{ not parsed }} {% if %}{% endraw %})j", R"j({{ not parsed }} {% if %})j"},
      {R"j({% raw -%}  x  {%- endraw %})j", R"j(x)j"},
      {R"j(   {% raw %}
  {{ y }}
   {% endraw %}
z)j", R"j(
  {{ y }}
z)j"},
  });
}

TEST(Whitespace, OneTrailingNewlineOfTheTemplateIsDropped) {
  testing::expect_renders({
      {R"j(a

)j", R"j(a
)j"},
      {R"j(a
)j", R"j(a)j"},
      {R"j({{ 'a' }}
)j", R"j(a)j"},
      {R"j(a)j", R"j(a)j"},
  });
}

TEST(Whitespace, CarriageReturnNewlinesBecomeNewlines) {
  testing::expect_renders({
      {R"j(text
more
{% if true %}
x
{% endif %}
)j", R"j(text
more
x
)j"},
      {R"j(ab)j", R"j(a
b)j"},
  });
}

}  // namespace
}  // namespace met
