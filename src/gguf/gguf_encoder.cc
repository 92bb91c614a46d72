// GgufEncoder: GGUF value encoding for the writer.
// Invariants: see gguf_encoder.h. Threading: one owner.
// Tested by tests/gguf/gguf_writer_test.cc (round trips through the reader).
#include "gguf/gguf_encoder.h"

#include "gguf/quote_bytes.h"

namespace met::gguf_internal {

void GgufEncoder::put_string(std::string_view text) {
  put<uint64_t>(text.size());
  out_->insert(out_->end(), text.begin(), text.end());
}

void GgufEncoder::pad_to(uint64_t alignment) {
  const uint64_t remainder = out_->size() % alignment;
  if (remainder != 0) out_->resize(out_->size() + (alignment - remainder), 0);
}

Status GgufEncoder::put_value(std::string_view key, const GgufValue& value) {
  return std::visit(
      [&](const auto& v) -> Status {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          put_string(v);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          return put_array(key, v, 1);
        } else if constexpr (std::is_same_v<T, bool>) {
          put<uint8_t>(v ? 1 : 0);
        } else {
          put<T>(v);
        }
        return ok_status();
      },
      value.storage());
}

Status GgufEncoder::put_array(std::string_view key, const GgufArray& array, int depth) {
  if (depth > kGgufMaxArrayDepth) {
    return invalid_argument("gguf writer: metadata key {}: arrays nested deeper than {}",
                            quote_bytes(key), kGgufMaxArrayDepth);
  }
  if (array.items.index() != static_cast<size_t>(array.elem_type)) {
    return invalid_argument(
        "gguf writer: metadata key {}: array elem_type is {} but holds {} items", quote_bytes(key),
        gguf_type_name(array.elem_type),
        gguf_type_name(static_cast<GgufType>(array.items.index())));
  }
  put<uint32_t>(static_cast<uint32_t>(array.elem_type));
  put<uint64_t>(array.size());
  return std::visit(
      [&](const auto& items) -> Status {
        using Item = typename std::decay_t<decltype(items)>::value_type;
        if constexpr (std::is_same_v<Item, std::string>) {
          for (const std::string& item : items) put_string(item);
        } else if constexpr (std::is_same_v<Item, GgufArray>) {
          for (const GgufArray& item : items) MET_RETURN_IF_ERROR(put_array(key, item, depth + 1));
        } else if constexpr (std::is_same_v<Item, bool>) {
          for (const bool item : items) put<uint8_t>(item ? 1 : 0);
        } else {
          const size_t at = out_->size();
          out_->resize(at + items.size() * sizeof(Item));
          if (!items.empty())
            std::memcpy(out_->data() + at, items.data(), items.size() * sizeof(Item));
        }
        return ok_status();
      },
      array.items);
}

}  // namespace met::gguf_internal
