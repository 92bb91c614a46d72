// Tests compile_json_schema: for each schema, valid instances are accepted
// and invalid ones rejected by the matcher; unsupported or unsatisfiable
// schemas give errors naming the JSON pointer.
#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "grammar/grammar_testing.h"

namespace met {
namespace {

using testing::grammar_matches;

struct SchemaCase {
  const char* schema;
  std::vector<const char*> valid;
  std::vector<const char*> invalid;
};

Grammar schema_grammar(const char* schema, JsonSchemaOptions options = {}) {
  Result<Grammar> g = compile_json_schema(std::string_view(schema), options);
  EXPECT_TRUE(g.ok()) << schema << "\n" << g.status().to_string();
  return g.ok() ? std::move(g).value() : json_object_grammar();
}

void expect_cases(const std::vector<SchemaCase>& cases) {
  for (const SchemaCase& c : cases) {
    const Grammar g = schema_grammar(c.schema);
    for (const char* s : c.valid) EXPECT_TRUE(grammar_matches(g, s)) << c.schema << " should accept " << s;
    for (const char* s : c.invalid) EXPECT_FALSE(grammar_matches(g, s)) << c.schema << " should reject " << s;
  }
}

TEST(JsonSchema, ScalarTypesAcceptTheirValuesOnly) {
  expect_cases({
      {R"({"type":"string"})", {R"("")", R"("a\"b\\ \u00e9 é")"}, {"a", R"("a)", R"("\ud800")", "\"\x01\""}},
      {R"({"type":"integer"})", {"0", "-12", "1234567890123456"}, {"01", "1.5", "-", "12345678901234567", "-0x"}},
      {R"({"type":"number"})", {"0", "-1.25", "3e10", "2.5E-3"}, {".5", "1.", "+1", "1e"}},
      {R"({"type":"boolean"})", {"true", "false"}, {"True", "1"}},
      {R"({"type":"null"})", {"null"}, {"nil", ""}},
      {R"({"type":["integer","null"]})", {"1", "null"}, {"\"1\""}},
      {R"({})", {"1", R"({"a":[null]})", R"("x")"}, {"{", ""}},
  });
}

// JSON.parse gives Infinity past 1.8e308: a number the grammar admits stays
// finite (a 16-digit integer part and a positive exponent of at most 289;
// a negative one only tends to zero).
TEST(JsonSchema, NumbersStayFiniteWhenParsedAsDoubles) {
  expect_cases({
      {R"({"type":"number"})",
       {"1e99", "1E+100", "9999999999999999e289", "-9999999999999999.9999999999999999e289", "1e-300", "5e07"},
       {"1e290", "1e999", "-1e300", "1E+290", "1e0999"}},
  });
  const Grammar g = schema_grammar(R"({"type":"number"})");
  for (const char* text : {"9999999999999999.9999999999999999e289", "-9999999999999999e+289"}) {
    ASSERT_TRUE(grammar_matches(g, text)) << text;
    EXPECT_TRUE(std::isfinite(std::strtod(text, nullptr))) << text;
  }
}

TEST(JsonSchema, ObjectsKeepOrderRequiredAndAdditionalProperties) {
  expect_cases({
      {R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["b","a"],"additionalProperties":false})",
       {R"({"b":1,"a":"x"})", "{ \"b\": 1,\n  \"a\": \"x\" }"},
       {R"({"a":"x","b":1})", R"({"b":1})", R"({"b":1,"a":"x","c":2})", R"({"b":"1","a":"x"})"}},
      {R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false})",
       {"{}", R"({"a":1})", R"({"b":2})", R"({"a":1,"b":2})"},
       {R"({"b":2,"a":1})", R"({,"b":2})", R"({"a":1,})"}},
      {R"({"type":"object","properties":{"a":{"type":"integer"}}})",
       {R"({"a":1,"zz":[1,{"q":null}]})", R"({"ab":"x"})", R"({"b":true})"},
       {R"({"a":1,"a":2})", R"({"a":"no"})"}},
      {R"({"type":"object","additionalProperties":{"type":"integer"}})", {R"({"x":1,"y":2})", "{}"}, {R"({"x":"1"})"}},
      {R"({"type":"object","required":["id"],"additionalProperties":{"type":"boolean"}})", {R"({"id":true})"}, {"{}"}},
  });
}

TEST(JsonSchema, ArraysRespectItemsPrefixItemsAndCounts) {
  expect_cases({
      {R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})",
       {"[1]", "[1, 2,3]", "[ 1 ]"}, {"[]", "[1,2,3,4]", "[1,]", R"(["a"])"}},
      {R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})",
       {R"([])", R"(["a"])", R"(["a",1])"}, {R"([1])", R"(["a",1,2])"}},
      {R"({"type":"array","prefixItems":[{"const":"x"}],"items":{"type":"null"},"minItems":2})",
       {R"(["x",null])", R"(["x",null,null])"}, {R"(["x"])", R"([null,null])"}},
      {R"({"type":"array","maxItems":0})", {"[]"}, {"[1]"}},
  });
}

TEST(JsonSchema, EnumConstAndCombinators) {
  expect_cases({
      {R"({"enum":["red","green",3,null,{"a":[1]}]})", {R"("red")", "3", "null", R"({"a":[1]})"}, {R"("blue")", "4"}},
      {R"({"const":"fixed"})", {R"("fixed")"}, {R"("other")"}},
      {R"({"type":"string","enum":["a",1]})", {R"("a")"}, {"1"}},
      {R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":2}]})", {"7", R"("ab")"}, {R"("abc")", "true"}},
      {R"({"oneOf":[{"type":"boolean"},{"type":"null"}]})", {"true", "null"}, {"1"}},
      {R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]})",
       {R"({"a":1,"b":"x"})", R"({"a":1,"b":"x","c":0})"}, {R"({"a":1})", R"({"a":1,"b":2})"}},
  });
}

TEST(JsonSchema, RefsResolveLocallyAndMayRecurse) {
  expect_cases({
      {R"({"$defs":{"n":{"type":"integer"}},"type":"array","items":{"$ref":"#/$defs/n"}})", {"[1,2]"}, {R"(["1"])"}},
      {R"({"definitions":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/definitions/node"},{"type":"null"}]}},"required":["v","next"],"additionalProperties":false}},"$ref":"#/definitions/node"})",
       {R"({"v":1,"next":null})", R"({"v":1,"next":{"v":2,"next":null}})"}, {R"({"v":1})"}},
  });
}

TEST(JsonSchema, StringLengthsPatternsAndFormats) {
  expect_cases({
      {R"({"type":"string","minLength":2,"maxLength":3})", {R"("ab")", R"("a\nb")", R"("éé")"}, {R"("a")", R"("abcd")"}},
      {R"({"type":"string","pattern":"^[a-z]+-\\d{2}$"})", {R"("ab-12")"}, {R"("ab-1")", R"("AB-12")", R"("ab-123")"}},
      {R"({"type":"string","pattern":"ab"})", {R"("ab")", R"("xaby")"}, {R"("a")"}},
      {R"({"type":"string","pattern":"^(cat|dog)s?$"})", {R"("cat")", R"("dogs")"}, {R"("cow")"}},
      {R"({"type":"string","format":"date"})", {R"("2024-02-29")"}, {R"("2024-2-29")", R"("2024-13-01")"}},
      {R"({"type":"string","format":"date-time"})", {R"("2024-02-29T23:59:01Z")", R"("2024-02-29T01:02:03.5+01:00")"}, {R"("2024-02-29 23:59:01")"}},
      {R"({"type":"string","format":"uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567")"}},
      {R"({"type":"string","format":"email"})", {R"("a.b@example.com")"}, {R"("a@b")", R"("@x.com")"}},
  });
}

TEST(JsonSchema, IntegerBoundsAreExact) {
  const struct {
    const char* schema;
    int lo, hi;
  } cases[] = {
      {R"({"type":"integer","minimum":-37,"maximum":125})", -37, 125},
      {R"({"type":"integer","exclusiveMinimum":9,"maximum":100})", 10, 100},
      {R"({"type":"integer","minimum":0,"exclusiveMaximum":1000})", 0, 999},
      {R"({"type":"integer","minimum":-1200,"maximum":-95})", -1200, -95},
  };
  for (const auto& c : cases) {
    const Grammar g = schema_grammar(c.schema);
    for (int v = -1300; v <= 1300; ++v) {
      EXPECT_EQ(grammar_matches(g, std::to_string(v)), v >= c.lo && v <= c.hi) << c.schema << " at " << v;
    }
  }
  const Grammar min_only = schema_grammar(R"({"type":"integer","minimum":5})");
  EXPECT_TRUE(grammar_matches(min_only, "9999999999999999"));
  EXPECT_FALSE(grammar_matches(min_only, "4"));
}

TEST(JsonSchema, UnsupportedOrUnsatisfiableSchemasNameTheirPlace) {
  const struct {
    const char* schema;
    const char* message;
  } cases[] = {
      {R"({"properties":{"age":{"type":"integer","multipleOf":2}}})", "#/properties/age/multipleOf: unsupported keyword 'multipleOf'"},
      {R"({"$ref":"http://example.com/s.json"})", "external $ref"},
      {R"({"$ref":"#/$defs/missing"})", "does not resolve"},
      {R"({"type":"string","minLength":3,"maxLength":2})", "nothing matches"},
      {R"({"type":"object","required":["a"],"additionalProperties":false})", "#/required: 'a' is required but not allowed"},
      {R"({"oneOf":[{"type":"integer"},{"type":"number"}]})", "#/oneOf: oneOf branches 0 and 1 may both match"},
      {R"j({"items":{"type":"string","pattern":"(?=x)"}})j", "#/items/pattern: pattern offset"},
      {R"({"not":{}})", "#/not: unsupported keyword"},
      {R"({"type":"array","uniqueItems":true})", "uniqueItems is not supported"},
      {R"({"type":"frog"})", "unknown type 'frog'"},
      {R"(false)", "accepts nothing"},
      {R"({"enum":[1,2],"type":"string"})", "nothing matches"},
      {"{", "not valid JSON"},
  };
  for (const auto& c : cases) {
    Result<Grammar> g = compile_json_schema(std::string_view(c.schema));
    ASSERT_FALSE(g.ok()) << c.schema;
    EXPECT_NE(g.status().message().find(c.message), std::string::npos) << c.schema << "\n got: " << g.status().message();
  }
}

TEST(JsonSchema, AnnotationsAreIgnored) {
  const Grammar g = schema_grammar(
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema","title":"t","description":"d","type":"integer","examples":[1],"default":2})");
  EXPECT_TRUE(grammar_matches(g, "5"));
}

TEST(JsonSchema, StrictModeClosesObjectsByDefault) {
  const char* schema = R"({"type":"object","properties":{"a":{"type":"integer"}}})";
  EXPECT_FALSE(grammar_matches(schema_grammar(schema, {.strict = true}), R"({"a":1,"b":2})"));
  EXPECT_TRUE(grammar_matches(schema_grammar(schema, {.strict = false}), R"({"a":1,"b":2})"));
}

TEST(JsonSchema, GbnfTextCompilesAndWhitespaceIsBounded) {
  Result<std::string> text = json_schema_to_gbnf(nlohmann::ordered_json::parse(R"({"type":"array"})"));
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("root ::= "), std::string::npos);
  const Grammar g = schema_grammar(R"({"type":"array"})");
  EXPECT_TRUE(grammar_matches(g, "[\n" + std::string(20, ' ') + "1]"));
  EXPECT_FALSE(grammar_matches(g, "[\n" + std::string(21, ' ') + "1]"));
  EXPECT_FALSE(grammar_matches(g, "[  1]"));
}

TEST(JsonObjectGrammar, AcceptsObjectsOnly) {
  const Grammar g = json_object_grammar();
  EXPECT_TRUE(grammar_matches(g, R"({"a": [1, {"b": null}], "c": "d"})"));
  EXPECT_TRUE(grammar_matches(g, "{}"));
  EXPECT_FALSE(grammar_matches(g, "[]"));
  EXPECT_FALSE(grammar_matches(g, R"({"a" 1})"));
}

}  // namespace
}  // namespace met
