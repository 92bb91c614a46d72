// JsonSchemaConverter: allOf merging (one schema whose every constraint is
// the conjunction of the parts', or an error when met cannot express it),
// $ref resolution for merging, and the disjointness check oneOf needs (a
// value matching two branches would break oneOf's "exactly one").
// Tested by tests/grammar/json_schema_test.cc.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "grammar/json_schema_converter.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string, std::less<>> kDropped = {
    "title", "description", "examples", "default", "$schema", "$id", "$comment", "deprecated",
    "readOnly", "writeOnly", "$defs", "definitions", "contentMediaType", "contentEncoding", "$anchor"};

std::vector<std::string> type_list(const Json& t) {
  std::vector<std::string> out;
  for (const Json& x : t.is_array() ? t : Json::array({t})) {
    if (x.is_string()) out.push_back(x.get<std::string>());
  }
  return out;
}

Json intersect_types(const Json& a, const Json& b) {
  Json out = Json::array();
  const std::vector<std::string> tb = type_list(b);
  for (const std::string& x : type_list(a)) {
    for (const std::string& y : tb) {
      if (x == y || (x == "integer" && y == "number")) out.push_back(x);
      if (x == "number" && y == "integer") out.push_back(y);
    }
  }
  return out;
}

// The kinds of JSON value a schema may accept (integer counted as number).
std::set<std::string> kinds(const Json& s) {
  static const std::set<std::string> kAll = {"null", "boolean", "number", "string", "object", "array"};
  if (!s.is_object()) return kAll;
  auto kind_of = [](const Json& v) -> std::string {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "boolean";
    if (v.is_number()) return "number";
    if (v.is_string()) return "string";
    return v.is_object() ? "object" : "array";
  };
  std::set<std::string> out;
  if (s.contains("const")) return {kind_of(s["const"])};
  if (s.contains("enum") && s["enum"].is_array()) {
    for (const Json& v : s["enum"]) out.insert(kind_of(v));
    return out;
  }
  if (!s.contains("type")) return kAll;
  for (const std::string& t : type_list(s["type"])) out.insert(t == "integer" ? "number" : t);
  return out;
}

std::optional<Json> value_set(const Json& s) {
  if (!s.is_object()) return std::nullopt;
  if (s.contains("const")) return Json::array({s["const"]});
  if (s.contains("enum") && s["enum"].is_array()) return s["enum"];
  return std::nullopt;
}

bool values_disjoint(const Json& a, const Json& b) {
  const std::optional<Json> va = value_set(a), vb = value_set(b);
  if (!va || !vb) return false;
  for (const Json& x : *va) {
    if (std::find(vb->begin(), vb->end(), x) != vb->end()) return false;
  }
  return true;
}

bool requires_key(const Json& s, const std::string& key) {
  return s.contains("required") && s["required"].is_array() &&
         std::find(s["required"].begin(), s["required"].end(), Json(key)) != s["required"].end();
}

bool objects_disjoint(const Json& a, const Json& b) {
  for (int flip = 0; flip < 2; ++flip) {
    const Json& x = flip ? b : a;
    const Json& y = flip ? a : b;
    if (!x.contains("required") || !x["required"].is_array()) continue;
    for (const Json& k : x["required"]) {
      if (!k.is_string()) continue;
      const std::string key = k.get<std::string>();
      const bool y_forbids = y.contains("additionalProperties") && y["additionalProperties"] == Json(false) &&
                             !(y.contains("properties") && y["properties"].contains(key));
      if (y_forbids) return true;
      if (requires_key(y, key) && x.contains("properties") && y.contains("properties") &&
          x["properties"].contains(key) && y["properties"].contains(key) &&
          values_disjoint(x["properties"][key], y["properties"][key])) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Result<JsonSchemaConverter::Json> JsonSchemaConverter::resolve(const Json& s, const std::string& ptr) {
  Json out = s;
  for (int hops = 0; out.is_object() && out.contains("$ref"); ++hops) {
    if (hops > 32) return schema_error(ptr, "$ref chain longer than 32");
    if (!out["$ref"].is_string()) return schema_error(pointer_child(ptr, "$ref"), "must be a string");
    const std::string ref = out["$ref"].get<std::string>();
    if (ref.empty() || ref[0] != '#') return schema_error(ptr, fmt::format("external $ref '{}' is not supported", ref));
    Json target;
    try {
      target = root_.at(Json::json_pointer(ref.substr(1)));
    } catch (const nlohmann::json::exception&) {
      return schema_error(ptr, fmt::format("$ref '{}' does not resolve", ref));
    }
    out.erase("$ref");
    MET_ASSIGN_OR_RETURN(out, merge_all_of(Json::array({target, out}), ptr));
  }
  return out;
}

Result<JsonSchemaConverter::Json> JsonSchemaConverter::merge_all_of(const Json& parts, const std::string& ptr) {
  if (++depth_ > 64) return schema_error(ptr, "allOf/$ref nested deeper than 64");
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{depth_};
  Json merged = Json::object();
  std::vector<Json> closed;  // parts with additionalProperties: false
  for (const Json& raw : parts) {
    if (raw.is_boolean()) {
      if (!raw.get<bool>()) return schema_error(ptr, "allOf holds 'false': nothing matches");
      continue;
    }
    MET_ASSIGN_OR_RETURN(Json part, resolve(raw, ptr));
    if (part.contains("allOf")) {
      Json inner = part["allOf"];
      part.erase("allOf");
      inner.push_back(part);
      MET_ASSIGN_OR_RETURN(part, merge_all_of(inner, ptr));
    }
    if (part.contains("additionalProperties") && part["additionalProperties"] == Json(false)) closed.push_back(part);
    for (const auto& [key, value] : part.items()) {
      if (kDropped.count(key)) continue;
      if (!merged.contains(key)) {
        merged[key] = value;
      } else if (key == "properties") {
        for (const auto& [pk, pv] : value.items()) {
          merged[key][pk] = merged[key].contains(pk) && merged[key][pk] != pv ? Json{{"allOf", {merged[key][pk], pv}}} : pv;
        }
      } else if (key == "required") {
        for (const Json& r : value) {
          if (std::find(merged[key].begin(), merged[key].end(), r) == merged[key].end()) merged[key].push_back(r);
        }
      } else if (key == "type") {
        merged[key] = intersect_types(merged[key], value);
        if (merged[key].empty()) return schema_error(ptr, "allOf types do not intersect: nothing matches");
      } else if (key == "minLength" || key == "minItems" || key == "minimum" || key == "exclusiveMinimum") {
        merged[key] = std::max(merged[key], value);
      } else if (key == "maxLength" || key == "maxItems" || key == "maximum" || key == "exclusiveMaximum") {
        merged[key] = std::min(merged[key], value);
      } else if (key == "additionalProperties" && (value == Json(true) || merged[key] == Json(false))) {
        if (merged[key] == Json(true)) merged[key] = value;
      } else if (merged[key] != value) {
        return schema_error(pointer_child(ptr, key), fmt::format("cannot merge differing '{}' in allOf", key));
      }
    }
  }
  // A closed part forbids keys it does not declare, whatever other parts add.
  for (const Json& c : closed) {
    merged["additionalProperties"] = false;
    if (!merged.contains("properties")) continue;
    Json kept = Json::object();
    for (const auto& [pk, pv] : merged["properties"].items()) {
      if (c.contains("properties") && c["properties"].contains(pk)) kept[pk] = pv;
    }
    merged["properties"] = kept;
  }
  return merged;
}

Status JsonSchemaConverter::check_disjoint(const Json& branches, const std::string& ptr) {
  for (size_t i = 0; i < branches.size(); ++i) {
    for (size_t j = i + 1; j < branches.size(); ++j) {
      const Json& a = branches[i];
      const Json& b = branches[j];
      std::set<std::string> ka = kinds(a), kb = kinds(b), common;
      std::set_intersection(ka.begin(), ka.end(), kb.begin(), kb.end(), std::inserter(common, common.begin()));
      if (common.empty() || values_disjoint(a, b)) continue;
      if (common == std::set<std::string>{"object"} && objects_disjoint(a, b)) continue;
      return schema_error(ptr, fmt::format("oneOf branches {} and {} may both match; use anyOf", i, j));
    }
  }
  return ok_status();
}

}  // namespace met
