// RawGguf: appends GGUF fields byte by byte so tests can build exactly the
// file they mean, valid or hostile (absurd counts, bad types, overlaps), which
// GgufWriter refuses to produce. Test-only.
// Threading: one owner. Used by tests/gguf/gguf_file_test.cc and
// tests/gguf/gguf_corrupt_test.cc.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace met::testing {

class RawGguf {
 public:
  template <typename T>
  RawGguf& put(T value) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    return *this;
  }
  RawGguf& u8(uint8_t v) { return put(v); }
  RawGguf& u32(uint32_t v) { return put(v); }
  RawGguf& u64(uint64_t v) { return put(v); }
  RawGguf& str(std::string_view text) {
    u64(text.size());
    bytes_.insert(bytes_.end(), text.begin(), text.end());
    return *this;
  }
  // "GGUF", version, tensor count, key count.
  RawGguf& header(uint32_t version, uint64_t num_tensors, uint64_t num_keys) {
    return u32(0x46554747).u32(version).u64(num_tensors).u64(num_keys);
  }
  // A key and its value type id; the caller appends the value.
  RawGguf& key(std::string_view name, uint32_t type) { return str(name).u32(type); }
  RawGguf& tensor(std::string_view name, std::vector<uint64_t> shape, uint32_t type,
                  uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(shape.size()));
    for (uint64_t d : shape) u64(d);
    return u32(type).u64(offset);
  }
  RawGguf& pad_to(uint64_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    return *this;
  }
  RawGguf& zeros(size_t n) {
    bytes_.resize(bytes_.size() + n, 0);
    return *this;
  }

  size_t size() const { return bytes_.size(); }
  std::span<const uint8_t> span() const { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// On-disk value type ids, for readability in hand-built files.
inline constexpr uint32_t kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6,
                          kBool = 7, kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12;

}  // namespace met::testing
