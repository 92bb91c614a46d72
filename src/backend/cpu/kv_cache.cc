// KvCache. Tested by tests/backend/kv_cache_test.cc.
#include "backend/cpu/kv_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/f16_keys.h"
#include "backend/cpu/q8_keys.h"
#include "backend/cpu/q8_values.h"
#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/row_kernels.h"

namespace met::cpu {

static_assert(kMaxKvHeadDim <= kMaxQ8QueryDims, "a Q8_0 key cache quantizes queries of every head size");

namespace {

bool is_kv_dtype(GgmlType dtype) {
  return dtype == GgmlType::kF16 || dtype == GgmlType::kBF16 || dtype == GgmlType::kF32 ||
         dtype == GgmlType::kQ8_0;
}

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

double gib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(1 << 30); }

int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(pages) * page_size;
}

int64_t row_bytes_of(const KvLayout& layout) {
  return static_cast<int64_t>(
      ggml_row_bytes(layout.dtype, static_cast<uint64_t>(layout.head_dim)).value());
}

}  // namespace

Status validate_kv_shape(const KvLayout& layout) {
  if (!is_kv_dtype(layout.dtype)) {
    return invalid_argument("kv cache: dtype {} is not supported (use f16, bf16, f32 or q8_0)",
                            ggml_type_name(layout.dtype));
  }
  if (layout.num_layers < 1 || layout.num_layers > kMaxKvLayers) {
    return out_of_range("kv cache: {} layers (must be 1..{})", layout.num_layers, kMaxKvLayers);
  }
  if (layout.num_kv_heads < 1 || layout.num_kv_heads > kMaxKvHeads) {
    return out_of_range("kv cache: {} kv heads (must be 1..{})", layout.num_kv_heads, kMaxKvHeads);
  }
  if (layout.head_dim < 8 || layout.head_dim > kMaxKvHeadDim || layout.head_dim % 8 != 0) {
    return unimplemented("kv cache: head_dim {} (must be a multiple of 8 in 8..{})",
                         layout.head_dim, kMaxKvHeadDim);
  }
  if (layout.dtype == GgmlType::kQ8_0 && layout.head_dim % kQk != 0) {
    return invalid_argument("kv cache: q8_0 needs head_dim a multiple of {}, got {} (use f16)", kQk,
                            layout.head_dim);
  }
  return ok_status();
}

Result<int64_t> kv_block_bytes(const KvLayout& layout) {
  MET_RETURN_IF_ERROR(validate_kv_shape(layout));
  // Bounded by the checks above: 1024 * 2 * 1024 * 16 * 1088 bytes < 2^46.
  const int64_t per_layer =
      2 * int64_t{layout.num_kv_heads} * kBlockTokens * row_bytes_of(layout);
  return round_up(per_layer * layout.num_layers, kKvBlockAlign);
}

Result<int64_t> kv_cache_bytes(const KvLayout& layout) {
  MET_ASSIGN_OR_RETURN(const int64_t block, kv_block_bytes(layout));
  if (layout.num_blocks < 1)
    return out_of_range("kv cache: {} blocks (need at least 1)", layout.num_blocks);
  if (layout.num_blocks > kMaxKvCacheBytes / block) {
    return out_of_range("kv cache: {} blocks of {} bytes is past the {:.0f} GiB limit",
                        layout.num_blocks, block, gib(kMaxKvCacheBytes));
  }
  return block * layout.num_blocks;
}

Result<int32_t> kv_blocks_for_budget(const KvLayout& layout, int64_t budget_bytes) {
  MET_ASSIGN_OR_RETURN(const int64_t block, kv_block_bytes(layout));
  const int64_t blocks = std::min<int64_t>(std::min(budget_bytes, kMaxKvCacheBytes) / block,
                                           std::numeric_limits<int32_t>::max());
  if (blocks < 1) {
    return out_of_range("kv cache: {} bytes hold no block ({} bytes each)", budget_bytes, block);
  }
  return static_cast<int32_t>(blocks);
}

Result<int64_t> kv_bytes_per_token(const KvLayout& layout) {
  MET_RETURN_IF_ERROR(validate_kv_shape(layout));
  return 2 * int64_t{layout.num_layers} * layout.num_kv_heads * row_bytes_of(layout);
}

Result<KvCache> KvCache::create(const KvLayout& layout) {
  MET_ASSIGN_OR_RETURN(const int64_t total, kv_cache_bytes(layout));
  const int64_t physical = physical_memory_bytes();
  if (total > physical) {
    return out_of_range(
        "kv cache: {:.2f} GiB for {} blocks exceeds this machine's {:.2f} GiB of memory",
        gib(total), layout.num_blocks, gib(physical));
  }
  KvCache cache;
  cache.layout_ = layout;
  cache.row_bytes_ = row_bytes_of(layout);
  cache.piece_bytes_ = kBlockTokens * cache.row_bytes_;
  cache.piece_stride_ = layout.num_blocks * cache.piece_bytes_;
  cache.block_bytes_ = kv_block_bytes(layout).value();
  cache.quantize_ = selected_row_kernels(layout.dtype).quantize;
  cache.dequantize_ = row_kernels_for_isa(layout.dtype, Isa::kScalar).dequantize;
  MET_CHECK(cache.quantize_ != nullptr && cache.dequantize_ != nullptr, "no row kernels for {}",
            ggml_type_name(layout.dtype));
  Result<HugePageMemory> pool = HugePageMemory::map(static_cast<size_t>(total));
  if (!pool.ok()) return pool.status().with_prefix("kv cache");
  cache.pool_ = std::move(pool).value();
  cache.pool_.prefault();  // backed now, not in the step that first reaches a block
  return cache;
}

uint8_t* KvCache::piece(BlockId id, int64_t index) const {
  MET_CHECK(id.value() >= 0 && id.value() < layout_.num_blocks, "block {} of {}", id.value(),
            layout_.num_blocks);
  return pool_.data() + index * piece_stride_ + id.value() * piece_bytes_;
}

void KvCache::lane_row(int32_t v, const uint8_t* head, int32_t slot, uint8_t* row) const {
  if (layout_.dtype != GgmlType::kQ8_0) {
    get_f16_key(head, layout_.head_dim, slot, row);
  } else if (v == 0) {
    get_q8_key(head, layout_.head_dim, slot, reinterpret_cast<BlockQ8_0*>(row));
  } else {
    get_q8_value(head, layout_.head_dim, slot, reinterpret_cast<BlockQ8_0*>(row));
  }
}

void KvCache::put_lane_row(int32_t v, const uint8_t* row, int32_t slot, uint8_t* head) const {
  if (layout_.dtype != GgmlType::kQ8_0) {
    put_f16_key(row, layout_.head_dim, slot, head);
  } else if (v == 0) {
    put_q8_key(reinterpret_cast<const BlockQ8_0*>(row), layout_.head_dim, slot, head);
  } else {
    put_q8_value(reinterpret_cast<const BlockQ8_0*>(row), layout_.head_dim, slot, head);
  }
}

// The image holds the pieces in piece_index order, each piece_bytes_.
void KvCache::read_block(BlockId id, std::span<uint8_t> image) const {
  MET_CHECK(static_cast<int64_t>(image.size()) == block_bytes_, "a block image of {} bytes", image.size());
  const int64_t pieces = piece_index(layout_.num_layers, 0, 0);
  for (int64_t i = 0; i < pieces; ++i) {
    const uint8_t* from = piece(id, i);
    uint8_t* to = image.data() + i * piece_bytes_;
    if (!holds_lane_rows(i)) {
      std::memcpy(to, from, static_cast<size_t>(piece_bytes_));
      continue;
    }
    const auto v = static_cast<int32_t>(i / layout_.num_kv_heads % 2);
    for (int32_t s = 0; s < kBlockTokens; ++s) lane_row(v, from, s, to + s * row_bytes_);
  }
  const int64_t used = pieces * piece_bytes_;
  std::memset(image.data() + used, 0, image.size() - static_cast<size_t>(used));  // the padding
}

void KvCache::write_block(BlockId id, std::span<const uint8_t> image) {
  MET_CHECK(static_cast<int64_t>(image.size()) == block_bytes_, "a block image of {} bytes", image.size());
  const int64_t pieces = piece_index(layout_.num_layers, 0, 0);
  for (int64_t i = 0; i < pieces; ++i) {
    const uint8_t* from = image.data() + i * piece_bytes_;
    uint8_t* to = piece(id, i);
    if (!holds_lane_rows(i)) {
      std::memcpy(to, from, static_cast<size_t>(piece_bytes_));
      continue;
    }
    const auto v = static_cast<int32_t>(i / layout_.num_kv_heads % 2);
    for (int32_t s = 0; s < kBlockTokens; ++s) put_lane_row(v, from + s * row_bytes_, s, to);
  }
}

uint8_t* KvCache::layer_slot(int32_t layer, std::span<const BlockId> block_table, int32_t pos) const {
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "layer {} of {}", layer, layout_.num_layers);
  MET_CHECK(pos >= 0 && static_cast<size_t>(pos / kBlockTokens) < block_table.size(),
            "position {} past a block table of {} blocks", pos, block_table.size());
  const BlockId id = block_table[static_cast<size_t>(pos / kBlockTokens)];
  return piece(id, piece_index(layer, 0, 0)) + (pos % kBlockTokens) * row_bytes_;
}

void KvCache::store(int32_t layer, std::span<const BlockId> block_table, int32_t pos,
                    const float* k_row, const float* v_row) {
  uint8_t* at = layer_slot(layer, block_table, pos);
  const int32_t d = layout_.head_dim;
  const int32_t s = pos % kBlockTokens;
  for (int32_t h = 0; h < layout_.num_kv_heads; ++h) {
    for (int32_t v = 0; v < 2; ++v) {
      const float* from = (v == 0 ? k_row : v_row) + int64_t{h} * d;
      uint8_t* slot = at + head_offset(v, h);
      if (!lane_rows(v)) {
        quantize_(from, slot, d);
        continue;
      }
      alignas(64) uint8_t row[2 * kMaxKvHeadDim];  // a row of either dtype
      quantize_(from, row, d);
      put_lane_row(v, row, s, slot - s * row_bytes_);  // the head's rows begin at slot 0
    }
  }
}

void KvCache::copy_slots(int32_t layer, BlockId from, BlockId to, int32_t num_slots) {
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "layer {} of {}", layer, layout_.num_layers);
  MET_CHECK(num_slots >= 0 && num_slots <= kBlockTokens, "{} slots of a block", num_slots);
  const auto bytes = static_cast<size_t>(num_slots * row_bytes_);
  for (int32_t h = 0; h < layout_.num_kv_heads; ++h) {
    const int64_t k = piece_index(layer, 0, h), v = piece_index(layer, 1, h);
    if (layout_.dtype == GgmlType::kQ8_0) {
      copy_q8_key_slots(piece(from, k), layout_.head_dim, num_slots, piece(to, k));
      copy_q8_value_slots(piece(from, v), layout_.head_dim, num_slots, piece(to, v));
      continue;
    }
    if (layout_.dtype == GgmlType::kF16) {
      copy_f16_key_slots(piece(from, k), layout_.head_dim, num_slots, piece(to, k));
    } else {
      std::memcpy(piece(to, k), piece(from, k), bytes);
    }
    std::memcpy(piece(to, v), piece(from, v), bytes);
  }
}

void KvCache::load(int32_t layer, std::span<const BlockId> block_table, int32_t pos, float* k_row,
                   float* v_row) const {
  const uint8_t* at = layer_slot(layer, block_table, pos);
  const int32_t d = layout_.head_dim;
  const int32_t s = pos % kBlockTokens;
  for (int32_t h = 0; h < layout_.num_kv_heads; ++h) {
    for (int32_t v = 0; v < 2; ++v) {
      float* to = (v == 0 ? k_row : v_row) + int64_t{h} * d;
      const uint8_t* slot = at + head_offset(v, h);
      if (!lane_rows(v)) {
        dequantize_(slot, to, d);
        continue;
      }
      alignas(64) uint8_t row[2 * kMaxKvHeadDim];
      lane_row(v, slot - s * row_bytes_, s, row);
      dequantize_(row, to, d);
    }
  }
}

}  // namespace met::cpu
