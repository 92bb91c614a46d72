// JsonSchemaConverter: dispatch over keywords, $ref, anyOf/oneOf, enum/const
// and the scalar types. Objects and arrays: json_schema_containers.cc; allOf
// merging and oneOf disjointness: json_schema_merge.cc.
// Tested by tests/grammar/json_schema_test.cc.
#include "grammar/json_schema_converter.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "grammar/integer_range.h"
#include "grammar/json_primitives.h"
#include "grammar/regex_to_gbnf.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string, std::less<>> kAnnotations = {
    "title", "description", "examples", "default", "$schema", "$id", "$comment", "deprecated",
    "readOnly", "writeOnly", "$defs", "definitions", "contentMediaType", "contentEncoding", "$anchor"};
const std::set<std::string, std::less<>> kHandled = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items", "prefixItems",
    "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "$ref"};
const std::string kPrimitiveNames[] = {"ws", "hex", "char", "string", "integer", "number",
                                       "boolean", "null", "value", "object", "array"};

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 60)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    out += ok ? c : '-';
  }
  return out.empty() ? "x" : out;
}

// The JSON Schema types a value satisfies ("integer" values also "number").
bool value_has_type(const Json& v, const std::string& type) {
  if (type == "integer") return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

std::vector<std::string> inferred_types(const Json& s) {
  auto any = [&](std::initializer_list<const char*> keys) {
    return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return s.contains(k); });
  };
  std::vector<std::string> types;
  if (any({"properties", "additionalProperties", "required"})) types.push_back("object");
  if (any({"items", "prefixItems", "minItems", "maxItems"})) types.push_back("array");
  if (any({"minLength", "maxLength", "pattern", "format"})) types.push_back("string");
  if (any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) types.push_back("number");
  return types;
}

}  // namespace

Status schema_error(const std::string& ptr, const std::string& message) {
  return invalid_argument("#{}: {}", ptr, message);
}

std::string pointer_child(const std::string& ptr, const std::string& token) {
  std::string out = ptr + "/";
  for (char c : token) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

Result<std::string> json_text(const Json& value) {
  try {
    return value.dump(-1, ' ', false, Json::error_handler_t::strict);
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument("value is not valid UTF-8 JSON: {}", e.what());
  }
}

std::string JsonSchemaConverter::reserve_name(const std::string& name) {
  std::string n = sanitize(name);
  const bool primitive = std::find(std::begin(kPrimitiveNames), std::end(kPrimitiveNames), n) != std::end(kPrimitiveNames);
  if (primitive || rule_index_.count(n) || n == "root") {
    for (int i = 1;; ++i) {
      const std::string candidate = fmt::format("{}-{}", n, i);
      if (!rule_index_.count(candidate)) {
        n = candidate;
        break;
      }
    }
  }
  rule_index_[n] = rules_.size();
  rules_.push_back({n, ""});
  return n;
}

void JsonSchemaConverter::define_reserved(const std::string& name, const std::string& body) {
  rules_[rule_index_.at(name)].second = body;
}

std::string JsonSchemaConverter::add_rule(const std::string& name, const std::string& body) {
  auto it = rule_by_body_.find(body);
  if (it != rule_by_body_.end()) return it->second;
  const std::string n = reserve_name(name);
  define_reserved(n, body);
  rule_by_body_.emplace(body, n);
  return n;
}

Result<std::string> JsonSchemaConverter::convert() {
  try {
    MET_ASSIGN_OR_RETURN(std::string top, visit(root_, "", "schema"));
    std::string text = "root ::= " + top + "\n";
    for (const auto& [name, body] : rules_) text += name + " ::= " + body + "\n";
    for (const std::string& p : kPrimitiveNames) text += p + " ::= " + std::string(*json_primitive_body(p)) + "\n";
    return text;
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument("malformed schema: {}", e.what());
  }
}

Result<std::string> JsonSchemaConverter::visit(const Json& s, const std::string& ptr, const std::string& name) {
  if (s.is_boolean()) {
    if (s.get<bool>()) return std::string(kValueRule);
    return schema_error(ptr, "schema 'false' accepts nothing");
  }
  if (!s.is_object()) return schema_error(ptr, "a schema must be an object or a boolean");
  if (depth_ > 64) return schema_error(ptr, "schema nested deeper than 64");
  for (const auto& [key, value] : s.items()) {
    if (!kAnnotations.count(key) && !kHandled.count(key)) {
      return schema_error(pointer_child(ptr, key), fmt::format("unsupported keyword '{}'", key));
    }
  }
  ++depth_;
  Result<std::string> out = visit_keywords(s, ptr, name);
  --depth_;
  return out;
}

Result<std::string> JsonSchemaConverter::visit_keywords(const Json& s, const std::string& ptr, const std::string& name) {
  bool ref_has_siblings = false;
  for (const auto& [key, value] : s.items()) ref_has_siblings |= key != "$ref" && !kAnnotations.count(key);
  if (s.contains("allOf") || (s.contains("$ref") && ref_has_siblings)) {
    Json parts = Json::array();
    Json rest = s;
    if (s.contains("allOf")) {
      if (!s["allOf"].is_array() || s["allOf"].empty()) return schema_error(pointer_child(ptr, "allOf"), "must be a non-empty array");
      for (const Json& p : s["allOf"]) parts.push_back(p);
      rest.erase("allOf");
    }
    parts.push_back(rest);
    MET_ASSIGN_OR_RETURN(Json merged, merge_all_of(parts, ptr));
    return visit(merged, ptr, name);
  }
  if (s.contains("$ref")) {
    if (!s["$ref"].is_string()) return schema_error(pointer_child(ptr, "$ref"), "must be a string");
    return visit_ref(s["$ref"].get<std::string>(), pointer_child(ptr, "$ref"));
  }
  if (s.contains("anyOf") || s.contains("oneOf")) return visit_branches(s, ptr, name);
  if (s.contains("enum") || s.contains("const")) return visit_enum(s, ptr, name);
  std::vector<std::string> types;
  if (s.contains("type")) {
    const Json& t = s["type"];
    if (t.is_string()) types.push_back(t.get<std::string>());
    if (t.is_array()) {
      for (const Json& x : t) {
        if (!x.is_string()) return schema_error(pointer_child(ptr, "type"), "type names must be strings");
        types.push_back(x.get<std::string>());
      }
    }
    if (types.empty()) return schema_error(pointer_child(ptr, "type"), "must be a type name or a non-empty array");
  } else {
    types = inferred_types(s);
    if (types.empty()) return std::string(kValueRule);
  }
  std::string body;
  for (const std::string& type : types) {
    MET_ASSIGN_OR_RETURN(std::string r, visit_type(s, type, ptr, types.size() == 1 ? name : name + "-" + type));
    body += (body.empty() ? "" : " | ") + r;
  }
  return types.size() == 1 ? body : add_rule(name, body);
}

Result<std::string> JsonSchemaConverter::visit_ref(const std::string& ref, const std::string& ptr) {
  if (ref.empty() || ref[0] != '#') return schema_error(ptr, fmt::format("external $ref '{}' is not supported", ref));
  if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
  const Json* target = nullptr;
  try {
    target = &root_.at(Json::json_pointer(ref.substr(1)));
  } catch (const nlohmann::json::exception&) {
    return schema_error(ptr, fmt::format("$ref '{}' does not resolve", ref));
  }
  const size_t slash = ref.rfind('/');
  const std::string name = reserve_name(ref == "#" ? "schema-ref" : "def-" + ref.substr(slash + 1));
  ref_rules_.emplace(ref, name);
  MET_ASSIGN_OR_RETURN(std::string body, visit(*target, ref.substr(1), name + "-body"));
  define_reserved(name, body);
  return name;
}

Result<std::string> JsonSchemaConverter::visit_branches(const Json& s, const std::string& ptr, const std::string& name) {
  if (s.contains("anyOf") && s.contains("oneOf")) return schema_error(ptr, "anyOf together with oneOf is not supported");
  const std::string key = s.contains("anyOf") ? "anyOf" : "oneOf";
  const Json& branches = s[key];
  if (!branches.is_array() || branches.empty()) return schema_error(pointer_child(ptr, key), "must be a non-empty array");
  Json siblings = s;
  siblings.erase(key);
  for (const std::string& a : kAnnotations) siblings.erase(a);
  Json resolved = Json::array();
  std::string body;
  for (size_t i = 0; i < branches.size(); ++i) {
    const std::string bptr = pointer_child(pointer_child(ptr, key), std::to_string(i));
    Json branch = branches[i];
    if (!siblings.empty()) {
      MET_ASSIGN_OR_RETURN(branch, merge_all_of(Json::array({siblings, branch}), bptr));
    }
    if (key == "oneOf") {
      MET_ASSIGN_OR_RETURN(Json r, resolve(branch, bptr));
      resolved.push_back(r);
    }
    MET_ASSIGN_OR_RETURN(std::string r, visit(branch, bptr, fmt::format("{}-{}", name, i)));
    body += (body.empty() ? "" : " | ") + r;
  }
  if (key == "oneOf") MET_RETURN_IF_ERROR(check_disjoint(resolved, pointer_child(ptr, key)));
  return add_rule(name, body);
}

Result<std::string> JsonSchemaConverter::visit_enum(const Json& s, const std::string& ptr, const std::string& name) {
  for (const auto& [key, value] : s.items()) {
    if (key != "type" && key != "enum" && key != "const" && !kAnnotations.count(key)) {
      return schema_error(pointer_child(ptr, key), fmt::format("'{}' beside enum/const is not supported", key));
    }
  }
  Json values = s.contains("const") ? Json::array({s["const"]}) : s["enum"];
  if (!values.is_array()) return schema_error(pointer_child(ptr, "enum"), "must be an array");
  if (s.contains("const") && s.contains("enum") &&
      std::find(s["enum"].begin(), s["enum"].end(), s["const"]) == s["enum"].end()) {
    return schema_error(ptr, "const is not one of enum: nothing matches");
  }
  std::string body;
  for (const Json& v : values) {
    if (s.contains("type")) {
      const Json& t = s["type"];
      bool ok = false;
      for (const Json& x : t.is_array() ? t : Json::array({t})) ok = ok || (x.is_string() && value_has_type(v, x.get<std::string>()));
      if (!ok) continue;
    }
    MET_ASSIGN_OR_RETURN(std::string text, json_text(v));
    body += (body.empty() ? "" : " | ") + gbnf_literal(text);
  }
  if (body.empty()) return schema_error(ptr, "no enum/const value has the schema's type: nothing matches");
  return add_rule(name, body);
}

Result<std::string> JsonSchemaConverter::visit_type(const Json& s, const std::string& type, const std::string& ptr,
                                                    const std::string& name) {
  if (type == "string") return visit_string(s, ptr, name);
  if (type == "integer") return visit_integer(s, ptr, name);
  if (type == "number") return visit_number(s, ptr, name);
  if (type == "boolean") return std::string(kBooleanRule);
  if (type == "null") return std::string(kNullRule);
  if (type == "object") return visit_object(s, ptr, name);
  if (type == "array") return visit_array(s, ptr, name);
  return schema_error(pointer_child(ptr, "type"), fmt::format("unknown type '{}'", type));
}

Result<std::string> JsonSchemaConverter::visit_string(const Json& s, const std::string& ptr, const std::string& name) {
  const bool lengths = s.contains("minLength") || s.contains("maxLength");
  if (s.contains("format") && s["format"].is_string()) {
    if (std::optional<std::string_view> f = json_format_body(s["format"].get<std::string>())) {
      if (lengths || s.contains("pattern")) return schema_error(ptr, "format with pattern or lengths is not supported");
      return add_rule(name, fmt::format(R"("\"" ({}) "\"")", *f));
    }
  }
  if (s.contains("pattern")) {
    if (lengths) return schema_error(ptr, "pattern with minLength/maxLength is not supported");
    if (!s["pattern"].is_string()) return schema_error(pointer_child(ptr, "pattern"), "must be a string");
    Result<std::string> re = regex_to_gbnf(s["pattern"].get<std::string>(), kCharRule);
    if (!re.ok()) return schema_error(pointer_child(ptr, "pattern"), re.status().message());
    return add_rule(name, fmt::format(R"("\"" {} "\"")", *re));
  }
  if (!lengths) return std::string(kStringRule);
  for (const char* k : {"minLength", "maxLength"}) {
    if (s.contains(k) && !(s[k].is_number_unsigned() || (s[k].is_number_integer() && s[k].get<int64_t>() >= 0))) {
      return schema_error(pointer_child(ptr, k), "must be a non-negative integer");
    }
  }
  const uint64_t lo = s.value("minLength", uint64_t{0});
  std::optional<uint64_t> hi;
  if (s.contains("maxLength")) hi.emplace(s["maxLength"].get<uint64_t>());
  if (hi && *hi < lo) return schema_error(ptr, "maxLength < minLength: nothing matches");
  if (lo > 10000 || (hi && *hi > 10000)) return schema_error(ptr, "string lengths over 10000 are not supported");
  const std::string rep = hi ? fmt::format("{{{},{}}}", lo, *hi) : fmt::format("{{{},}}", lo);
  return add_rule(name, fmt::format(R"("\"" {}{} "\"")", kCharRule, rep));
}

Result<std::string> JsonSchemaConverter::visit_integer(const Json& s, const std::string& ptr, const std::string& name) {
  auto bound = [&](const char* key, bool lower) -> Result<std::optional<int64_t>> {
    if (!s.contains(key)) return std::optional<int64_t>();
    if (!s[key].is_number()) return schema_error(pointer_child(ptr, key), "must be a number");
    const bool exclusive = std::string_view(key).starts_with("exclusive");
    double v = s[key].get<double>();
    v = lower ? (exclusive ? std::floor(v) + 1 : std::ceil(v)) : (exclusive ? std::ceil(v) - 1 : std::floor(v));
    v = std::clamp(v, -1e17, 1e17);
    return std::optional<int64_t>(static_cast<int64_t>(v));
  };
  int64_t lo = -kMaxJsonInteger, hi = kMaxJsonInteger;
  bool bounded = false;
  for (const char* k : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
    const bool lower = std::string_view(k).find("inimum") != std::string_view::npos;
    MET_ASSIGN_OR_RETURN(std::optional<int64_t> b, bound(k, lower));
    if (!b) continue;
    bounded = true;
    if (lower) lo = std::max(lo, *b);
    if (!lower) hi = std::min(hi, *b);
  }
  if (!bounded) return std::string(kIntegerRule);
  if (lo > hi) return schema_error(ptr, "integer bounds leave nothing");
  return add_rule(name, integer_range_gbnf(lo, hi));
}

Result<std::string> JsonSchemaConverter::visit_number(const Json& s, const std::string& ptr, const std::string& name) {
  const bool other = s.contains("maximum") || s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum");
  if (!s.contains("minimum") && !other) return std::string(kNumberRule);
  const Json& m = s.contains("minimum") ? s["minimum"] : Json();
  if (other || !m.is_number() || m.get<double>() < 0 || std::floor(m.get<double>()) != m.get<double>() ||
      m.get<double>() > static_cast<double>(kMaxJsonInteger)) {
    return schema_error(ptr, "number bounds other than an integer minimum >= 0 are not supported (use type integer)");
  }
  const auto lo = static_cast<int64_t>(m.get<double>());
  return add_rule(name, fmt::format(R"({} ("." [0-9]{{1,16}})?)", integer_range_gbnf(lo, kMaxJsonInteger)));
}

}  // namespace met
