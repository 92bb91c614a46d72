// MsgpackValue and read_msgpack: a small msgpack decoder (the forms KV event
// batches use: nil, booleans, integers, float64, strings, arrays), so the KV
// event tests check what a msgspec client would decode, independently of
// the encoder in src/engine/kv_event_codec.cc.
// Threading: pure functions. Never linked into apps/.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace met::testing {

struct MsgpackValue {
  enum class Kind { kNil, kBool, kInt, kFloat, kStr, kArray };
  Kind kind = Kind::kNil;
  bool negative = false;  // kInt: value is -(2^64 - magnitude) as int64
  uint64_t magnitude = 0;  // kInt: the bits as read (uint64 for positive forms)
  bool boolean = false;
  double number = 0;
  std::string str;
  std::vector<MsgpackValue> array;

  bool is_nil() const { return kind == Kind::kNil; }
  // A non-negative integer's value.
  uint64_t u64() const { return magnitude; }
  int64_t i64() const { return static_cast<int64_t>(magnitude); }
};

namespace msgpack_detail {

inline bool read_be(std::string_view& in, size_t n, uint64_t& out) {
  if (in.size() < n) return false;
  out = 0;
  for (size_t i = 0; i < n; ++i) out = (out << 8) | static_cast<uint8_t>(in[i]);
  in.remove_prefix(n);
  return true;
}

inline uint64_t sign_extend(uint64_t v, size_t bytes) {
  const int shift = 64 - 8 * static_cast<int>(bytes);
  return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
}

inline bool read_value(std::string_view& in, MsgpackValue& v, int depth);

inline bool read_array(std::string_view& in, uint64_t n, MsgpackValue& v, int depth) {
  v.kind = MsgpackValue::Kind::kArray;
  for (uint64_t i = 0; i < n; ++i) {
    v.array.emplace_back();
    if (!read_value(in, v.array.back(), depth + 1)) return false;
  }
  return true;
}

inline bool read_str(std::string_view& in, uint64_t n, MsgpackValue& v) {
  if (in.size() < n) return false;
  v.kind = MsgpackValue::Kind::kStr;
  v.str.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

inline bool read_value(std::string_view& in, MsgpackValue& v, int depth) {
  if (in.empty() || depth > 32) return false;
  const auto tag = static_cast<uint8_t>(in[0]);
  in.remove_prefix(1);
  uint64_t n = 0;
  if (tag < 0x80) {
    v.kind = MsgpackValue::Kind::kInt;
    v.magnitude = tag;
    return true;
  }
  if (tag >= 0xe0) {
    v.kind = MsgpackValue::Kind::kInt;
    v.negative = true;
    v.magnitude = sign_extend(tag, 1);
    return true;
  }
  if ((tag & 0xf0) == 0x90) return read_array(in, tag & 0x0f, v, depth);
  if ((tag & 0xe0) == 0xa0) return read_str(in, tag & 0x1f, v);
  switch (tag) {
    case 0xc0: v.kind = MsgpackValue::Kind::kNil; return true;
    case 0xc2: case 0xc3: v.kind = MsgpackValue::Kind::kBool; v.boolean = tag == 0xc3; return true;
    case 0xcb:
      if (!read_be(in, 8, n)) return false;
      v.kind = MsgpackValue::Kind::kFloat;
      v.number = std::bit_cast<double>(n);
      return true;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
      v.kind = MsgpackValue::Kind::kInt;
      return read_be(in, size_t{1} << (tag - 0xcc), v.magnitude);
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
      const size_t bytes = size_t{1} << (tag - 0xd0);
      if (!read_be(in, bytes, n)) return false;
      v.kind = MsgpackValue::Kind::kInt;
      v.magnitude = sign_extend(n, bytes);
      v.negative = static_cast<int64_t>(v.magnitude) < 0;
      return true;
    }
    case 0xd9: case 0xda: return read_be(in, tag == 0xd9 ? 1 : 2, n) && read_str(in, n, v);
    case 0xdc: case 0xdd: return read_be(in, tag == 0xdc ? 2 : 4, n) && read_array(in, n, v, depth);
    default: return false;  // maps, binaries, extensions: not in KV events
  }
}

}  // namespace msgpack_detail

// The one value `bytes` holds, or nullopt if it is not exactly one value of
// the forms above.
inline std::optional<MsgpackValue> read_msgpack(std::string_view bytes) {
  MsgpackValue v;
  if (!msgpack_detail::read_value(bytes, v, 0) || !bytes.empty()) return std::nullopt;
  return v;
}

}  // namespace met::testing
