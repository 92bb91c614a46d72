// json_schema.h's entry points: the converter behind an exception boundary,
// then the GBNF compiler. Tested by tests/grammar/json_schema_test.cc.
#include "grammar/json_schema.h"

#include "core/check.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_primitives.h"
#include "grammar/json_schema_converter.h"

namespace met {

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options) {
  return JsonSchemaConverter(schema, options).convert();
}

Result<Grammar> compile_json_schema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options) {
  MET_ASSIGN_OR_RETURN(std::string gbnf, json_schema_to_gbnf(schema, options));
  Result<Grammar> g = compile_gbnf(gbnf);
  if (!g.ok()) return invalid_argument("json schema: {}", g.status().message());
  return g;
}

Result<Grammar> compile_json_schema(const nlohmann::json& schema, const JsonSchemaOptions& options) {
  try {
    return compile_json_schema(nlohmann::ordered_json::parse(schema.dump()), options);
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument("json schema: {}", e.what());
  }
}

Result<Grammar> compile_json_schema(std::string_view schema_text, const JsonSchemaOptions& options) {
  nlohmann::ordered_json schema;
  try {
    schema = nlohmann::ordered_json::parse(schema_text);
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument("json schema is not valid JSON: {}", e.what());
  }
  return compile_json_schema(schema, options);
}

Grammar json_object_grammar() {
  Result<Grammar> g = compile_gbnf(json_object_gbnf());
  MET_CHECK(g.ok(), "json_object grammar: {}", g.status().to_string());
  return std::move(g).value();
}

}  // namespace met
