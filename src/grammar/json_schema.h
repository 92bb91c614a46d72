// JSON Schema to grammar: structured output (`response_format: json_schema`,
// `json_object`, strict tool arguments).
//
//   Result<Grammar> g = compile_json_schema(schema_text);   // keeps key order
//   Result<std::string> gbnf = json_schema_to_gbnf(schema);  // for debugging
//   Grammar any_object = json_object_grammar();
//
// Supported: type (and type arrays), properties (emitted in schema order),
// required, additionalProperties (false/true/schema; default true, false
// with JsonSchemaOptions::strict), enum, const, items, prefixItems,
// minItems/maxItems, nested objects, $ref to any local JSON pointer (#,
// #/$defs/..., #/definitions/...; recursion allowed), anyOf, oneOf (only when
// its branches are provably disjoint), allOf (merged: properties united,
// required united, bounds tightened), string minLength/maxLength, pattern
// (regex_to_gbnf.h), format (date, time, date-time, uuid, email; others are
// annotations), integer minimum/maximum/exclusive*, number minimum >= 0 with
// an integer bound. Annotations (title, description, examples, default,
// $schema, $id, $comment, deprecated, readOnly, writeOnly) are ignored.
// Anything else that constrains values (not, if/then/else, multipleOf,
// uniqueItems, minProperties, patternProperties, external $ref, ...) and
// unsatisfiable schemas are errors naming the JSON pointer of the place:
// "#/properties/age: unsupported keyword 'multipleOf'".
// The guarantee: every text the grammar accepts parses as JSON and validates
// against the schema. Whitespace between tokens is none, one space, or a
// newline and up to 20 spaces/tabs, so a model cannot loop on whitespace.
// Threading: pure functions. Tested by tests/grammar/json_schema_test.cc,
// random_generation_test.cc; fuzzed by fuzz/json_schema_fuzz.cc.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "grammar/grammar.h"

namespace met {

struct JsonSchemaOptions {
  bool strict = false;  // additionalProperties defaults to false (OpenAI strict mode)
};

// GBNF text of a schema. Pass ordered_json (or the text) to keep property
// order; nlohmann::json sorts keys.
Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options = {});
Result<Grammar> compile_json_schema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options = {});
Result<Grammar> compile_json_schema(const nlohmann::json& schema, const JsonSchemaOptions& options = {});
// Parses `schema_text` (InvalidArgument if it is not JSON), keeping key order.
Result<Grammar> compile_json_schema(std::string_view schema_text, const JsonSchemaOptions& options = {});

// Any JSON object (response_format json_object).
Grammar json_object_grammar();

}  // namespace met
