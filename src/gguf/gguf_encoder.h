// GgufEncoder: appends GGUF's little-endian encoding of header fields,
// strings and metadata values to a byte vector. Internal to met_gguf (the
// writer's serializer); the exact inverse of gguf_metadata_reader.cc.
// Invariants: put_value refuses (kInvalidArgument) an array whose items do not
// match its elem_type or that nests deeper than kGgufMaxArrayDepth, so every
// value it writes reads back equal.
// Threading: one owner. Tested by tests/gguf/gguf_writer_test.cc.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_value.h"

namespace met::gguf_internal {

class GgufEncoder {
 public:
  explicit GgufEncoder(std::vector<uint8_t>* out) : out_(out) {}

  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void put(T value) {
    const size_t at = out_->size();
    out_->resize(at + sizeof(T));
    std::memcpy(out_->data() + at, &value, sizeof(T));
  }

  void put_string(std::string_view text);
  // Appends `value`'s encoding (without its type id); `key` names it in errors.
  Status put_value(std::string_view key, const GgufValue& value);
  // Appends zero bytes until the size is a multiple of alignment.
  void pad_to(uint64_t alignment);

 private:
  Status put_array(std::string_view key, const GgufArray& array, int depth);

  std::vector<uint8_t>* out_;
};

}  // namespace met::gguf_internal
