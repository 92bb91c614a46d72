// ByteCursor: a bounds-checked little-endian reader over borrowed bytes; the
// only code in the GGUF reader that touches the input.
// Invariants: offset() <= size() always; a read that does not fit returns
// nullopt (or false) and leaves the cursor where it was, so nothing ever reads
// past the end. fits(count, bytes_each) answers "could `count` items of at
// least `bytes_each` bytes still follow?" without overflowing, and is what
// callers ask before they reserve memory for a count read from the file.
// Threading: one owner. Tested through tests/gguf/gguf_corrupt_test.cc and
// tests/gguf/gguf_file_test.cc.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/status.h"

namespace met {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader copies little-endian values as they are");

class ByteCursor {
 public:
  explicit ByteCursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return bytes_.size(); }
  uint64_t remaining() const { return bytes_.size() - offset_; }

  // True if count items of at least bytes_each bytes can still follow.
  bool fits(uint64_t count, uint64_t bytes_each) const {
    return bytes_each == 0 || count <= remaining() / bytes_each;
  }

  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::optional<T> read() {
    if (remaining() < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  // Copies count values of T into out[0..count).
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  bool read_array(T* out, uint64_t count) {
    if (!fits(count, sizeof(T))) return false;
    if (count != 0) std::memcpy(out, bytes_.data() + offset_, count * sizeof(T));
    offset_ += count * sizeof(T);
    return true;
  }

  // Borrows the next num_bytes bytes as text.
  std::optional<std::string_view> read_text(uint64_t num_bytes) {
    if (remaining() < num_bytes) return std::nullopt;
    std::string_view text(reinterpret_cast<const char*>(bytes_.data()) + offset_, num_bytes);
    offset_ += num_bytes;
    return text;
  }

  // "<what> past end of file at offset <at> (file is <size> bytes)".
  Status past_end(std::string_view what, uint64_t at) const {
    return data_loss("{} past end of file at offset {} (file is {} bytes)", what, at, size());
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t offset_ = 0;
};

}  // namespace met
