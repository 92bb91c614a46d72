// Sequence filters. Tested by tests/chat/filters_sequence_test.cc.
#include <algorithm>
#include <array>
#include <numeric>

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/jinja_tests.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/utf8.h"
#include "chat/jinja/value_format.h"
#include "chat/jinja/named_table.h"

namespace met::jinja {
namespace {

// Jinja's attribute path "a.b.0": one key per part, digits as ints.
Result<std::vector<Value>> parse_path(Runtime& rt, const Value& attribute) {
  if (attribute.is_integral()) return std::vector<Value>{attribute};
  if (!attribute.is_string()) return type_error("attribute must be a string, not {}", type_name(attribute));
  std::vector<Value> keys;
  std::string_view rest = attribute.as_string();
  while (true) {
    const size_t dot = rest.find('.');
    const std::string_view part = rest.substr(0, dot);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      keys.push_back(Value::integer(std::stoll(std::string(part.substr(0, 18)))));
    } else {
      MET_ASSIGN_OR_RETURN(Value k, rt.heap().string(part));
      keys.push_back(k);
    }
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return keys;
}

Result<Value> lookup_path(Runtime& rt, Value item, const std::vector<Value>& keys) {
  for (const Value& k : keys) {
    MET_ASSIGN_OR_RETURN(item, get_item(rt, item, k));
  }
  return item;
}

Result<Value> lowered(Runtime& rt, const Value& v, bool case_sensitive) {
  if (case_sensitive || !v.is_string()) return v;
  return rt.heap().string(to_lower(v.as_string()));
}

// The sort key of each item: its attribute path (when given), lower-cased.
Result<std::vector<Value>> sort_keys(Runtime& rt, const std::vector<Value>& items, const Value& attribute,
                                     bool case_sensitive) {
  std::vector<Value> path;
  if (!attribute.is_none() && !attribute.is_undefined()) {
    MET_ASSIGN_OR_RETURN(path, parse_path(rt, attribute));
  }
  std::vector<Value> keys;
  keys.reserve(items.size());
  for (const Value& item : items) {
    MET_ASSIGN_OR_RETURN(Value k, lookup_path(rt, item, path));
    MET_ASSIGN_OR_RETURN(k, lowered(rt, k, case_sensitive));
    keys.push_back(k);
  }
  return keys;
}

// A stable order of indexes by keys; comparison errors surface as the result.
Result<std::vector<size_t>> sorted_order(Runtime& rt, const std::vector<Value>& keys, bool reverse) {
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), size_t{0});
  Status error;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!error.ok()) return false;
    auto less = compare(rt, CompareOp::kLt, reverse ? keys[b] : keys[a], reverse ? keys[a] : keys[b]);
    if (!less.ok()) {
      error = less.status();
      return false;
    }
    return *less;
  });
  if (!error.ok()) return error;
  return order;
}

Result<Value> filter_length(Runtime&, const Value& input, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(int64_t n, length(input));
  return Value::integer(n);
}

Value empty_sequence(std::string_view what) {
  static const std::string kFirst = "No first item, sequence was empty.";
  static const std::string kLast = "No last item, sequence was empty.";
  static const std::string kAggregate = "No aggregated item, sequence was empty.";
  const std::string* msg = what == "first" ? &kFirst : what == "last" ? &kLast : &kAggregate;
  return Value::undefined(UndefinedReason::kEmpty, msg, ValueKind::kList);
}

Result<Value> filter_first(Runtime& rt, const Value& input, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  return items.empty() ? empty_sequence("first") : items.front();
}

Result<Value> filter_last(Runtime& rt, const Value& input, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  return items.empty() ? empty_sequence("last") : items.back();
}

Result<Value> filter_join(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("join", args, {"d", "attribute"}));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  std::vector<Value> path;
  if (a.has(1) && !a.get(1).is_none()) {
    MET_ASSIGN_OR_RETURN(path, parse_path(rt, a.get(1)));
  }
  std::string sep;
  MET_RETURN_IF_ERROR(append_str(a.get_or(0, rt.heap().empty_string()), sep, rt.string_room()));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    MET_ASSIGN_OR_RETURN(Value item, lookup_path(rt, items[i], path));
    MET_RETURN_IF_ERROR(append_str(item, out, rt.string_room()));
    if (out.size() > rt.string_room()) return limit_error("join needs more than {} bytes", rt.string_room());
  }
  return rt.heap().string(std::move(out));
}

Result<Value> filter_list(Runtime& rt, const Value& input, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  return rt.heap().list(std::move(items));
}

Result<Value> filter_reverse(Runtime& rt, const Value& input, const CallArgs&) {
  if (input.is_string()) {
    const std::vector<size_t> offsets = utf8_offsets(input.as_string());
    std::string out;
    for (size_t i = offsets.size() - 1; i > 0; --i) {
      out.append(input.as_string(), offsets[i - 1], offsets[i] - offsets[i - 1]);
    }
    return rt.heap().string(std::move(out));
  }
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  std::reverse(items.begin(), items.end());
  return rt.heap().list(std::move(items));
}

Result<Value> filter_sort(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a,
                       BoundArgs::bind("sort", args, {"reverse", "case_sensitive", "attribute"}));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  MET_ASSIGN_OR_RETURN(std::vector<Value> keys, sort_keys(rt, items, a.get(2), a.get_flag(1, false)));
  MET_ASSIGN_OR_RETURN(std::vector<size_t> order, sorted_order(rt, keys, a.get_flag(0, false)));
  std::vector<Value> out;
  for (size_t i : order) out.push_back(items[i]);
  return rt.heap().list(std::move(out));
}

Result<Value> filter_unique(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("unique", args, {"case_sensitive", "attribute"}));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  MET_ASSIGN_OR_RETURN(std::vector<Value> keys, sort_keys(rt, items, a.get(1), a.get_flag(0, false)));
  std::vector<Value> out;
  std::vector<Value> seen;
  for (size_t i = 0; i < items.size(); ++i) {
    bool dup = false;
    for (size_t j = 0; j < seen.size() && !dup; ++j) {
      MET_ASSIGN_OR_RETURN(dup, values_equal(rt, seen[j], keys[i]));
    }
    if (dup) continue;
    seen.push_back(keys[i]);
    out.push_back(items[i]);
  }
  return rt.heap().list(std::move(out));
}

Result<Value> filter_dictsort(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("dictsort", args, {"case_sensitive", "by", "reverse"}));
  if (!input.is_mapping_object()) return type_error("dictsort needs a mapping, not {}", type_name(input));
  MET_ASSIGN_OR_RETURN(std::string_view by, a.get_string(1, "key"));
  if (by != "key" && by != "value") return value_error("You can only sort by either 'key' or 'value'");
  std::vector<Value> pairs;
  std::vector<Value> keys;
  for (const auto& [k, v] : input.as_dict().entries) {
    MET_ASSIGN_OR_RETURN(Value pair, rt.heap().tuple({k, v}));
    pairs.push_back(pair);
    MET_ASSIGN_OR_RETURN(Value key, lowered(rt, by == "key" ? k : v, a.get_flag(0, false)));
    keys.push_back(key);
  }
  MET_ASSIGN_OR_RETURN(std::vector<size_t> order, sorted_order(rt, keys, a.get_flag(2, false)));
  std::vector<Value> out;
  for (size_t i : order) out.push_back(pairs[i]);
  return rt.heap().list(std::move(out));
}

Result<Value> filter_items(Runtime& rt, const Value& input, const CallArgs&) {
  if (input.is_undefined()) return rt.heap().list({});
  if (!input.is_mapping_object()) return type_error("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [k, v] : input.as_dict().entries) {
    MET_ASSIGN_OR_RETURN(Value pair, rt.heap().tuple({k, v}));
    pairs.push_back(pair);
  }
  return rt.heap().list(std::move(pairs));
}

Result<Value> filter_batch(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("batch", args, {"linecount", "fill_with"}));
  MET_ASSIGN_OR_RETURN(int64_t n, a.get_int(0, 0));
  if (n <= 0) return value_error("batch size must be positive");
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  std::vector<Value> batches;
  for (size_t i = 0; i < items.size(); i += static_cast<size_t>(n)) {
    const size_t end = std::min(items.size(), i + static_cast<size_t>(n));
    std::vector<Value> batch(items.begin() + static_cast<std::ptrdiff_t>(i),
                             items.begin() + static_cast<std::ptrdiff_t>(end));
    if (a.has(1) && !a.get(1).is_none()) batch.resize(static_cast<size_t>(n), a.get(1));
    MET_ASSIGN_OR_RETURN(Value b, rt.heap().list(std::move(batch)));
    batches.push_back(b);
  }
  return rt.heap().list(std::move(batches));
}

Result<Value> filter_sum(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("sum", args, {"attribute", "start"}));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  std::vector<Value> path;
  if (a.has(0) && !a.get(0).is_none()) {
    MET_ASSIGN_OR_RETURN(path, parse_path(rt, a.get(0)));
  }
  Value total = a.get_or(1, Value::integer(0));
  for (const Value& item : items) {
    MET_ASSIGN_OR_RETURN(Value v, lookup_path(rt, item, path));
    MET_ASSIGN_OR_RETURN(total, arithmetic(rt, ArithOp::kAdd, total, v));
  }
  return total;
}

template <bool kMax>
Result<Value> filter_min_max(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("min", args, {"case_sensitive", "attribute"}));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  if (items.empty()) return empty_sequence("aggregate");
  MET_ASSIGN_OR_RETURN(std::vector<Value> keys, sort_keys(rt, items, a.get(1), a.get_flag(0, false)));
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    MET_ASSIGN_OR_RETURN(bool better, compare(rt, kMax ? CompareOp::kGt : CompareOp::kLt, keys[i], keys[best]));
    if (better) best = i;
  }
  return items[best];
}

Result<Value> filter_map(Runtime& rt, const Value& input, const CallArgs& args) {
  if (!is_truthy(input)) return rt.heap().list({});  // Jinja maps nothing over a falsy value
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  std::vector<Value> out;
  if (args.positional.empty()) {
    MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("map", args, {"attribute", "default"}));
    if (!a.has(0)) return type_error("map needs a filter name or attribute=");
    MET_ASSIGN_OR_RETURN(std::vector<Value> path, parse_path(rt, a.get(0)));
    for (const Value& item : items) {
      MET_ASSIGN_OR_RETURN(Value v, lookup_path(rt, item, path));
      out.push_back(v.is_undefined() && a.has(1) ? a.get(1) : v);
    }
    return rt.heap().list(std::move(out));
  }
  if (!args.positional[0].is_string()) return type_error("map's filter name must be a string");
  FilterFn f = find_filter(args.positional[0].as_string());
  if (f == nullptr) return invalid_argument("TemplateRuntimeError: no filter named '{}'", args.positional[0].as_string());
  CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.named};
  for (const Value& item : items) {
    MET_ASSIGN_OR_RETURN(Value v, f(rt, item, rest));
    out.push_back(v);
  }
  return rt.heap().list(std::move(out));
}

// select / reject / selectattr / rejectattr.
template <bool kKeep, bool kByAttribute>
Result<Value> filter_select(Runtime& rt, const Value& input, const CallArgs& args) {
  if (!is_truthy(input)) return rt.heap().list({});  // Jinja selects nothing from a falsy value
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, input));
  size_t next = 0;
  std::vector<Value> path;
  if (kByAttribute) {
    if (args.positional.empty()) return type_error("selectattr needs an attribute name");
    MET_ASSIGN_OR_RETURN(path, parse_path(rt, args.positional[next++]));
  }
  TestFn test = nullptr;
  if (next < args.positional.size()) {
    const Value& name = args.positional[next++];
    if (!name.is_string() || (test = find_test(name.as_string())) == nullptr) {
      return invalid_argument("TemplateRuntimeError: no test named '{}'", name.is_string() ? name.as_string() : "?");
    }
  }
  CallArgs rest{{args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end()}, args.named};
  std::vector<Value> out;
  for (const Value& item : items) {
    MET_ASSIGN_OR_RETURN(Value v, lookup_path(rt, item, path));
    bool pass = is_truthy(v);
    if (test != nullptr) {
      MET_ASSIGN_OR_RETURN(pass, test(rt, v, rest));
    }
    if (pass == kKeep) out.push_back(item);
  }
  return rt.heap().list(std::move(out));
}

constexpr NamedFn<FilterFn> kSequenceFilters[] = {
    {"length", filter_length},       {"count", filter_length},
    {"first", filter_first},         {"last", filter_last},
    {"join", filter_join},           {"list", filter_list},
    {"reverse", filter_reverse},     {"sort", filter_sort},
    {"unique", filter_unique},       {"dictsort", filter_dictsort},
    {"items", filter_items},         {"batch", filter_batch},
    {"sum", filter_sum},             {"min", filter_min_max<false>},
    {"max", filter_min_max<true>},   {"map", filter_map},
    {"select", filter_select<true, false>},
    {"reject", filter_select<false, false>},
    {"selectattr", filter_select<true, true>},
    {"rejectattr", filter_select<false, true>},
};

}  // namespace

FilterFn find_sequence_filter(std::string_view name) {
  return find_named(kSequenceFilters, name);
}

}  // namespace met::jinja
