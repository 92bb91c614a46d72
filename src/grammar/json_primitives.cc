// JSON primitives: the GBNF text of each primitive rule and format.
// Tested by tests/grammar/json_schema_test.cc.
#include "grammar/json_primitives.h"

#include <utility>

#include "grammar/grammar.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

constexpr std::pair<std::string_view, std::string_view> kPrimitives[] = {
    {"ws", R"(| " " | "\n" [ \t]{0,20})"},
    {"hex", R"([0-9a-fA-F])"},
    {"char",
     R"([^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" ([0-9a-cA-CefEF] hex hex hex | [dD] [0-7] hex hex)))"},
    {"string", R"("\"" char* "\"")"},
    {"integer", R"("-"? ("0" | [1-9] [0-9]{0,15}))"},
    // A positive exponent of at most 289 keeps the largest value, 16 digits
    // before the point, below 1e306: finite as a double (JSON.parse).
    {"number", R"("-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] ("-" [0-9]{1,3} | "+"? ([0-9]{1,2} | "1" [0-9]{2} | "2" [0-8] [0-9])))?)"},
    {"boolean", R"("true" | "false")"},
    {"null", R"("null")"},
    {"value", R"(object | array | string | number | boolean | null)"},
    {"object", R"("{" ws (string ws ":" ws value ws ("," ws string ws ":" ws value ws)*)? "}")"},
    {"array", R"("[" ws (value ws ("," ws value ws)*)? "]")"},
};

constexpr std::pair<std::string_view, std::string_view> kFormats[] = {
    {"date", R"([0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]))"},
    {"time",
     R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))"},
    {"date-time",
     R"([0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) "T" ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))"},
    {"uuid",
     R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})"},
    {"email",
     R"([a-zA-Z0-9_+-]{1,32} ("." [a-zA-Z0-9_+-]{1,32}){0,3} "@" [a-zA-Z0-9] [a-zA-Z0-9-]{0,30} ("." [a-zA-Z0-9] [a-zA-Z0-9-]{0,30}){0,3} "." [a-zA-Z]{2,8})"},
};

}  // namespace

std::optional<std::string_view> json_primitive_body(std::string_view name) {
  for (const auto& [n, body] : kPrimitives) {
    if (n == name) return body;
  }
  return std::nullopt;
}

std::optional<std::string_view> json_format_body(std::string_view format) {
  for (const auto& [n, body] : kFormats) {
    if (n == format) return body;
  }
  return std::nullopt;
}

std::string gbnf_literal(std::string_view utf8_text) {
  std::string out = "\"";
  for (size_t i = 0; i < utf8_text.size();) {
    const Utf8Char ch = decode_utf8(utf8_text, i);
    out += gbnf_escape(ch.code_point, false);
    i += ch.length;
  }
  return out + "\"";
}

std::string_view json_object_gbnf() {
  static const std::string kText = [] {
    std::string text = "root ::= object\n";
    for (const auto& [n, body] : kPrimitives) text += std::string(n) + " ::= " + std::string(body) + "\n";
    return text;
  }();
  return kText;
}

}  // namespace met
