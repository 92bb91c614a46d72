// Conversion filters: tojson (as Hugging Face defines it), int, float, abs,
// round, default, attr.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(ConvertFilters, TojsonMatchesPythonJsonDumps) {
  testing::expect_renders({
      {R"j({{ {'b': 1, 'a': [1, 2.5, 'é'], 'c': none, 'd': true}|tojson }}|{{ [1,2]|tojson(indent=2) }}|{{ {'a':{'b':[]}, 'c': {}}|tojson(indent=2) }})j", R"j({"b": 1, "a": [1, 2.5, "é"], "c": null, "d": true}|[
  1,
  2
]|{
  "a": {
    "b": []
  },
  "c": {}
})j"},
      {R"j({{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ {'a': 'é"\\\n\t\x01/'}|tojson(ensure_ascii=true) }}|{{ [1,[2]]|tojson(separators=(',',':')) }})j", R"j({"a": 2, "b": 1}|{"a": "\u00e9\"\\\n\t\u0001/"}|[1,[2]])j"},
      {R"j({{ (1,2)|tojson }}{{ 'a\u2028b😀'|tojson }}{{ 'x'|tojson(ensure_ascii=true) }}{{ '😀'|tojson(ensure_ascii=true) }}{{ {'a': 1}|tojson(indent='\t') }})j", R"j([1, 2]"a b😀""x""\ud83d\ude00"{
	"a": 1
})j"},
      {R"j({{ {1: 'a', 2.5: 'b', true: 'c', none: 'd'}|tojson }} {{ 1e100|tojson }} {{ 1.0|tojson }} {{ -0.0|tojson }})j", R"j({"1": "c", "2.5": "b", "null": "d"} 1e+100 1.0 -0.0)j"},
      {R"j({{ tools|tojson }})j", R"j([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "string", "enum": ["a", "b"]}}}}}])j", R"j({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "string", "enum": ["a", "b"]}}}}}]})j"},
  });
}

TEST(ConvertFilters, TojsonOfUndefinedFails) {
  testing::expect_renders({
      {R"j({{ undefined_name|tojson }})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(ConvertFilters, IntAndFloatConvertOrFallBack) {
  testing::expect_renders({
      {R"j({{ '42'|int }} {{ ' -42 '|int }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ true|int }} {{ none|int }} {{ '1_000'|int }} {{ 'ff'|int(base=16) }} {{ '0x1f'|int(0, 0) }})j", R"j(42 -42 4 0 7 3 1 0 1000 255 31)j"},
      {R"j({{ '3.5'|float }} {{ 'a'|float }} {{ '1e3'|float }} {{ 2|float }} {{ 'x'|float(1.5) }} {{ ' inf '|float }})j", R"j(3.5 0.0 1000.0 2.0 1.5 inf)j"},
  });
}

TEST(ConvertFilters, AbsAndRound) {
  testing::expect_renders({
      {R"j({{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 2.1|round(0,'ceil') }} {{ 2.9|round(0, 'floor') }} {{ 5|round }} {{ 1234.5|round(-2) }} {{ -0.5|round }} {{ 1.5|round(-400) }})j", R"j(3 2.5 2.0 4.0 2.67 3.0 2.0 5 1200.0 -0.0 0.0)j"},
  });
}

TEST(ConvertFilters, DefaultReplacesUndefinedOrFalsyWhenAsked) {
  testing::expect_renders({
      {R"j({{ x|default('d') }}|{{ none|default('d') }}|{{ ''|default('d', true) }}|{{ 0|d('zero', boolean=true) }}|{{ 'v'|default('d') }}|[{{ x|default }}])j", R"j(d|None|d|zero|v|[])j"},
  });
}

TEST(ConvertFilters, AttrReadsAnAttributeNotAKey) {
  testing::expect_renders({
      {R"j({{ namespace(a=1)|attr('a') }} {{ ({'k': 1}|attr('k')) is defined }} {{ ({'k': 1}|attr('items')) is callable }})j", R"j(1 False True)j"},
  });
}

TEST(ConvertFilters, UnknownFiltersFailOnlyWhenReached) {
  testing::expect_renders({
      {R"j({% if false %}{{ x|no_such_filter }}{% endif %}ok)j", R"j(ok)j"},
      {R"j({{ 1|no_such_filter }})j", R"j(ERROR: TemplateRuntimeError)j"},
  });
}

}  // namespace
}  // namespace met
