// SpillIo: the port through which the scheduler saves, reads back and removes
// the spill image of a swapped-out sequence's KV blocks (DESIGN.md, "The
// scheduler's ports"). SpillStore (kv/spill_store.h) writes images to files;
// tests wrap a SpillIo to inject faults, as LevelDB's Env is wrapped.
// Invariants: open() returns only an image whose shape equals the one asked
// for and whose bytes are the ones saved; anything else is an error.
// Threading: an implementation says; the scheduler calls it from the engine
// thread. Tested through tests/kv/spill_store_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met {

// The layout of the KV cache's blocks, which a spill image must match to be
// read back into the same cache.
struct KvShape {
  GgmlType dtype = GgmlType::kF16;
  int32_t num_layers = 0, num_kv_heads = 0, head_dim = 0;
  int64_t block_bytes = 0;  // one block, all layers, K and V
  int64_t state_bytes = 0;  // a recurrent model's state slot (0: none)
  friend bool operator==(const KvShape&, const KvShape&) = default;
};

struct SpillImage {
  KvShape shape;
  int32_t num_blocks = 0;
  // num_blocks * shape.block_bytes, block after block, then the sequence's
  // recurrent state (shape.state_bytes).
  std::vector<uint8_t> bytes;
};

class SpillIo {
 public:
  virtual ~SpillIo() = default;
  // Stores `image` under `id`, replacing any image saved under it before.
  virtual Status save(SpillId id, const SpillImage& image) = 0;
  // Reads the image back into `out` (its buffer is reused); an image whose
  // checksum, magic, version or shape does not match `expected` is an error
  // naming the file and what is wrong.
  virtual Status open(SpillId id, const KvShape& expected, SpillImage& out) = 0;
  // Deletes the image; a missing one is an error naming it.
  virtual Status remove(SpillId id) = 0;
};

}  // namespace met
