// Undefined values behave as Jinja2's default Undefined: they print as
// nothing, are falsy and empty, and fail when used as a value.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Undefined, PrintsAsNothingAndIsFalsyAndEmpty) {
  testing::expect_renders({
      {R"j([{{ x }}]{{ x is defined }}{{ not x }}{{ x|length }}{% for i in x %}never{% endfor %}{{ x == x }}{{ x == none }}{{ x ~ 'a' }}{{ 'a' in x }})j", R"j([]FalseTrue0TrueFalseaFalse)j"},
  });
}

TEST(Undefined, MissingKeysAndAttributesAreUndefined) {
  testing::expect_renders({
      {R"j([{{ d.missing }}][{{ d['missing'] }}][{{ l[5] }}][{{ 'abc'[7] }}]{{ d.missing is defined }})j", R"j([][][][]False)j", R"j({"d": {}, "l": []})j"},
      {R"j({{ none.x is defined }}|{{ 1.x is defined }})j", R"j(False|False)j"},
  });
}

TEST(Undefined, UsingUndefinedAsAValueFails) {
  testing::expect_renders({
      {R"j({{ foo.bar }})j", R"j(ERROR: UndefinedError: 'foo' is undefined)j"},
      {R"j({{ {}.bar.baz }})j", R"j(ERROR: UndefinedError: 'dict object' has no attribute 'bar')j"},
      {R"j({{ x + 1 }})j", R"j(ERROR: UndefinedError: 'x' is undefined)j"},
      {R"j({{ x() }})j", R"j(ERROR: UndefinedError)j"},
      {R"j({{ x[0] }})j", R"j(ERROR: UndefinedError)j"},
      {R"j({{ x < 1 }})j", R"j(ERROR: UndefinedError)j"},
      {R"j({{ -x }})j", R"j(ERROR: UndefinedError)j"},
      {R"j({{ x.startswith('a') }})j", R"j(ERROR: UndefinedError)j"},
      {R"j({% macro m(a) %}{{ a + 1 }}{% endmacro %}{{ m() }})j", R"j(ERROR: UndefinedError: parameter 'a' was not provided)j"},
  });
}

}  // namespace
}  // namespace met
