// Q8_0 values in the paged KV cache, token pairs in lanes. Stored as Q8_0
// rows (a block of 32 dims: an f16 scale and 32 int8 codes), a value makes
// the values pass widen, convert and scale each element of each token before
// its float FMA; at decode that, not memory, bounded attention over a Q8_0
// cache. Instead one kv head's values of one KV block (its kBlockTokens = 16
// slots, head_dim D a multiple of 32) are kept as
//   codes:  [D / 32][8 slot pairs][32 dims][2 slots] int8, the Q8_0 codes
//   scales: [D / 32][16 slots] the Q8_0 block scale (f16 bits)
// which is 16 Q8_0 rows' bytes (16 * D + 32 * D / 32), so the cache's
// sizes and offsets do not change. A 64-byte line then holds 32 dims of two
// tokens, and widened to 16 bits, half a line is 16 lanes of one dim's two
// codes: one 16-bit multiply-add (vpdpwssd, vpmaddwd) adds two tokens'
// weighted codes to 16 dims, with no transpose and no per-element float
// conversion. The values pass (attention_q8_values.h) gives each query's
// weights for a block of 16 tokens and 32 dims, w[t] = p[t] * d[t] (its
// softmax weight times the token's scale), 16-bit integers on the block's
// own scale: with m = max |w[t]|, code q[t] = round(w[t] * (32767 / m)),
// and the block adds
//   (m / 32767) * sum over t of q[t] * codes[t][dim]
// to each dim with one fma, the integer sum exact. A weight's rounding is at
// most m / 65534, a 2^-16 share of the block's largest weight.
// Invariants: put_q8_value then get_q8_value gives back the row's bytes.
// Threading: pure functions. Tested by tests/backend/kv_cache_test.cc and,
// through the chunk kernels, attention_test.cc.
#pragma once

#include <cstdint>

#include "backend/cpu/block_tokens.h"
#include "tensor/block_types.h"

namespace met::cpu {

inline constexpr int32_t kQ8ValueLineBytes = 64;                        // 32 dims of a slot pair
inline constexpr int32_t kQ8ValueBlockBytes = 8 * kQ8ValueLineBytes;    // 32 dims of 16 slots
inline constexpr float kQ8ValueWeightMax = 32767.0f;                   // a weight code's range
static_assert(kBlockTokens == 16);

// Where the scales of a head's block of values begin.
inline int64_t q8_value_scales_offset(int32_t head_dim) { return int64_t{kBlockTokens} * head_dim; }

// Slot `slot` of `head` (a kv head's values of one block) takes the Q8_0 row
// `row` of head_dim elements. REQUIRES: head_dim % 32 == 0, slot < 16.
void put_q8_value(const BlockQ8_0* row, int32_t head_dim, int32_t slot, uint8_t* head);
// The inverse: slot `slot`'s value as a Q8_0 row.
void get_q8_value(const uint8_t* head, int32_t head_dim, int32_t slot, BlockQ8_0* row);
// Copies slots [0, num_slots) of one head's values from `from` to `to`.
void copy_q8_value_slots(const uint8_t* from, int32_t head_dim, int32_t num_slots, uint8_t* to);

// A weight's 16-bit code: x = w * (32767 / m) (|x| <= 32767 but for the
// rounding of the product) rounded to nearest even, as the vector converts
// round. A NaN or an x past 32767.5 (only from non-finite cache bytes) gives
// 0, where the vector tiers give some other code: never undefined behaviour.
int16_t q8_value_weight_code(float x);

}  // namespace met::cpu
