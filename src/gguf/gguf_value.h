// GgufValue: one metadata value of a GGUF file (any of the 13 value types,
// arrays included, arrays of arrays too) and GgufMetadata, the ordered
// key → value table with typed accessors whose errors name the key and the
// type found. Owning values: the reader copies metadata out of the mapping, the
// writer builds them by hand. Threading: plain values.
// Tested by tests/gguf/gguf_value_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"

namespace met {

// On-disk value type ids.
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// How deeply arrays may nest: 1 is an array of scalars or strings, 2 an array
// of such arrays. The reader refuses deeper files and the writer deeper values.
inline constexpr int kGgufMaxArrayDepth = 4;

std::string_view gguf_type_name(GgufType type);
bool is_valid_gguf_type(uint32_t raw);

class GgufValue;

// An array: every element has type elem_type. Scalars and strings are stored
// in the typed vector that matches elem_type; nested arrays in `arrays`.
struct GgufArray {
  GgufType elem_type = GgufType::kUint8;
  std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
               std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
               std::vector<float>, std::vector<bool>, std::vector<std::string>,
               std::vector<GgufArray>, std::vector<uint64_t>, std::vector<int64_t>,
               std::vector<double>>
      items;

  size_t size() const;
  bool operator==(const GgufArray&) const = default;
};

class GgufValue {
 public:
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float,
                               bool, std::string, GgufArray, uint64_t, int64_t, double>;

  GgufValue() : v_(uint8_t{0}) {}
  template <typename T>
    requires std::is_constructible_v<Storage, T&&>
  GgufValue(T&& v) : v_(std::forward<T>(v)) {}  // NOLINT: implicit by design
  GgufValue(const char* s) : v_(std::string(s)) {}  // NOLINT

  // Typed array constructors for the writer.
  static GgufValue array(std::vector<std::string> items);
  static GgufValue array(std::vector<float> items);
  static GgufValue array(std::vector<int32_t> items);
  static GgufValue array(std::vector<uint32_t> items);
  static GgufValue array(std::vector<GgufArray> items);

  GgufType type() const { return static_cast<GgufType>(v_.index()); }
  const Storage& storage() const { return v_; }
  bool operator==(const GgufValue&) const = default;

  // Short human rendering for `met info`: numbers, quoted strings, and arrays
  // as "[array of 32000 string]" past a few elements.
  std::string describe() const;

 private:
  Storage v_;
};

class GgufMetadata {
 public:
  // Replaces the value of an existing key, keeping its position.
  void set(std::string key, GgufValue value);
  bool contains(std::string_view key) const;
  const GgufValue* find(std::string_view key) const;
  size_t size() const { return entries_.size(); }
  // In file (insertion) order.
  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return entries_; }

  // Each getter fails with kNotFound ("missing metadata key 'llama.block_count'")
  // or kInvalidArgument ("metadata key 'x' is string, expected an integer").
  // Integer getters accept any integer type whose value fits the result.
  Result<uint64_t> get_u64(std::string_view key) const;
  Result<uint32_t> get_u32(std::string_view key) const;
  Result<int64_t> get_i64(std::string_view key) const;
  Result<float> get_f32(std::string_view key) const;  // float32 or float64
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  Result<const GgufArray*> get_array(std::string_view key) const;
  Result<std::vector<std::string>> get_string_array(std::string_view key) const;
  Result<std::vector<float>> get_f32_array(std::string_view key) const;
  Result<std::vector<int64_t>> get_int_array(std::string_view key) const;

  // The same, but a missing key gives `fallback` (a mistyped key is still an error).
  Result<uint32_t> get_u32_or(std::string_view key, uint32_t fallback) const;
  Result<float> get_f32_or(std::string_view key, float fallback) const;
  Result<bool> get_bool_or(std::string_view key, bool fallback) const;
  Result<std::string> get_string_or(std::string_view key, std::string fallback) const;

  // `general.architecture`, and keys under it: arch_key("block_count") is
  // "<arch>.block_count".
  Result<std::string> architecture() const;
  Result<std::string> arch_key(std::string_view suffix) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> entries_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace met
