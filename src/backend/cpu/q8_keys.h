// Q8_0 keys in the paged KV cache, tokens in lanes. Stored as Q8_0 rows (a
// block of 32 dims: an f16 scale and 32 int8 codes), a key makes the scores
// pass widen, convert and scale every element before its float FMA. Instead
// one kv head's keys of one KV block (its kBlockTokens = 16 slots, head_dim
// D a multiple of 32) are kept as
//   codes:  [D / 4][16 slots][4 dims] uint8, the Q8_0 code + 128
//   scales: [D / 32][16 slots] the Q8_0 block scale (f16 bits)
// which is 16 Q8_0 rows' bytes (16 * D + 32 * D / 32), so the cache's
// sizes and offsets do not change. A 64-byte line then holds 4 dims of all
// 16 tokens: one u8 x s8 dot-product instruction (vpdpbusd) adds 4 dims of a
// query to the 16 tokens' scores, with no transpose and no per-element
// conversion. The query is quantized to Q8_0 (QueryQ8), as llama.cpp's CPU
// attention does for a Q8_0 K cache, and token t's score is
//   sum over blocks b of  float(kdot[t, b]) * (kd[t, b] * qd[b])
// summed in block order with one rounding each (an fma), where kdot is the
// exact integer dot product of the codes (sum of (k + 128) q less
// 128 * sum q). V stays in Q8_0 rows: the values pass reads a token's row.
// Invariants: put_q8_key then get_q8_key gives back the row's bytes.
// Threading: pure functions. Tested by tests/backend/kv_cache_test.cc and,
// through the chunk kernels, attention_test.cc.
#pragma once

#include <cstdint>

#include "backend/cpu/block_tokens.h"
#include "tensor/block_types.h"

namespace met::cpu {

inline constexpr int32_t kQ8KeyQuadBytes = 4 * kBlockTokens;  // 4 dims of 16 slots: one cache line
static_assert(kQ8KeyQuadBytes == 64);

// Where the scales of a head's block of keys begin.
inline int64_t q8_key_scales_offset(int32_t head_dim) { return int64_t{kBlockTokens} * head_dim; }

// Slot `slot` of `head` (a kv head's keys of one block) takes the Q8_0 row
// `row` of head_dim elements. REQUIRES: head_dim % 32 == 0, slot < 16.
void put_q8_key(const BlockQ8_0* row, int32_t head_dim, int32_t slot, uint8_t* head);
// The inverse: slot `slot`'s key as a Q8_0 row.
void get_q8_key(const uint8_t* head, int32_t head_dim, int32_t slot, BlockQ8_0* row);
// Copies slots [0, num_slots) of one head's keys from `from` to `to`.
void copy_q8_key_slots(const uint8_t* from, int32_t head_dim, int32_t num_slots, uint8_t* to);

// A query quantized for Q8_0 keys: its Q8_0 codes, each block's scale as a
// float, and 128 times each block's code sum (what the + 128 of the keys'
// codes adds to a dot product). Laid out in q8_query_bytes(head_dim) bytes.
struct QueryQ8 {
  const int8_t* codes;   // head_dim
  const float* d;        // head_dim / 32
  const int32_t* bias;   // head_dim / 32
};

// Bytes of one quantized query, a multiple of 64.
constexpr int64_t q8_query_bytes(int32_t head_dim) {
  const int64_t bytes = head_dim + 8 * int64_t{head_dim / 32};
  return (bytes + 63) / 64 * 64;
}
inline constexpr int32_t kMaxQ8QueryDims = 1024;  // kv_cache.h's kMaxKvHeadDim

// Quantizes q (head_dim floats) into `out` (q8_query_bytes, 4-byte aligned)
// exactly as quantize_row_q8_0 would (scale rounded to f16), and returns the
// view of it.
QueryQ8 quantize_query_q8(const float* q, int32_t head_dim, uint8_t* out);
// The view of a query quantize_query_q8 wrote at `at`.
inline QueryQ8 q8_query_at(const uint8_t* at, int32_t head_dim) {
  const int32_t blocks = head_dim / 32;
  return {reinterpret_cast<const int8_t*>(at), reinterpret_cast<const float*>(at + head_dim),
          reinterpret_cast<const int32_t*>(at + head_dim + 4 * blocks)};
}

}  // namespace met::cpu
