// JsonSchemaConverter: objects (properties in schema order, optional ones
// skippable, additional properties after them with keys that cannot repeat a
// declared name) and arrays (prefixItems, items, minItems/maxItems).
// Tested by tests/grammar/json_schema_test.cc.
#include <map>
#include <optional>

#include <fmt/format.h>

#include "grammar/json_primitives.h"
#include "grammar/json_schema_converter.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kKeyCharRule = "key-char";
constexpr std::string_view kKeyCharBody = R"([^"\\\x00-\x1F] | "\\" ["\\bfnrt])";

struct KeyTrie {
  bool terminal = false;
  std::map<std::string, KeyTrie> children;  // unit: one code point or a 2-char escape
};

// The units of a JSON-encoded key (no quotes), or nullopt when it holds a
// \u escape, which the key grammar never produces.
std::optional<std::vector<std::string>> key_units(const std::string& encoded) {
  std::vector<std::string> units;
  for (size_t i = 0; i < encoded.size();) {
    size_t len = 1;
    const auto c = static_cast<unsigned char>(encoded[i]);
    if (c == '\\') {
      if (i + 1 < encoded.size() && encoded[i + 1] == 'u') return std::nullopt;
      len = 2;
    } else if (c >= 0xF0) {
      len = 4;
    } else if (c >= 0xE0) {
      len = 3;
    } else if (c >= 0xC0) {
      len = 2;
    }
    units.push_back(encoded.substr(i, len));
    i += len;
  }
  return units;
}

}  // namespace

std::string JsonSchemaConverter::excluded_key_rule(const std::vector<std::string>& names, const std::string& name) {
  KeyTrie root;
  for (const std::string& n : names) {
    Result<std::string> text = json_text(Json(n));
    if (!text.ok()) continue;
    std::optional<std::vector<std::string>> units = key_units(text->substr(1, text->size() - 2));
    if (!units) continue;
    KeyTrie* node = &root;
    for (const std::string& u : *units) node = &node->children[u];
    node->terminal = true;
  }
  const std::string key_char = add_rule(std::string(kKeyCharRule), std::string(kKeyCharBody));
  const std::string rest = add_rule(name + "-key-rest", fmt::format(R"({}* "\"")", key_char));
  // Post-order: a node's rule needs its children's.
  auto rule_of = [&](auto&& self, const KeyTrie& node) -> std::string {
    std::string alts = node.terminal ? "" : R"("\"")";
    std::string raw_others = R"([^"\\\x00-\x1F)", escape_others = "\"\\\\\" [";
    bool any_escape = false;
    for (const auto& [unit, child] : node.children) {
      alts += (alts.empty() ? "" : " | ") + gbnf_literal(unit) + " " + self(self, child);
      if (unit[0] == '\\') continue;
      raw_others += gbnf_escape(decode_utf8(unit, 0).code_point, true);
    }
    for (char e : std::string_view("\"\\bfnrt")) {
      if (node.children.count(std::string("\\") + e)) continue;
      escape_others += e == '"' ? "\"" : e == '\\' ? "\\\\" : std::string(1, e);
      any_escape = true;
    }
    alts += (alts.empty() ? "" : " | ") + raw_others + "] " + rest;
    if (any_escape) alts += " | " + escape_others + "] " + rest;
    return add_rule(name + "-key", alts);
  };
  return add_rule(name + "-key", R"("\"" )" + rule_of(rule_of, root));
}

Result<std::string> JsonSchemaConverter::visit_object(const Json& s, const std::string& ptr, const std::string& name) {
  const Json props = s.contains("properties") ? s["properties"] : Json::object();
  if (!props.is_object()) return schema_error(pointer_child(ptr, "properties"), "must be an object");
  const Json required = s.contains("required") ? s["required"] : Json::array();
  if (!required.is_array()) return schema_error(pointer_child(ptr, "required"), "must be an array");
  const Json additional = s.contains("additionalProperties") ? s["additionalProperties"] : Json(!options_.strict);
  if (!additional.is_boolean() && !additional.is_object()) {
    return schema_error(pointer_child(ptr, "additionalProperties"), "must be a boolean or a schema");
  }
  std::optional<std::string> extra;
  if (!additional.is_boolean() || additional.get<bool>()) {
    MET_ASSIGN_OR_RETURN(extra, visit(additional, pointer_child(ptr, "additionalProperties"), name + "-extra"));
  }
  struct Entry {
    std::string key, rule;
    bool required;
  };
  std::vector<Entry> entries;
  std::vector<std::string> names;
  auto is_required = [&](const std::string& k) { return std::find(required.begin(), required.end(), Json(k)) != required.end(); };
  for (const auto& [key, value] : props.items()) {
    MET_ASSIGN_OR_RETURN(std::string r, visit(value, pointer_child(pointer_child(ptr, "properties"), key), name + "-" + key));
    entries.push_back({key, r, is_required(key)});
    names.push_back(key);
  }
  for (const Json& k : required) {
    if (!k.is_string()) return schema_error(pointer_child(ptr, "required"), "names must be strings");
    if (props.contains(k.get<std::string>())) continue;
    if (!extra) return schema_error(pointer_child(ptr, "required"), fmt::format("'{}' is required but not allowed", k.get<std::string>()));
    entries.push_back({k.get<std::string>(), *extra, true});
    names.push_back(k.get<std::string>());
  }
  // after[i]: the rest from entry i once something was written; first[i]: before anything.
  std::string after = "\"\"", first = "\"\"";
  if (extra) {
    const std::string kv = add_rule(name + "-extra-kv", fmt::format(R"({} ws ":" ws {} ws)", excluded_key_rule(names, name), *extra));
    after = add_rule(name + "-extra-rest", fmt::format(R"(("," ws {})*)", kv));
    first = add_rule(name + "-extra-first", fmt::format("({} {})?", kv, after));
  }
  for (size_t i = entries.size(); i-- > 0;) {
    MET_ASSIGN_OR_RETURN(std::string key_text, json_text(Json(entries[i].key)));
    const std::string kv = add_rule(name + "-kv", fmt::format(R"({} ws ":" ws {} ws)", gbnf_literal(key_text), entries[i].rule));
    std::string a = fmt::format(R"("," ws {} {})", kv, after), f = fmt::format("{} {}", kv, after);
    if (!entries[i].required) {
      a += " | " + after;
      f += " | " + first;
    }
    after = add_rule(name + "-after", a);
    first = add_rule(name + "-first", f);
  }
  return add_rule(name, fmt::format(R"("{{" ws {} "}}")", first));
}

Result<std::string> JsonSchemaConverter::visit_array(const Json& s, const std::string& ptr, const std::string& name) {
  std::vector<std::string> prefix;
  const bool tuple_items = s.contains("items") && s["items"].is_array();
  const Json prefix_schemas = s.contains("prefixItems") ? s["prefixItems"] : tuple_items ? s["items"] : Json::array();
  if (!prefix_schemas.is_array()) return schema_error(pointer_child(ptr, "prefixItems"), "must be an array");
  for (size_t i = 0; i < prefix_schemas.size(); ++i) {
    MET_ASSIGN_OR_RETURN(std::string r, visit(prefix_schemas[i], pointer_child(pointer_child(ptr, tuple_items ? "items" : "prefixItems"), std::to_string(i)), fmt::format("{}-{}", name, i)));
    prefix.push_back(r);
  }
  std::optional<std::string> item = std::string(kValueRule);
  if (s.contains("items") && !tuple_items) {
    if (s["items"].is_boolean() && !s["items"].get<bool>()) {
      item.reset();
    } else {
      MET_ASSIGN_OR_RETURN(item, visit(s["items"], pointer_child(ptr, "items"), name + "-item"));
    }
  }
  for (const char* k : {"minItems", "maxItems"}) {
    if (s.contains(k) && !(s[k].is_number_unsigned() || (s[k].is_number_integer() && s[k].get<int64_t>() >= 0))) {
      return schema_error(pointer_child(ptr, k), "must be a non-negative integer");
    }
  }
  const uint64_t min = s.value("minItems", uint64_t{0});
  std::optional<uint64_t> max;
  if (s.contains("maxItems")) max.emplace(s["maxItems"].get<uint64_t>());
  if (!item) max = std::min<uint64_t>(max.value_or(prefix.size()), prefix.size());
  if (max && *max < min) return schema_error(ptr, "maxItems < minItems (or too few items allowed): nothing matches");
  if (min > 10000 || (max && *max > 10000)) return schema_error(ptr, "item counts over 10000 are not supported");
  if (s.value("uniqueItems", false) && max.value_or(2) > 1) return schema_error(pointer_child(ptr, "uniqueItems"), "uniqueItems is not supported");
  const uint64_t k = prefix.size();
  // The items after the first k (k <= max).
  std::string body = "\"\"";
  if (item && (!max || *max > k)) {
    const uint64_t lo = min > k ? min - k : 0;
    const std::string bound = max ? fmt::format("{},{}", lo, *max - k) : fmt::format("{},", lo);
    const std::string more = fmt::format(R"(("," ws {} ws){{{}}})", *item, bound);
    if (k > 0) {
      body = more;
    } else {
      const std::string rest = max ? fmt::format("{},{}", lo > 0 ? lo - 1 : 0, *max - 1) : fmt::format("{},", lo > 0 ? lo - 1 : 0);
      body = fmt::format(R"({} ws ("," ws {} ws){{{}}})", *item, *item, rest);
      if (lo == 0) body = "(" + body + ")?";
    }
  }
  for (uint64_t i = std::min<uint64_t>(k, max.value_or(k)); i-- > 0;) {
    std::string alt = fmt::format("{}{} ws {}", i == 0 ? "" : R"("," ws )", prefix[i], body);
    if (i >= min) alt += R"( | "")";
    body = add_rule(fmt::format("{}-from-{}", name, i), alt);
  }
  return add_rule(name, fmt::format(R"("[" ws {} "]")", body));
}

}  // namespace met
