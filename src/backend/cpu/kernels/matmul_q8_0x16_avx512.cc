// AVX-512 VNNI matmul for Q8_0 weights packed as WeightLayout::kQ8_0x16
// (packed_weights.h) against ActQ8_0 activations (matmul_kernels.h): the
// decode kernel. For each block, 8 aligned 64-byte loads hold 16 weight rows'
// codes (offset +128, unsigned), and 8 vpdpbusd against the activation's
// 4-byte quads (broadcast, signed) leave one int32 per output row, started at
// the activation block's offset_bias so it ends at the exact signed dot. The
// 16 rows' scales widen with one vcvtph2ps; one multiply and one FMA per
// block scale the 16 dots into float. Even and odd blocks go to separate
// float accumulators (half the dependency chain and half the f32 summation
// error of one).
// Tiles: up to 4 activation rows x one 16-row group; the group's codes are
// loaded once per block for every activation row. A thread's outputs are a
// run of whole groups, read front to back as one stream, which the hardware
// prefetchers follow: software prefetch (2 to 8 pairs ahead, every line)
// measured no faster at m = 1 on Zen 5, so there is none. Outputs outside
// [n_begin, n_end) are masked off at the store.
// Batches (m > 4) are compute-bound here: per weight byte streamed from DRAM
// at m = 16 the kernel runs at about half its cache-resident rate; neither
// prefetching the next group into L2 nor walking all rows block by block
// (accumulators in L1) measured faster, so row tiles simply repeat per group.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kGroupRows = 16;
constexpr size_t kBlockCodeBytes = kGroupRows * kQk;     // 512: 8 quads x 16 rows x 4
constexpr size_t kPairBytes = 2 * kBlockCodeBytes + 64;  // two blocks' codes, then 32 scales
constexpr int kMaxRows = 4;

// Where an activation row's blocks and tails are.
struct ActRow {
  const uint8_t* blocks;  // BlockQ8_0 b at blocks + 34 b
  const uint8_t* tails;   // ActQ8_0Tail b at tails + 8 b
};

__m512i broadcast_quad(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm512_set1_epi32(v);
}

// acc[r] += the 16 rows' block-b terms for activation row r, from the
// block's codes (512 bytes at `codes`) and its 16 scales widened.
template <int R>
inline void block_step(const uint8_t* codes, __m512 w_scale, const ActRow (&a)[R], int64_t b,
                       __m512 (&acc)[R]) {
  __m512i w[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) w[j] = _mm512_load_si512(codes + 64 * j);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const uint8_t* q = a[r].blocks + sizeof(BlockQ8_0) * static_cast<size_t>(b) + sizeof(uint16_t);
    ActQ8_0Tail tail;
    std::memcpy(&tail, a[r].tails + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), sizeof(tail));
    __m512i even = _mm512_set1_epi32(tail.offset_bias);
    __m512i odd = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int j = 0; j < 8; j += 2) {
      even = _mm512_dpbusd_epi32(even, w[j], broadcast_quad(q + 4 * j));
      odd = _mm512_dpbusd_epi32(odd, w[j + 1], broadcast_quad(q + 4 * j + 4));
    }
    const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(even, odd));
    acc[r] = _mm512_fmadd_ps(dot, _mm512_mul_ps(w_scale, _mm512_set1_ps(tail.d)), acc[r]);
  }
}

// y rows [i0, i0 + R), outputs n0 .. n0 + 15 where `mask` is set, from the
// group at `group`.
template <int R>
void group_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask) {
  const int64_t num_blocks = t.cols / kQk;
  ActRow a[R];
  for (int r = 0; r < R; ++r) {
    const uint8_t* row = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
    a[r].blocks = row;
    a[r].tails = row + static_cast<size_t>(num_blocks) * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t));
  }
  __m512 even[R], odd[R];
  for (int r = 0; r < R; ++r) even[r] = odd[r] = _mm512_setzero_ps();
  const uint8_t* unit = group;
  int64_t b = 0;
  for (; b + 2 <= num_blocks; b += 2, unit += kPairBytes) {
    const __m512i scales = _mm512_load_si512(unit + 2 * kBlockCodeBytes);
    block_step<R>(unit, _mm512_cvtph_ps(_mm512_castsi512_si256(scales)), a, b, even);
    block_step<R>(unit + kBlockCodeBytes, _mm512_cvtph_ps(_mm512_extracti64x4_epi64(scales, 1)), a, b + 1,
                  odd);
  }
  if (b < num_blocks) {
    const __m256i scales = _mm256_load_si256(reinterpret_cast<const __m256i*>(unit + kBlockCodeBytes));
    block_step<R>(unit, _mm512_cvtph_ps(scales), a, b, even);
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + n0, mask, _mm512_add_ps(even[r], odd[r]));
  }
}

using GroupTileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int64_t, __mmask16);
constexpr GroupTileFn kTiles[kMaxRows] = {group_tile<1>, group_tile<2>, group_tile<3>, group_tile<4>};

}  // namespace

void matmul_q8_0x16(const MatmulTask& t) {
  const size_t group_bytes = t.weight_row_bytes;
  for (int64_t g = t.n_begin / kGroupRows; g * kGroupRows < t.n_end; ++g) {
    const int64_t n0 = g * kGroupRows;
    // (No std::min/max: an inline template instantiated here would be built
    // for AVX-512 and could be the copy the linker keeps for baseline code.)
    const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
    const int64_t hi = t.n_end < n0 + kGroupRows ? t.n_end - n0 : kGroupRows;
    const auto mask = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
    const uint8_t* group = t.weights + static_cast<size_t>(g) * group_bytes;
    for (int64_t i0 = 0; i0 < t.m; i0 += kMaxRows) {
      const int64_t rows = t.m - i0 < kMaxRows ? t.m - i0 : kMaxRows;
      kTiles[rows - 1](t, i0, group, n0, mask);
    }
  }
}

}  // namespace met::cpu::avx512
