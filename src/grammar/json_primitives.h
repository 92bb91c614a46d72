// JSON primitives as GBNF rule bodies, shared by the JSON Schema converter
// and the json_object grammar: whitespace, strings, numbers, any value and the
// string formats (date, time, date-time, uuid, email).
// Bounds that keep a model from looping forever: whitespace is nothing, one
// space, or a newline and at most 20 spaces/tabs; integer parts have at most
// 16 digits, fractions 16, exponents 3. Strings have no length bound unless
// the schema gives one. \u escapes never name a surrogate (lengths then
// count as a validator counts them).
// Threading: constants and pure functions. Tested by
// tests/grammar/json_schema_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace met {

// Rule names the converter defines once with the bodies below.
inline constexpr std::string_view kWsRule = "ws";
inline constexpr std::string_view kCharRule = "char";
inline constexpr std::string_view kStringRule = "string";
inline constexpr std::string_view kNumberRule = "number";
inline constexpr std::string_view kIntegerRule = "integer";
inline constexpr std::string_view kBooleanRule = "boolean";
inline constexpr std::string_view kNullRule = "null";
inline constexpr std::string_view kValueRule = "value";
inline constexpr std::string_view kObjectRule = "object";
inline constexpr std::string_view kArrayRule = "array";

// The body of primitive rule `name` (one of the names above), or nullopt.
std::optional<std::string_view> json_primitive_body(std::string_view name);

// The GBNF expression for the content (inside the quotes) of a string of
// `format`, or nullopt for a format met does not constrain (an annotation).
std::optional<std::string_view> json_format_body(std::string_view format);

// `text` as a GBNF string literal, quotes included.
std::string gbnf_literal(std::string_view utf8_text);

// The complete GBNF of json_object mode: any JSON object.
std::string_view json_object_gbnf();

}  // namespace met
