// AVX2 matmul for MXFP4 weights packed as WeightLayout::kMxfp4x16
// (packed_weights.h) against ActQ8_0 activations (matmul_kernels.h). A
// 16-row group is run as two halves of 8 rows (one int32 lane per row).
// Per block and half, 4 aligned 32-byte loads hold the 8 rows' nibbles;
// masked (low nibbles) or shifted (high), each goes through one vpshufb of
// the doubled E2M1 values + 12 (0 .. 24, unsigned), decoded once per tile
// and reused by every activation row of the tile. Per row, vpmaddubsw
// against the activation's quads (broadcast, signed) gives int16 pairs of at
// most 2 x 24 x 128 in magnitude, so four quads sum in int16 without
// saturating; vpmaddwd against ones widens each half-block to int32, and
// -12 x (the activation block's code sum, from its offset_bias) takes the
// offset back out, leaving the exact signed dot of each row. The E8M0
// exponents widen to 2^(e - 128) with integer ops (bit exact, subnormal
// e = 0, 1 included); one multiply and one FMA per row and block scale the
// 8 dots into float.
// Tiles: up to 4 activation rows x one half group (2 rows measured 20%
// slower on a batch; 8 no faster, its accumulators spilled from the 16 ymm
// registers). Software prefetch measured no faster at m = 1 here, so there
// is none. Outputs outside [n_begin, n_end) are masked off at the store. Every activation row's
// arithmetic is the same whatever tile it lands in, so a row's outputs are
// bit-identical alone or in a batch.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {
namespace {

constexpr int kGroupRows = 16;
constexpr int kHalfRows = 8;
constexpr int kUnitBlocks = 4;
constexpr size_t kBlockNibbleBytes = kGroupRows * kQk / 2;  // 256: 4 lines of 16 rows x 4 bytes
constexpr size_t kUnitBytes = kUnitBlocks * kBlockNibbleBytes + 64;
constexpr int kValueOffset = 12;  // -min(kMxfp4Values)
constexpr int kMaxRows = 4;

// Where an activation row's blocks and tails are.
struct ActRow {
  const uint8_t* blocks;  // BlockQ8_0 b at blocks + 34 b
  const uint8_t* tails;   // ActQ8_0Tail b at tails + 8 b
};

__m256i broadcast_quad(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm256_set1_epi32(v);
}

// 2^(e - 128) for the 8 exponent bytes at `e8` (tensor/mxfp4.h's
// e8m0_to_f32_half): (e - 1) << 23 for e >= 2, else 0x00200000 << e.
__m256 half_scales(const uint8_t* e8) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e8)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i is_normal = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_blendv_epi8(subnormal, normal, is_normal));
}

// The 8 rows' doubled E2M1 values + 12 for quad j < 8 of a block, from the
// half's nibbles at `nibbles` (line j's half at nibbles + 64 j).
inline void decode_half(const uint8_t* nibbles, __m256i (&w)[8]) {
  // kMxfp4Values + kValueOffset (block_types.h), in both 128-bit lanes.
  const __m256i table = _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0, 12, 13, 14,
                                         15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(nibbles + 64 * j));
    w[j] = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low_mask));
    w[j + 4] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask));
  }
}

// Sum over quads j0 .. j0+3 of w[j] times the activation's quad j, as int16
// pairs (at most 4 x 2 x 24 x 128 = 24576 in magnitude).
inline __m256i four_quads(const __m256i (&w)[8], int j0, const uint8_t* q) {
  const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(w[j0], broadcast_quad(q + 4 * j0)),
                                     _mm256_maddubs_epi16(w[j0 + 1], broadcast_quad(q + 4 * j0 + 4)));
  const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(w[j0 + 2], broadcast_quad(q + 4 * j0 + 8)),
                                     _mm256_maddubs_epi16(w[j0 + 3], broadcast_quad(q + 4 * j0 + 12)));
  return _mm256_add_epi16(a, b);
}

// acc[r] += the 8 rows' block-b terms for activation row r.
template <int R>
inline void block_step(const uint8_t* nibbles, const uint8_t* exponents, const ActRow (&a)[R], int64_t b,
                       __m256 (&acc)[R]) {
  __m256i w[8];
  decode_half(nibbles, w);
  const __m256 w_scale = half_scales(exponents);
  const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const uint8_t* q = a[r].blocks + sizeof(BlockQ8_0) * static_cast<size_t>(b) + sizeof(uint16_t);
    ActQ8_0Tail tail;
    std::memcpy(&tail, a[r].tails + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), sizeof(tail));
    // offset_bias is -128 x the block's code sum; the offset here is 12.
    const __m256i bias = _mm256_set1_epi32(tail.offset_bias / 128 * kValueOffset);
    const __m256i low = _mm256_madd_epi16(four_quads(w, 0, q), ones);
    const __m256i high = _mm256_madd_epi16(four_quads(w, 4, q), ones);
    const __m256i dot = _mm256_add_epi32(_mm256_add_epi32(low, high), bias);
    acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(w_scale, _mm256_set1_ps(tail.d)), acc[r]);
  }
}

// y rows [i0, i0 + R), outputs n0 .. n0 + 7 where `store_mask` is set, from
// half h (rows 8h .. 8h+7) of the group at `group`.
template <int R>
void half_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int h, int64_t n0, __m256i store_mask) {
  const int64_t num_blocks = t.cols / kQk;
  ActRow a[R];
  for (int r = 0; r < R; ++r) {
    const uint8_t* row = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
    a[r].blocks = row;
    a[r].tails = row + static_cast<size_t>(num_blocks) * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t));
  }
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; b += kUnitBlocks, unit += kUnitBytes) {
    const int64_t unit_blocks = num_blocks - b < kUnitBlocks ? num_blocks - b : kUnitBlocks;
    const uint8_t* nibbles = unit + 32 * h;
    const uint8_t* exponents = unit + static_cast<size_t>(unit_blocks) * kBlockNibbleBytes + kHalfRows * h;
    for (int64_t k = 0; k < unit_blocks; ++k) {
      block_step<R>(nibbles + static_cast<size_t>(k) * kBlockNibbleBytes, exponents + kGroupRows * k, a, b + k,
                    acc);
    }
  }
  for (int r = 0; r < R; ++r) _mm256_maskstore_ps(t.y + (i0 + r) * t.y_stride + n0, store_mask, acc[r]);
}

using HalfTileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int, int64_t, __m256i);
constexpr HalfTileFn kTiles[kMaxRows] = {half_tile<1>, half_tile<2>, half_tile<3>, half_tile<4>};

}  // namespace

void matmul_mxfp4x16(const MatmulTask& t) {
  const size_t group_bytes = t.weight_row_bytes;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t g = t.n_begin / kGroupRows; g * kGroupRows < t.n_end; ++g) {
    const uint8_t* group = t.weights + static_cast<size_t>(g) * group_bytes;
    for (int h = 0; h < 2; ++h) {
      const int64_t n0 = g * kGroupRows + h * kHalfRows;
      // (No std::min/max: an inline template instantiated here would be
      // built for AVX2 flags and could be the copy the linker keeps.)
      const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
      const int64_t hi = t.n_end < n0 + kHalfRows ? t.n_end - n0 : kHalfRows;
      if (lo >= hi) continue;
      const __m256i store_mask =
          _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane),
                           _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1)));
      for (int64_t i0 = 0; i0 < t.m; i0 += kMaxRows) {
        const int64_t rows = t.m - i0 < kMaxRows ? t.m - i0 : kMaxRows;
        kTiles[rows - 1](t, i0, group, h, n0, store_mask);
      }
    }
  }
}

}  // namespace met::cpu::avx2
