// Methods of str, list and dict.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Methods, StringSplitting) {
  testing::expect_renders({
      {R"j({{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a\nb\r\nc'.splitlines() }} {{ 'a\nb'.splitlines(true) }})j", R"j(['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a', 'b', 'c'] ['a\n', 'b'])j"},
      {R"j({{ 'a.b.c'.split('.', 1) }} {{ 'a.b.c'.rsplit('.', 1) }} {{ '  a b  '.rsplit(None, 1) }} {{ ''.split() }} {{ ''.split(',') }} {{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }})j", R"j(['a', 'b.c'] ['a.b', 'c'] ['  a', 'b'] [] [''] ('a', '=', 'b=c') ('a=b', '=', 'c'))j"},
  });
}

TEST(Methods, StringStripping) {
  testing::expect_renders({
      {R"j([{{ '  x  '.strip() }}]|{{ 'xxyxx'.lstrip('x') }}|{{ 'xxyxx'.rstrip('x') }}|[{{ '\n\t x\u3000'.strip() }}]|{{ 'abcba'.strip('ab') }})j", R"j([x]|yxx|xxy|[x]|c)j"},
  });
}

TEST(Methods, StringSearching) {
  testing::expect_renders({
      {R"j({{ 'abc'.startswith('a') }} {{ 'abc'.endswith(('x','c')) }} {{ 'abc'.startswith('b', 1) }} {{ 'abcabc'.find('c') }} {{ 'abcabc'.rfind('c') }} {{ 'abc'.find('z') }} {{ 'abcabc'.count('b') }} {{ 'héllo'.find('l') }} {{ 'abcabc'.index('c', 3) }})j", R"j(True True True 2 5 -1 2 2 5)j"},
  });
}

TEST(Methods, StringSearchFailsWhenIndexFindsNothing) {
  testing::expect_renders({
      {R"j({{ 'abc'.index('z') }})j", R"j(ERROR: ValueError)j"},
  });
}

TEST(Methods, StringCaseAndReplace) {
  testing::expect_renders({
      {R"j({{ 'hello world'.title() }} {{ "they're".title() }} {{ 'ABC'.lower() }} {{ 'abc'.upper() }} {{ 'aBC'.capitalize() }} {{ 'a-b-c'.replace('-', '+') }} {{ 'a-b-c'.replace('-', '', 1) }})j", R"j(Hello World They'Re abc ABC Abc a+b+c ab-c)j"},
  });
}

TEST(Methods, StringJoinPadAndPredicates) {
  testing::expect_renders({
      {R"j({{ ','.join(['a','b']) }} {{ 'x'.ljust(3, '.') }} {{ 'x'.rjust(3) }} {{ 'x'.center(4, '*') }} {{ 'a1'.isalnum() }} {{ '12'.isdigit() }} {{ ' '.isspace() }} {{ 'ab'.isalpha() }} {{ 'ab'.islower() }} {{ 'AB'.isupper() }} {{ ''.isdigit() }})j", R"j(a,b x..   x *x** True True True True True True False)j"},
  });
}

TEST(Methods, StringJoinNeedsStrings) {
  testing::expect_renders({
      {R"j({{ ','.join([1, 2]) }})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(Methods, DictMethods) {
  testing::expect_renders({
      {R"j({% set d = {'a': 1} %}{{ d.get('a') }}{{ d.get('b') }}{{ d.get('b', 5) }}{{ d.keys()|list }}{{ d.values()|list }}{{ d.items()|list }})j", R"j(1None5['a'][1][('a', 1)])j"},
      {R"j({% set d = {'a': 1} %}{% set _ = d.update({'c': 3}) %}{% set _ = d.update(e=5) %}{{ d }}{{ d.pop('a') }}{{ d.pop('zz', 'none') }}{{ d.setdefault('n', 0) }}{{ d }})j", R"j({'a': 1, 'c': 3, 'e': 5}1none0{'c': 3, 'e': 5, 'n': 0})j"},
      {R"j({% set d = {'a': 1} %}{% set c = d.copy() %}{% set _ = c.update(b=2) %}{{ d }}{{ c }})j", R"j({'a': 1}{'a': 1, 'b': 2})j"},
  });
}

TEST(Methods, ListMethodsMutateInPlace) {
  testing::expect_renders({
      {R"j({% set l = [1,2] %}{% set _ = l.append(3) %}{{ l }}{{ l.pop() }}{{ l }}{{ l.pop(0) }}{{ l.index(2) }}{% set _ = l.insert(0, 9) %}{{ l }}{% set _ = l.extend([7, 7]) %}{{ l }}{{ l.count(7) }})j", R"j([1, 2, 3]3[1, 2]10[9, 2][9, 2, 7, 7]2)j"},
      {R"j({% set l = [1,2,3] %}{% set _ = l.remove(2) %}{% set _ = l.reverse() %}{{ l }}{% set _ = l.clear() %}{{ l }})j", R"j([3, 1][])j"},
      {R"j({% set ns = namespace(items=[]) %}{% for i in range(3) %}{% set _ = ns.items.append(i * 2) %}{% endfor %}{{ ns.items }})j", R"j([0, 2, 4])j"},
  });
}

TEST(Methods, ListMethodsFailLikePython) {
  testing::expect_renders({
      {R"j({{ [].pop() }})j", R"j(ERROR: IndexError)j"},
      {R"j({{ [1,2].index(5) }})j", R"j(ERROR: ValueError)j"},
      {R"j({{ {}.pop('x') }})j", R"j(ERROR: KeyError)j"},
  });
}

TEST(Methods, TuplesHaveNoMutatingMethods) {
  testing::expect_renders({
      {R"j({{ (1, 2).append(3) }})j", R"j(ERROR: UndefinedError)j"},
  });
}

}  // namespace
}  // namespace met
