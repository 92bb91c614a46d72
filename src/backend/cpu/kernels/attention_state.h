// AttentionState: the plan of a step (sequences, work units, items,
// merge tasks) and the buffers that run it (per-thread tiles, split-K
// slots), shared by attention_plan.cc (which fills it) and attention.cc
// (which runs it). Internal to the attention kernels.
// Invariants: every vector's capacity is reserved by the constructor, so
// planning a step allocates nothing; records are 64-byte aligned and
// record_floats long; a split unit owns slots [slot_base, slot_base +
// num_chunks * queries).
// Threading: written by plan() alone; read by every thread of a
// paged_attention job, which also writes its own ThreadBuffers and its
// items' slots. Tested through tests/backend/attention_test.cc and
// attention_window_test.cc.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kernels/attention_chunk.h"

namespace met::cpu {

struct FreeAligned {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }
};
using AlignedFloats = std::unique_ptr<float[], FreeAligned>;

inline AlignedFloats aligned_floats(int64_t n, bool zero) {
  auto* p = static_cast<float*>(
      ::operator new[](static_cast<size_t>(n) * sizeof(float), std::align_val_t{64}));
  if (zero) std::fill(p, p + n, 0.0f);
  return AlignedFloats(p);
}

// A tile of query rows of one sequence against one kv head. Its queries are
// (row, head in group) in row-major order: query i is row i / group.
struct AttnUnit {
  int32_t seq = 0;
  int32_t kv_head = 0;
  int32_t row_begin = 0;  // within the sequence
  int32_t num_rows = 0;
  int32_t num_chunks = 0;  // chunks its last row reads
  int64_t cost = 0;        // query-positions it reads
  bool split = false;
  int64_t slot_base = 0;  // when split: (chunk c, query i) is slot_base + c * queries + i
  int64_t group_cost = 0;  // the largest item of its (sequence, kv head): build_items' order
};

struct AttnItem {
  int32_t unit = 0;
  int32_t chunk = 0;  // the chunk of a split item
  bool whole = true;  // all the unit's chunks, folded on the spot
  int64_t cost = 0;
};

struct AttnMerge {
  int32_t unit = 0;
  int32_t query = 0;
};

struct AttnThreadBuffers {
  AlignedFloats scores;   // tile_queries * kChunkTokens
  AlignedFloats total;    // tile_queries records: chunks folded so far
  AlignedFloats partial;  // tile_queries records: the current chunk
  AlignedFloats query_codes;  // tile_queries quantized queries (Q8_0 keys: ChunkJob::query_codes)
  std::vector<const float*> q;
  std::vector<int32_t> begin;  // the first position the query's row reads (its window's)
  std::vector<int32_t> len;    // one past the last position it reads
  std::vector<int32_t> start;  // within the current chunk: the kernel's start and limit
  std::vector<int32_t> limit;
  std::vector<float*> records;
};

struct AttentionState {
  AttentionLimits limits;
  Isa isa = Isa::kScalar;
  int32_t group = 0;  // query heads per kv head
  int32_t rows_per_tile = 0;
  int32_t tile_queries = 0;   // most queries of one unit
  int32_t record_floats = 0;  // header + head_dim padded to 16
  int64_t max_slots = 0;
  std::vector<AttnSeq> seqs;
  std::vector<AttnUnit> units;
  std::vector<int32_t> order;
  std::vector<AttnItem> items;
  std::vector<AttnMerge> merges;
  AlignedFloats slots;
  std::vector<AttnThreadBuffers> threads;
  std::atomic<int32_t> next_item{0};

  int32_t queries(const AttnUnit& u) const { return u.num_rows * group; }
  float* slot(const AttnUnit& u, int32_t chunk, int32_t query) const {
    const int64_t index = u.slot_base + int64_t{chunk} * queries(u) + query;
    return slots.get() + index * record_floats;
  }
};

}  // namespace met::cpu
