// GgufMetadata: the ordered key table and its typed getters.
// Invariants: index_ maps every key in entries_ to its position and nothing
// else; keys are unique. Getter errors name the key, the type found and the
// type expected. Threading: plain value. Tested by tests/gguf/gguf_value_test.cc.
#include <fmt/format.h>

#include <limits>
#include <optional>

#include "gguf/gguf_value.h"

namespace met {
namespace {

// "uint32", or "array of string" for an array.
std::string type_description(const GgufValue& value) {
  if (const auto* array = std::get_if<GgufArray>(&value.storage())) {
    return fmt::format("array of {}", gguf_type_name(array->elem_type));
  }
  return std::string(gguf_type_name(value.type()));
}

Status wrong_type(std::string_view key, const GgufValue& value, std::string_view expected) {
  return invalid_argument("metadata key '{}' is {}, expected {}", key, type_description(value),
                          expected);
}

// An integer of either signedness, widened without loss.
struct WideInteger {
  bool is_negative = false;
  uint64_t magnitude = 0;  // |value|
};

template <typename T>
std::optional<WideInteger> widen(const T& value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if constexpr (std::is_signed_v<T>) {
      if (value < 0) return WideInteger{true, uint64_t{0} - static_cast<uint64_t>(value)};
    }
    return WideInteger{false, static_cast<uint64_t>(value)};
  } else {
    return std::nullopt;
  }
}

std::optional<WideInteger> as_integer(const GgufValue& value) {
  return std::visit([](const auto& v) { return widen(v); }, value.storage());
}

std::string integer_text(WideInteger integer) {
  return fmt::format("{}{}", integer.is_negative ? "-" : "", integer.magnitude);
}

// The integer as T, or an error naming the key when it does not fit.
template <typename T>
Result<T> narrow(std::string_view key, WideInteger integer, std::string_view type_name) {
  const uint64_t max_magnitude = static_cast<uint64_t>(std::numeric_limits<T>::max());
  if (integer.is_negative) {
    const uint64_t min_magnitude = std::is_signed_v<T> ? max_magnitude + 1 : 0;  // |min| of T
    if (integer.magnitude > min_magnitude) {
      return invalid_argument("metadata key '{}' = {} does not fit {}", key, integer_text(integer),
                              type_name);
    }
    return static_cast<T>(uint64_t{0} - integer.magnitude);
  }
  if (integer.magnitude > max_magnitude) {
    return invalid_argument("metadata key '{}' = {} does not fit {}", key, integer_text(integer),
                            type_name);
  }
  return static_cast<T>(integer.magnitude);
}

template <typename T>
Result<T> get_integer(const GgufMetadata& metadata, std::string_view key,
                      std::string_view type_name) {
  const GgufValue* value = metadata.find(key);
  if (value == nullptr) return not_found("missing metadata key '{}'", key);
  const std::optional<WideInteger> integer = as_integer(*value);
  if (!integer) return wrong_type(key, *value, "an integer");
  return narrow<T>(key, *integer, type_name);
}

Result<const GgufArray*> find_array(const GgufMetadata& metadata, std::string_view key,
                                    std::string_view expected) {
  const GgufValue* value = metadata.find(key);
  if (value == nullptr) return not_found("missing metadata key '{}'", key);
  const auto* array = std::get_if<GgufArray>(&value->storage());
  if (array == nullptr) return wrong_type(key, *value, expected);
  return array;
}

}  // namespace

void GgufMetadata::set(std::string key, GgufValue value) {
  if (auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

bool GgufMetadata::contains(std::string_view key) const { return index_.find(key) != index_.end(); }

const GgufValue* GgufMetadata::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

Result<uint64_t> GgufMetadata::get_u64(std::string_view key) const {
  return get_integer<uint64_t>(*this, key, "uint64");
}
Result<uint32_t> GgufMetadata::get_u32(std::string_view key) const {
  return get_integer<uint32_t>(*this, key, "uint32");
}
Result<int64_t> GgufMetadata::get_i64(std::string_view key) const {
  return get_integer<int64_t>(*this, key, "int64");
}

Result<float> GgufMetadata::get_f32(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return not_found("missing metadata key '{}'", key);
  if (const auto* f = std::get_if<float>(&value->storage())) return *f;
  if (const auto* d = std::get_if<double>(&value->storage())) return static_cast<float>(*d);
  return wrong_type(key, *value, "float32");
}

Result<bool> GgufMetadata::get_bool(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return not_found("missing metadata key '{}'", key);
  if (const auto* b = std::get_if<bool>(&value->storage())) return *b;
  return wrong_type(key, *value, "bool");
}

Result<std::string> GgufMetadata::get_string(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return not_found("missing metadata key '{}'", key);
  if (const auto* s = std::get_if<std::string>(&value->storage())) return *s;
  return wrong_type(key, *value, "string");
}

Result<const GgufArray*> GgufMetadata::get_array(std::string_view key) const {
  return find_array(*this, key, "an array");
}

Result<std::vector<std::string>> GgufMetadata::get_string_array(std::string_view key) const {
  MET_ASSIGN_OR_RETURN(const GgufArray* array, find_array(*this, key, "array of string"));
  if (const auto* items = std::get_if<std::vector<std::string>>(&array->items)) return *items;
  return invalid_argument("metadata key '{}' is array of {}, expected array of string", key,
                          gguf_type_name(array->elem_type));
}

Result<std::vector<float>> GgufMetadata::get_f32_array(std::string_view key) const {
  MET_ASSIGN_OR_RETURN(const GgufArray* array, find_array(*this, key, "array of float32"));
  if (const auto* items = std::get_if<std::vector<float>>(&array->items)) return *items;
  if (const auto* items = std::get_if<std::vector<double>>(&array->items)) {
    return std::vector<float>(items->begin(), items->end());
  }
  return invalid_argument("metadata key '{}' is array of {}, expected array of float32", key,
                          gguf_type_name(array->elem_type));
}

Result<std::vector<int64_t>> GgufMetadata::get_int_array(std::string_view key) const {
  MET_ASSIGN_OR_RETURN(const GgufArray* array, find_array(*this, key, "array of integers"));
  std::vector<int64_t> out;
  Status status = std::visit(
      [&](const auto& items) -> Status {
        using Item = typename std::decay_t<decltype(items)>::value_type;
        if constexpr (std::is_integral_v<Item> && !std::is_same_v<Item, bool>) {
          out.reserve(items.size());
          for (size_t i = 0; i < items.size(); ++i) {
            if constexpr (std::is_same_v<Item, uint64_t>) {
              if (items[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                return invalid_argument("metadata key '{}' element {} = {} does not fit int64", key,
                                        i, items[i]);
              }
            }
            out.push_back(static_cast<int64_t>(items[i]));
          }
          return ok_status();
        } else {
          return invalid_argument("metadata key '{}' is array of {}, expected array of integers",
                                  key, gguf_type_name(array->elem_type));
        }
      },
      array->items);
  MET_RETURN_IF_ERROR(status);
  return out;
}

Result<uint32_t> GgufMetadata::get_u32_or(std::string_view key, uint32_t fallback) const {
  if (!contains(key)) return fallback;
  return get_u32(key);
}
Result<float> GgufMetadata::get_f32_or(std::string_view key, float fallback) const {
  if (!contains(key)) return fallback;
  return get_f32(key);
}
Result<bool> GgufMetadata::get_bool_or(std::string_view key, bool fallback) const {
  if (!contains(key)) return fallback;
  return get_bool(key);
}
Result<std::string> GgufMetadata::get_string_or(std::string_view key, std::string fallback) const {
  if (!contains(key)) return fallback;
  return get_string(key);
}

Result<std::string> GgufMetadata::architecture() const {
  return get_string("general.architecture");
}

Result<std::string> GgufMetadata::arch_key(std::string_view suffix) const {
  MET_ASSIGN_OR_RETURN(std::string arch, architecture());
  return fmt::format("{}.{}", arch, suffix);
}

}  // namespace met
