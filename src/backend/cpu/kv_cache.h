// KvCache: the CPU backend's paged KV pool, one allocation sized at start-up
// for `num_blocks` blocks of kBlockTokens (block_tokens.h) token slots each.
// Layout, head-major: a piece is one kv head's kBlockTokens rows of one
// layer's K (or V) in one block, and the pieces of consecutive blocks of the
// same layer, K|V and head are consecutive in memory:
//   [layer][K|V][kv_head][block][slot 0..15][head_dim elements of `dtype`]
// A sequence's blocks are mostly handed out in order (BlockPool), so decode
// attention, which reads a kv head's rows block after block, reads long
// runs the hardware prefetchers follow. Block-major ([block][layer]...),
// the runs were 2 KiB pieces ~1 MiB apart: batch 16 of the medium llama
// (Q8_0) at 3,968 positions decoded 84-89 tok/s block-major, 132-138
// head-major (met bench, F16 KV, the builds alternated; bench/peer/
// README.md). A block's spill image stays block-major (read_block,
// write_block gather and scatter its pieces):
//   [layer][K|V][kv_head][slot 0..15][row]
// A head's row of head_dim elements is stored as `dtype` (F16 by default,
// BF16, F32, or Q8_0 blocks of 32 when head_dim is a multiple of 32), except
// F16 and Q8_0 keys: a head's 16 slots of keys take the same bytes with the
// tokens in lanes (f16_keys.h, q8_keys.h), so the scores pass reads one dim
// (F16) or 4 dims (Q8_0) of 16 tokens at a time and needs no transpose; and
// Q8_0 values, token pairs in lanes (q8_values.h), so the values pass adds
// two tokens to 16 dims with one integer multiply-add. A
// block's image is padded to 64 bytes; the pool, num_blocks images' bytes
// (the pieces need no more), is mmap'ed (2 MiB aligned and advised for huge
// pages when large) and starts zeroed.
// Models whose layers differ in head size or KV heads (gemma4) get rows of
// the widest layer (head_dim, num_kv_heads): the forward pass zero-pads a
// narrower layer's heads and repeats its KV heads to fill them
// (forward_pass.h), so the attention kernels keep one shape per cache and a
// spill image one block size; the cost is the padding's memory on the
// narrower layers.
// Invariants: the layout is validated once by create(); block ids passed in
// are below num_blocks (MET_CHECK); store() converts with the selected
// tensor row kernel, so the bytes match quantize_row() exactly.
// Threading: store() writes only the slot it names, so threads may store
// distinct positions at once; readers (attention) must not overlap writers of
// the same slot. read_block, write_block only while no step is in flight.
// Tested by tests/backend/kv_cache_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/huge_page_memory.h"
#include "backend/step_plan.h"
#include "core/ids.h"
#include "core/status.h"
#include "gguf/ggml_type.h"
#include "tensor/reference/reference_kernels.h"

namespace met::cpu {

struct KvLayout {
  GgmlType dtype = GgmlType::kF16;  // F16, BF16, F32 or Q8_0
  int32_t num_layers = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;  // a multiple of 8 (of 32 for Q8_0), at most kMaxKvHeadDim
  int32_t num_blocks = 0;
};

inline constexpr int32_t kMaxKvHeadDim = 1024;
inline constexpr int32_t kMaxKvLayers = 1024;
inline constexpr int32_t kMaxKvHeads = 1024;
inline constexpr int64_t kMaxKvCacheBytes = int64_t{1} << 40;  // 1 TiB: past it is a typo
inline constexpr int64_t kKvBlockAlign = 64;

// Checks everything but num_blocks; the message names the field and value.
Status validate_kv_shape(const KvLayout& layout);
// Bytes of one block (all layers, K and V, padded to kKvBlockAlign).
Result<int64_t> kv_block_bytes(const KvLayout& layout);
// Bytes of the whole pool: num_blocks * kv_block_bytes (overflow-checked,
// at most kMaxKvCacheBytes).
Result<int64_t> kv_cache_bytes(const KvLayout& layout);
// How many blocks fit in `budget_bytes` (`--kv-mem`); ignores
// layout.num_blocks. kOutOfRange when not even one block fits.
Result<int32_t> kv_blocks_for_budget(const KvLayout& layout, int64_t budget_bytes);
// Bytes one token takes across all layers, K and V (unpadded).
Result<int64_t> kv_bytes_per_token(const KvLayout& layout);

class KvCache {
 public:
  // Validates the layout, refuses a pool past kMaxKvCacheBytes or the
  // machine's physical memory, then maps it.
  static Result<KvCache> create(const KvLayout& layout);

  KvCache(KvCache&&) noexcept = default;
  KvCache& operator=(KvCache&&) noexcept = default;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;
  ~KvCache() = default;

  const KvLayout& layout() const { return layout_; }
  // Bytes of one block's spill image (all layers, K and V, padded).
  int64_t block_bytes() const { return block_bytes_; }
  int64_t total_bytes() const { return block_bytes_ * layout_.num_blocks; }
  // Bytes of one head's row (one slot) in the pool's dtype.
  int64_t row_bytes() const { return row_bytes_; }

  // One block as a spill image, block_bytes() bytes: every head's K and V as
  // rows, in the image layout at the top of this file (keys and values
  // in lanes back in rows), the bytes the CUDA backend's cache holds
  // (cuda/forward_ops.h), so images move between devices. write_block takes
  // one back.
  void read_block(BlockId id, std::span<uint8_t> image) const;
  void write_block(BlockId id, std::span<const uint8_t> image);

  // Where kernels read: slot s of kv head h of `layer` in block b is at
  //   data() + b * block_stride() + k_offset(layer, h) + s * row_bytes()
  // (v_offset for V); F16 and Q8_0 keys, Q8_0 values: the head's 16 slots
  // at k_offset (f16_keys.h, q8_keys.h) or v_offset (q8_values.h).
  const uint8_t* data() const { return pool_.data(); }
  int64_t block_stride() const { return piece_bytes_; }
  int64_t k_offset(int32_t layer, int32_t kv_head) const { return piece_index(layer, 0, kv_head) * piece_stride_; }
  int64_t v_offset(int32_t layer, int32_t kv_head) const { return piece_index(layer, 1, kv_head) * piece_stride_; }

  // Writes one token's K and V at position `pos` of the sequence whose
  // blocks are `block_table`: k_row and v_row hold num_kv_heads * head_dim
  // floats (head h at h * head_dim), converted to the pool's dtype.
  // REQUIRES: pos / kBlockTokens < block_table.size().
  void store(int32_t layer, std::span<const BlockId> block_table, int32_t pos, const float* k_row,
             const float* v_row);
  // Copies slots [0, num_slots) of `layer` (K and V, every head) from block
  // `from` to block `to`, leaving the other layers and slots of `to` alone.
  // REQUIRES: num_slots <= kBlockTokens.
  void copy_slots(int32_t layer, BlockId from, BlockId to, int32_t num_slots);
  // The inverse, with the scalar reference dequantizers (tests, references).
  void load(int32_t layer, std::span<const BlockId> block_table, int32_t pos, float* k_row,
            float* v_row) const;

 private:
  KvCache() = default;
  // The index of piece (layer, K or V, kv head): its place in the pool's
  // order and in a block image's.
  int64_t piece_index(int32_t layer, int32_t v, int32_t kv_head) const {
    return (2 * int64_t{layer} + v) * layout_.num_kv_heads + kv_head;
  }
  // Whether piece `index` holds its rows in lanes (an F16 or Q8_0 cache's
  // keys, a Q8_0 cache's values).
  bool holds_lane_rows(int64_t index) const {
    return lane_rows(static_cast<int32_t>(index / layout_.num_kv_heads % 2));
  }
  // Whether K (v = 0) or V (v = 1) rows are kept in lanes.
  bool lane_rows(int32_t v) const {
    return layout_.dtype == GgmlType::kQ8_0 || (v == 0 && layout_.dtype == GgmlType::kF16);
  }
  // Slot `slot` of a head's K (v = 0) or V rows in lanes (`head`) as a row
  // at `row`, and back.
  void lane_row(int32_t v, const uint8_t* head, int32_t slot, uint8_t* row) const;
  void put_lane_row(int32_t v, const uint8_t* row, int32_t slot, uint8_t* head) const;
  // Block `id`'s piece `index` in the pool (MET_CHECKs the id).
  uint8_t* piece(BlockId id, int64_t index) const;
  // Position `pos`'s slot in `layer`'s piece of K, kv head 0 (MET_CHECKs the
  // layer and the table); the same slot of K or V (v) of head h is
  // head_offset(v, h) further.
  uint8_t* layer_slot(int32_t layer, std::span<const BlockId> block_table, int32_t pos) const;
  int64_t head_offset(int32_t v, int32_t kv_head) const {
    return (int64_t{v} * layout_.num_kv_heads + kv_head) * piece_stride_;
  }

  KvLayout layout_;
  int64_t row_bytes_ = 0;
  int64_t piece_bytes_ = 0;   // kBlockTokens rows: one block's piece, also one block to the next
  int64_t piece_stride_ = 0;  // num_blocks pieces: one (layer, K|V, head) to the next
  int64_t block_bytes_ = 0;
  ::met::ref::QuantizeRowFn quantize_ = nullptr;
  ::met::ref::DequantizeRowFn dequantize_ = nullptr;
  HugePageMemory pool_;
};

}  // namespace met::cpu
