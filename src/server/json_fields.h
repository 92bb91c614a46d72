// Reading one field of a JSON request object with its type and range checked:
// the shared vocabulary of the request parsers (openai_request.cc,
// sampling_fields.cc). A field that is absent or null is left untouched; a
// wrong type or an out-of-range value is a 400 that names the field.
// Threading: pure functions. Tested through tests/server/openai_request_test.cc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"

namespace met::json_fields {

using Json = nlohmann::ordered_json;
using MaybeError = std::optional<ApiError>;

#define MET_API_RETURN_IF_ERROR(expr)                             \
  do {                                                            \
    if (::met::json_fields::MaybeError met_e_ = (expr)) return *met_e_; \
  } while (0)

// The field's value, or nullptr when it is absent or null.
const Json* field(const Json& obj, const char* name);
ApiError wrong_type(const char* name, const char* expected, const Json& got);

MaybeError read_bool(const Json& obj, const char* name, bool& out);
MaybeError read_string(const Json& obj, const char* name, std::string& out);
// An integer in [lo, hi].
MaybeError read_int(const Json& obj, const char* name, int64_t lo, int64_t hi, std::optional<int64_t>& out);
// A number in [lo, hi] (or (lo, hi] when lo_open).
MaybeError read_number(const Json& obj, const char* name, double lo, double hi, bool lo_open,
                       std::optional<double>& out);
// An array of integers in [lo, hi], at most `max_size` of them.
MaybeError read_int_array(const Json& obj, const char* name, int64_t lo, int64_t hi, size_t max_size,
                          std::optional<std::vector<int64_t>>& out);
// An array of strings, at most `max_size` of them.
MaybeError read_string_array(const Json& obj, const char* name, size_t max_size, std::vector<std::string>& out);

}  // namespace met::json_fields
