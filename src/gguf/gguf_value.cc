// GgufValue and GgufArray: type names, typed array constructors, describe().
// Invariants: a GgufValue's variant index is its GgufType id; a GgufArray's
// items index is its elem_type id when built here or by the reader.
// Threading: plain values. Tested by tests/gguf/gguf_value_test.cc.
#include "gguf/gguf_value.h"

#include <fmt/format.h>

#include "gguf/quote_bytes.h"

namespace met {
namespace {

// Arrays longer than this are summarized as "[array of N type]".
constexpr size_t kMaxDescribedElements = 4;
// Strings are cut after this many bytes in describe().
constexpr size_t kMaxDescribedStringBytes = 80;

std::string describe_array(const GgufArray& array);

template <typename T>
std::string describe_item(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return quote_bytes(value, kMaxDescribedStringBytes, '"');
  } else if constexpr (std::is_same_v<T, GgufArray>) {
    return describe_array(value);
  } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
    return fmt::format("{}", static_cast<int>(value));
  } else {
    return fmt::format("{}", value);
  }
}

std::string describe_array(const GgufArray& array) {
  const size_t num_items = array.size();
  if (num_items > kMaxDescribedElements) {
    return fmt::format("[array of {} {}]", num_items, gguf_type_name(array.elem_type));
  }
  return std::visit(
      [](const auto& items) {
        std::string out = "[";
        for (size_t i = 0; i < items.size(); ++i) {
          if (i != 0) out += ", ";
          using Item = typename std::decay_t<decltype(items)>::value_type;
          out += describe_item<Item>(items[i]);
        }
        return out + "]";
      },
      array.items);
}

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
      return "uint8";
    case GgufType::kInt8:
      return "int8";
    case GgufType::kUint16:
      return "uint16";
    case GgufType::kInt16:
      return "int16";
    case GgufType::kUint32:
      return "uint32";
    case GgufType::kInt32:
      return "int32";
    case GgufType::kFloat32:
      return "float32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kUint64:
      return "uint64";
    case GgufType::kInt64:
      return "int64";
    case GgufType::kFloat64:
      return "float64";
  }
  return "unknown";
}

bool is_valid_gguf_type(uint32_t raw) { return raw <= static_cast<uint32_t>(GgufType::kFloat64); }

size_t GgufArray::size() const {
  return std::visit([](const auto& v) { return v.size(); }, items);
}

GgufValue GgufValue::array(std::vector<std::string> items) {
  return GgufValue(GgufArray{GgufType::kString, std::move(items)});
}
GgufValue GgufValue::array(std::vector<float> items) {
  return GgufValue(GgufArray{GgufType::kFloat32, std::move(items)});
}
GgufValue GgufValue::array(std::vector<int32_t> items) {
  return GgufValue(GgufArray{GgufType::kInt32, std::move(items)});
}
GgufValue GgufValue::array(std::vector<uint32_t> items) {
  return GgufValue(GgufArray{GgufType::kUint32, std::move(items)});
}
GgufValue GgufValue::array(std::vector<GgufArray> items) {
  return GgufValue(GgufArray{GgufType::kArray, std::move(items)});
}

std::string GgufValue::describe() const {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, GgufArray>) {
          return describe_array(value);
        } else {
          return describe_item(value);
        }
      },
      v_);
}

}  // namespace met
