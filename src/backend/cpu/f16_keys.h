// F16 keys in the paged KV cache, tokens in lanes. Stored as rows (a token's
// head_dim halves one after another), a block's keys make the scores pass
// sum each (query, token) product across the vector's lanes: a 16 x 16
// transpose-add per 16 scores, about as many instructions as the products
// themselves. Instead one kv head's keys of one KV block (its kBlockTokens
// = 16 slots, head_dim D) are kept as
//   [D dims][16 slots] f16 bits
// which is 16 rows' bytes, so the cache's sizes and offsets do not change.
// One 32-byte load then holds one dim of all 16 tokens: a query's scores are
// 16 lanes of D fused multiply-adds of its broadcast dims, with no
// horizontal sum. Token t's score, in every tier (attention_f16_keys.h):
//   ((a0 + a1) + (a2 + a3)) * scale,  a_c = fma chain over dims d = c mod 4
// in increasing d, from 0. V stays in rows: the values pass reads a token's row.
// Invariants: put_f16_key then get_f16_key gives back the row's bits.
// Threading: pure functions. Tested by tests/backend/kv_cache_test.cc and,
// through the chunk kernels, attention_test.cc.
#pragma once

#include <cstdint>

#include "backend/cpu/block_tokens.h"

namespace met::cpu {

// Bytes of one dim of the 16 slots.
inline constexpr int32_t kF16KeyDimBytes = 2 * kBlockTokens;

// Slot `slot` of `head` (a kv head's keys of one block) takes the row of
// head_dim f16 values whose bytes are at `row` (any alignment: a cache row
// or a spill image's). REQUIRES: slot < 16.
void put_f16_key(const uint8_t* row, int32_t head_dim, int32_t slot, uint8_t* head);
// The inverse: slot `slot`'s key as a row's bytes.
void get_f16_key(const uint8_t* head, int32_t head_dim, int32_t slot, uint8_t* row);
// Copies slots [0, num_slots) of one head's keys from `from` to `to`.
void copy_f16_key_slots(const uint8_t* from, int32_t head_dim, int32_t num_slots, uint8_t* to);

}  // namespace met::cpu
