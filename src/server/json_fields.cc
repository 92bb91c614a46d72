// JSON field readers. Tested through tests/server/openai_request_test.cc.
#include "server/json_fields.h"

#include <fmt/format.h>

namespace met::json_fields {

const Json* field(const Json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

ApiError wrong_type(const char* name, const char* expected, const Json& got) {
  return invalid_request(name, fmt::format("'{}' must be {}, got {}", name, expected, got.type_name()));
}

MaybeError read_bool(const Json& obj, const char* name, bool& out) {
  const Json* v = field(obj, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) return wrong_type(name, "a boolean", *v);
  out = v->get<bool>();
  return std::nullopt;
}

MaybeError read_string(const Json& obj, const char* name, std::string& out) {
  const Json* v = field(obj, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) return wrong_type(name, "a string", *v);
  out = v->get<std::string>();
  return std::nullopt;
}

namespace {

// `v` as an integer in [lo, hi], or the error naming `name`.
MaybeError int_in_range(const Json& v, const char* name, int64_t lo, int64_t hi, int64_t& out) {
  if (!v.is_number_integer()) return wrong_type(name, "an integer", v);
  const bool too_big = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi);
  const int64_t x = too_big ? hi : v.get<int64_t>();
  if (too_big || x < lo || x > hi) {
    return invalid_request(name, fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, v.dump()));
  }
  out = x;
  return std::nullopt;
}

MaybeError check_array(const Json& v, const char* name, const char* what, size_t max_size) {
  if (!v.is_array()) return wrong_type(name, what, v);
  if (v.size() > max_size) {
    return invalid_request(name, fmt::format("'{}' holds {} elements; at most {}", name, v.size(), max_size));
  }
  return std::nullopt;
}

}  // namespace

MaybeError read_int(const Json& obj, const char* name, int64_t lo, int64_t hi, std::optional<int64_t>& out) {
  const Json* v = field(obj, name);
  if (v == nullptr) return std::nullopt;
  int64_t x = 0;
  MET_API_RETURN_IF_ERROR(int_in_range(*v, name, lo, hi, x));
  out = x;
  return std::nullopt;
}

MaybeError read_number(const Json& obj, const char* name, double lo, double hi, bool lo_open,
                       std::optional<double>& out) {
  const Json* v = field(obj, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) return wrong_type(name, "a number", *v);
  const double x = v->get<double>();
  const bool below = lo_open ? !(x > lo) : !(x >= lo);
  if (below || !(x <= hi)) {
    return invalid_request(
        name, fmt::format("'{}' must be in {}{}, {}], got {}", name, lo_open ? "(" : "[", lo, hi, v->dump()));
  }
  out = x;
  return std::nullopt;
}

MaybeError read_int_array(const Json& obj, const char* name, int64_t lo, int64_t hi, size_t max_size,
                          std::optional<std::vector<int64_t>>& out) {
  const Json* v = field(obj, name);
  if (v == nullptr) return std::nullopt;
  MET_API_RETURN_IF_ERROR(check_array(*v, name, "an array of integers", max_size));
  std::vector<int64_t> values;
  for (const Json& e : *v) {
    int64_t x = 0;
    MET_API_RETURN_IF_ERROR(int_in_range(e, name, lo, hi, x));
    values.push_back(x);
  }
  out = std::move(values);
  return std::nullopt;
}

MaybeError read_string_array(const Json& obj, const char* name, size_t max_size, std::vector<std::string>& out) {
  const Json* v = field(obj, name);
  if (v == nullptr) return std::nullopt;
  MET_API_RETURN_IF_ERROR(check_array(*v, name, "an array of strings", max_size));
  for (const Json& e : *v) {
    if (!e.is_string()) return wrong_type(name, "an array of strings", e);
    out.push_back(e.get<std::string>());
  }
  return std::nullopt;
}

}  // namespace met::json_fields
