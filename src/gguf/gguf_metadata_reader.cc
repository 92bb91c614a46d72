// Reads GGUF metadata key/value pairs: every value type, arrays of strings and
// arrays of arrays (to kGgufMaxArrayDepth). Every length and count is checked
// against the bytes left before anything is allocated for it.
// Threading: pure over borrowed bytes. Tested by tests/gguf/gguf_file_test.cc
// and tests/gguf/gguf_corrupt_test.cc.
#include <algorithm>
#include <optional>

#include "gguf/gguf_reader.h"
#include "gguf/quote_bytes.h"

namespace met::gguf_internal {
namespace {

// Bytes the smallest element of an array of `type` takes on disk.
uint64_t min_element_bytes(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
    case GgufType::kString:
      return 8;  // the length field
    case GgufType::kArray:
      return 4 + 8;  // element type and count
  }
  return 1;
}

// Strings, bools and nested arrays are reserved up to this many items; past it
// the vector grows only as items are actually read, so memory follows the
// bytes consumed rather than a count the file merely claims.
constexpr uint64_t kMaxReservedItems = uint64_t{1} << 18;

std::string element_where(std::string_view where, std::optional<uint64_t> element) {
  if (!element) return std::string(where);
  return fmt::format("{} element {}", where, *element);
}

class MetadataReader {
 public:
  explicit MetadataReader(ByteCursor& cursor) : cursor_(cursor) {}

  // noun names the string in errors: "string", or "name" for a key.
  Result<std::string> read_string(std::string_view where, std::optional<uint64_t> element,
                                  std::string_view noun = "string") {
    const uint64_t at = cursor_.offset();
    const std::optional<uint64_t> num_bytes = cursor_.read<uint64_t>();
    if (!num_bytes) {
      return cursor_.past_end(fmt::format("{}: {} length", element_where(where, element), noun),
                              at);
    }
    const std::optional<std::string_view> text = cursor_.read_text(*num_bytes);
    if (!text) {
      return cursor_.past_end(
          fmt::format("{}: {} of {} bytes", element_where(where, element), noun, *num_bytes), at);
    }
    return std::string(*text);
  }

  // Reads a u32 value type id and checks it names a GGUF type.
  Result<GgufType> read_type(std::string_view where, std::string_view what) {
    const uint64_t at = cursor_.offset();
    const std::optional<uint32_t> raw = cursor_.read<uint32_t>();
    if (!raw) return cursor_.past_end(fmt::format("{}: {}", where, what), at);
    if (!is_valid_gguf_type(*raw)) {
      return data_loss("{}: unknown {} {} at offset {}", where, what, *raw, at);
    }
    return static_cast<GgufType>(*raw);
  }

  Result<GgufValue> read_value(GgufType type, std::string_view where) {
    switch (type) {
      case GgufType::kUint8:
        return read_scalar<uint8_t>(type, where);
      case GgufType::kInt8:
        return read_scalar<int8_t>(type, where);
      case GgufType::kUint16:
        return read_scalar<uint16_t>(type, where);
      case GgufType::kInt16:
        return read_scalar<int16_t>(type, where);
      case GgufType::kUint32:
        return read_scalar<uint32_t>(type, where);
      case GgufType::kInt32:
        return read_scalar<int32_t>(type, where);
      case GgufType::kFloat32:
        return read_scalar<float>(type, where);
      case GgufType::kUint64:
        return read_scalar<uint64_t>(type, where);
      case GgufType::kInt64:
        return read_scalar<int64_t>(type, where);
      case GgufType::kFloat64:
        return read_scalar<double>(type, where);
      case GgufType::kBool: {
        MET_ASSIGN_OR_RETURN(bool value, read_bool(where, std::nullopt));
        return GgufValue(value);
      }
      case GgufType::kString: {
        MET_ASSIGN_OR_RETURN(std::string value, read_string(where, std::nullopt));
        return GgufValue(std::move(value));
      }
      case GgufType::kArray: {
        MET_ASSIGN_OR_RETURN(GgufArray value, read_array(where, 1));
        return GgufValue(std::move(value));
      }
    }
    return data_loss("{}: unknown value type", where);
  }

 private:
  template <typename T>
  Result<GgufValue> read_scalar(GgufType type, std::string_view where) {
    const uint64_t at = cursor_.offset();
    const std::optional<T> value = cursor_.read<T>();
    if (!value)
      return cursor_.past_end(fmt::format("{}: {} value", where, gguf_type_name(type)), at);
    return GgufValue(*value);
  }

  Result<bool> read_bool(std::string_view where, std::optional<uint64_t> element) {
    const uint64_t at = cursor_.offset();
    const std::optional<uint8_t> byte = cursor_.read<uint8_t>();
    if (!byte) return cursor_.past_end(element_where(where, element) + ": bool value", at);
    if (*byte > 1) {
      return data_loss("{}: bool value {} at offset {} is neither 0 nor 1",
                       element_where(where, element), *byte, at);
    }
    return *byte == 1;
  }

  // depth: 1 for an array that is a key's value, 2 for its elements, ...
  Result<GgufArray> read_array(std::string_view where, int depth) {
    if (depth > kGgufMaxArrayDepth) {
      return data_loss("{}: arrays nested deeper than {} at offset {}", where, kGgufMaxArrayDepth,
                       cursor_.offset());
    }
    MET_ASSIGN_OR_RETURN(const GgufType elem_type, read_type(where, "array element type"));
    const uint64_t count_at = cursor_.offset();
    const std::optional<uint64_t> count = cursor_.read<uint64_t>();
    if (!count) return cursor_.past_end(fmt::format("{}: array length", where), count_at);
    if (!cursor_.fits(*count, min_element_bytes(elem_type))) {
      return cursor_.past_end(
          fmt::format("{}: array of {} {}", where, *count, gguf_type_name(elem_type)), count_at);
    }
    return read_items(elem_type, *count, where, depth);
  }

  // REQUIRES: count elements of elem_type may fit in the bytes left.
  Result<GgufArray> read_items(GgufType elem_type, uint64_t count, std::string_view where,
                               int depth) {
    switch (elem_type) {
      case GgufType::kUint8:
        return read_plain_items<uint8_t>(elem_type, count, where);
      case GgufType::kInt8:
        return read_plain_items<int8_t>(elem_type, count, where);
      case GgufType::kUint16:
        return read_plain_items<uint16_t>(elem_type, count, where);
      case GgufType::kInt16:
        return read_plain_items<int16_t>(elem_type, count, where);
      case GgufType::kUint32:
        return read_plain_items<uint32_t>(elem_type, count, where);
      case GgufType::kInt32:
        return read_plain_items<int32_t>(elem_type, count, where);
      case GgufType::kFloat32:
        return read_plain_items<float>(elem_type, count, where);
      case GgufType::kUint64:
        return read_plain_items<uint64_t>(elem_type, count, where);
      case GgufType::kInt64:
        return read_plain_items<int64_t>(elem_type, count, where);
      case GgufType::kFloat64:
        return read_plain_items<double>(elem_type, count, where);
      case GgufType::kBool:
        return read_bool_items(count, where);
      case GgufType::kString:
        return read_string_items(count, where);
      case GgufType::kArray:
        return read_array_items(count, where, depth);
    }
    return data_loss("{}: unknown array element type", where);
  }

  template <typename T>
  Result<GgufArray> read_plain_items(GgufType elem_type, uint64_t count, std::string_view where) {
    const uint64_t at = cursor_.offset();
    std::vector<T> items(count);
    if (!cursor_.read_array(items.data(), count)) {
      return cursor_.past_end(
          fmt::format("{}: array of {} {}", where, count, gguf_type_name(elem_type)), at);
    }
    return GgufArray{elem_type, std::move(items)};
  }

  Result<GgufArray> read_bool_items(uint64_t count, std::string_view where) {
    std::vector<bool> items;
    items.reserve(std::min(count, kMaxReservedItems));
    for (uint64_t i = 0; i < count; ++i) {
      MET_ASSIGN_OR_RETURN(bool item, read_bool(where, i));
      items.push_back(item);
    }
    return GgufArray{GgufType::kBool, std::move(items)};
  }

  Result<GgufArray> read_string_items(uint64_t count, std::string_view where) {
    std::vector<std::string> items;
    items.reserve(std::min(count, kMaxReservedItems));
    for (uint64_t i = 0; i < count; ++i) {
      MET_ASSIGN_OR_RETURN(std::string item, read_string(where, i));
      items.push_back(std::move(item));
    }
    return GgufArray{GgufType::kString, std::move(items)};
  }

  Result<GgufArray> read_array_items(uint64_t count, std::string_view where, int depth) {
    std::vector<GgufArray> items;
    items.reserve(std::min(count, kMaxReservedItems));
    for (uint64_t i = 0; i < count; ++i) {
      MET_ASSIGN_OR_RETURN(GgufArray item, read_array(element_where(where, i), depth + 1));
      items.push_back(std::move(item));
    }
    return GgufArray{GgufType::kArray, std::move(items)};
  }

  ByteCursor& cursor_;
};

// Position of `key` among the entries (only asked on the error path).
size_t entry_position(const GgufMetadata& metadata, std::string_view key) {
  const auto& entries = metadata.entries();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first == key) return i;
  }
  return entries.size();
}

}  // namespace

Result<ReadMetadata> read_metadata(ByteCursor& cursor, uint64_t num_keys) {
  ReadMetadata out;
  MetadataReader reader(cursor);
  for (uint64_t i = 0; i < num_keys; ++i) {
    const uint64_t key_at = cursor.offset();
    MET_ASSIGN_OR_RETURN(std::string key, reader.read_string(fmt::format("metadata key #{}", i),
                                                             std::nullopt, "name"));
    const std::string where = fmt::format("metadata key #{} {}", i, quote_bytes(key));
    if (out.metadata.contains(key)) {
      return data_loss("{} at offset {} duplicates metadata key #{}", where, key_at,
                       entry_position(out.metadata, key));
    }
    MET_ASSIGN_OR_RETURN(const GgufType type, reader.read_type(where, "value type"));
    if (key == "general.alignment") out.alignment_value_offset = cursor.offset();
    MET_ASSIGN_OR_RETURN(GgufValue value, reader.read_value(type, where));
    out.metadata.set(std::move(key), std::move(value));
  }
  return out;
}

}  // namespace met::gguf_internal
