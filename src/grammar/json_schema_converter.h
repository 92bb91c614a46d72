// JsonSchemaConverter: the walk behind json_schema_to_gbnf (json_schema.h).
// Each schema node becomes one GBNF rule named after where it sits
// ("root-address-city"); identical bodies share one rule; each $ref target
// gets one rule, named before its body is built, so recursion works.
// Invariants: every rule name a visit returns is defined in the output.
// Threading: one converter per call. Tested by tests/grammar/json_schema_test.cc.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "grammar/json_schema.h"

namespace met {

class JsonSchemaConverter {
 public:
  using Json = nlohmann::ordered_json;
  JsonSchemaConverter(const Json& root, const JsonSchemaOptions& options) : root_(root), options_(options) {}

  Result<std::string> convert();

 private:
  // A rule name matching `schema` (at JSON pointer `ptr`).
  Result<std::string> visit(const Json& schema, const std::string& ptr, const std::string& name);
  Result<std::string> visit_keywords(const Json& s, const std::string& ptr, const std::string& name);
  Result<std::string> visit_ref(const std::string& ref, const std::string& ptr);
  Result<std::string> visit_branches(const Json& s, const std::string& ptr, const std::string& name);
  Result<std::string> visit_enum(const Json& s, const std::string& ptr, const std::string& name);
  Result<std::string> visit_type(const Json& s, const std::string& type, const std::string& ptr,
                                 const std::string& name);
  Result<std::string> visit_string(const Json& s, const std::string& ptr, const std::string& name);
  Result<std::string> visit_integer(const Json& s, const std::string& ptr, const std::string& name);
  Result<std::string> visit_number(const Json& s, const std::string& ptr, const std::string& name);
  // json_schema_containers.cc
  Result<std::string> visit_object(const Json& s, const std::string& ptr, const std::string& name);
  Result<std::string> visit_array(const Json& s, const std::string& ptr, const std::string& name);
  std::string excluded_key_rule(const std::vector<std::string>& names, const std::string& name);
  // json_schema_merge.cc
  Result<Json> merge_all_of(const Json& parts, const std::string& ptr);
  Result<Json> resolve(const Json& schema, const std::string& ptr);
  Status check_disjoint(const Json& branches, const std::string& ptr);

  // Defines a rule (reusing one with the same body); returns its name.
  std::string add_rule(const std::string& name, const std::string& body);
  std::string reserve_name(const std::string& name);
  void define_reserved(const std::string& name, const std::string& body);

  const Json& root_;
  JsonSchemaOptions options_;
  std::vector<std::pair<std::string, std::string>> rules_;  // name, body in order
  std::unordered_map<std::string, std::string> rule_by_body_;
  std::unordered_map<std::string, size_t> rule_index_;
  std::unordered_map<std::string, std::string> ref_rules_;  // pointer -> rule
  int depth_ = 0;
};

// "#/a/b: message"
Status schema_error(const std::string& ptr, const std::string& message);
// `ptr` + "/" + `token` with ~ and / escaped.
std::string pointer_child(const std::string& ptr, const std::string& token);
// A JSON value as compact JSON text (InvalidArgument on invalid UTF-8).
Result<std::string> json_text(const nlohmann::ordered_json& value);

}  // namespace met
