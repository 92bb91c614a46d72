// KV event batches as msgpack, with the few msgpack forms they need
// (https://github.com/msgpack/msgpack/blob/master/spec.md). Tested by
// tests/engine/kv_event_codec_test.cc.
#include "engine/kv_event_codec.h"

#include <bit>
#include <cstdint>
#include <optional>
#include <variant>

#include "core/check.h"

namespace met {
namespace {

class MsgpackWriter {
 public:
  explicit MsgpackWriter(std::string& out) : out_(out) {}

  void nil() { byte(0xc0); }
  void array_header(size_t n) {
    if (n < 16) {
      byte(static_cast<uint8_t>(0x90 | n));
    } else if (n <= 0xffff) {
      byte(0xdc);
      be(static_cast<uint16_t>(n));
    } else {
      MET_CHECK(n <= 0xffffffffu, "msgpack array of {} entries", n);
      byte(0xdd);
      be(static_cast<uint32_t>(n));
    }
  }
  void uint(uint64_t v) {
    if (v < 0x80) {
      byte(static_cast<uint8_t>(v));
    } else if (v <= 0xff) {
      byte(0xcc);
      byte(static_cast<uint8_t>(v));
    } else if (v <= 0xffff) {
      byte(0xcd);
      be(static_cast<uint16_t>(v));
    } else if (v <= 0xffffffffu) {
      byte(0xce);
      be(static_cast<uint32_t>(v));
    } else {
      byte(0xcf);
      be(v);
    }
  }
  void sint(int64_t v) {
    if (v >= 0) {
      uint(static_cast<uint64_t>(v));
    } else if (v >= -32) {
      byte(static_cast<uint8_t>(static_cast<int8_t>(v)));  // negative fixint
    } else if (v >= INT8_MIN) {
      byte(0xd0);
      byte(static_cast<uint8_t>(static_cast<int8_t>(v)));
    } else if (v >= INT16_MIN) {
      byte(0xd1);
      be(static_cast<uint16_t>(static_cast<int16_t>(v)));
    } else if (v >= INT32_MIN) {
      byte(0xd2);
      be(static_cast<uint32_t>(static_cast<int32_t>(v)));
    } else {
      byte(0xd3);
      be(static_cast<uint64_t>(v));
    }
  }
  void float64(double v) {
    byte(0xcb);
    be(std::bit_cast<uint64_t>(v));
  }
  void str(std::string_view s) {
    if (s.size() < 32) {
      byte(static_cast<uint8_t>(0xa0 | s.size()));
    } else if (s.size() <= 0xff) {
      byte(0xd9);
      byte(static_cast<uint8_t>(s.size()));
    } else {
      MET_CHECK(s.size() <= 0xffff, "msgpack string of {} bytes", s.size());
      byte(0xda);
      be(static_cast<uint16_t>(s.size()));
    }
    out_.append(s);
  }
  void optional_uint(const std::optional<uint64_t>& v) {
    if (v) {
      uint(*v);
    } else {
      nil();
    }
  }
  void optional_str(std::string_view s) {
    if (s.empty()) {
      nil();
    } else {
      str(s);
    }
  }

 private:
  void byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  template <class U>
  void be(U v) {
    for (int shift = 8 * (static_cast<int>(sizeof(U)) - 1); shift >= 0; shift -= 8) {
      byte(static_cast<uint8_t>(v >> shift));
    }
  }

  std::string& out_;
};

void encode_event(const KvEvent& event, std::string_view medium, MsgpackWriter& w) {
  struct Visitor {
    std::string_view medium;
    MsgpackWriter& w;
    void operator()(const KvBlockStored& e) const {
      w.array_header(7);
      w.str("BlockStored");
      w.array_header(1);
      w.uint(e.block_hash);
      w.optional_uint(e.parent_hash);
      w.array_header(e.token_ids.size());
      for (const TokenId t : e.token_ids) w.sint(t);
      w.uint(static_cast<uint64_t>(kKvBlockTokens));
      w.optional_uint(e.lora_id);
      w.optional_str(medium);
    }
    void operator()(const KvBlockRemoved& e) const {
      w.array_header(3);
      w.str("BlockRemoved");
      w.array_header(1);
      w.uint(e.block_hash);
      w.optional_str(medium);
    }
    void operator()(const KvAllBlocksCleared&) const {
      w.array_header(1);
      w.str("AllBlocksCleared");
    }
  };
  std::visit(Visitor{medium, w}, event);
}

}  // namespace

void encode_kv_event_batch(const KvEventBatch& batch, std::string_view medium, std::string& out) {
  MsgpackWriter w(out);
  w.array_header(2);
  w.float64(batch.ts);
  w.array_header(batch.events.size());
  for (const KvEvent& e : batch.events) encode_event(e, medium, w);
}

}  // namespace met
