// AVX-512 VNNI matmul for MXFP4 weights packed as WeightLayout::kMxfp4x16
// (packed_weights.h) against ActQ8_0 activations (matmul_kernels.h). Per
// block, 4 aligned 64-byte loads hold 16 weight rows' nibbles; masked (low
// nibbles) or shifted (high), each goes through one vpshufb of the doubled
// E2M1 values + 128, which leaves the operand Q8_0x16's kernel reads (16
// rows x 4 unsigned bytes per quad). That decode runs once per tile and is
// reused by every activation row of the tile: 8 vpdpbusd per row against
// the activation's quads (broadcast, signed), in two int32 chains, the first
// started at the activation block's offset_bias so their sum is the exact
// signed dot. The 16 rows' E8M0 exponents widen to their scales 2^(e - 128)
// with integer ops (bit exact, subnormal e = 0, 1 included); one multiply
// and one FMA per row and block scale the 16 dots into one float
// accumulator per row.
// Tiles: up to 16 activation rows x one 16-row group. The decode (about 27
// instructions a block, mostly on the ports vpdpbusd needs) is what MXFP4
// adds to Q8_0x16's work, so tiles are taller than Q8_0x16's 4 rows: at 16
// rows a batch runs about as many FLOPs a second as Q8_0x16 does (4 rows
// measured 20% slower, 8 rows 10%). A thread's outputs are a run of whole
// groups read front to back as one stream; the first row tile of a group
// prefetches two units ahead, which took m = 1 from about 70% to about 90%
// of Q8_0x16's DRAM bytes a second (MXFP4's decode leaves the stream fewer
// cycles to hide misses in). Outputs outside [n_begin, n_end) are masked off
// at the store. Every activation row's arithmetic is the same whatever tile
// it lands in, so a row's outputs are bit-identical alone or in a batch.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kGroupRows = 16;
constexpr int kUnitBlocks = 4;
constexpr size_t kBlockNibbleBytes = kGroupRows * kQk / 2;  // 256: 4 loads of 16 rows x 4 bytes
constexpr size_t kUnitBytes = kUnitBlocks * kBlockNibbleBytes + 64;
constexpr int kMaxRows = 16;
constexpr size_t kPrefetchUnits = 2;

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

// 2^(e - 128) for the 16 exponent bytes at `e16` (tensor/mxfp4.h's
// e8m0_to_f32_half): (e - 1) << 23 for e >= 2, else 0x00200000 << e.
__m512 block_scales(const uint8_t* e16) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(e16)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 is_normal = _mm512_cmpge_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(is_normal, subnormal, normal));
}

// The 16 rows' doubled E2M1 values + 128 for quad j < 8 of the block whose
// nibbles are at `nibbles` (256 bytes, 64-byte aligned).
inline void decode_block(const uint8_t* nibbles, __m512i (&w)[8]) {
  // kMxfp4Values + 128 (block_types.h), in every 128-bit lane.
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(static_cast<char>(128), static_cast<char>(129), static_cast<char>(130), static_cast<char>(131),
                    static_cast<char>(132), static_cast<char>(134), static_cast<char>(136), static_cast<char>(140),
                    static_cast<char>(128), 127, 126, 125, 124, 122, 120, 116));
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512i v = _mm512_load_si512(nibbles + 64 * j);
    w[j] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low_mask));
    w[j + 4] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low_mask));
  }
}

// acc[r] += the 16 rows' block-b terms for activation row r, from the
// block's nibbles and exponents.
template <int R>
inline void block_step(const uint8_t* nibbles, const uint8_t* exponents, const ActRow (&a)[R], int64_t b,
                       __m512 (&acc)[R]) {
  __m512i w[8];
  decode_block(nibbles, w);
  const __m512 w_scale = block_scales(exponents);
#pragma GCC unroll 16
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
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; b += kUnitBlocks, unit += kUnitBytes) {
    if (i0 == 0) {
      for (size_t line = 0; line < kUnitBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(unit + kPrefetchUnits * kUnitBytes + line), _MM_HINT_T0);
      }
    }
    const int64_t unit_blocks = num_blocks - b < kUnitBlocks ? num_blocks - b : kUnitBlocks;
    const uint8_t* exponents = unit + static_cast<size_t>(unit_blocks) * kBlockNibbleBytes;
    for (int64_t k = 0; k < unit_blocks; ++k) {
      block_step<R>(unit + static_cast<size_t>(k) * kBlockNibbleBytes, exponents + kGroupRows * k, a, b + k, acc);
    }
  }
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + n0, mask, acc[r]);
}

using GroupTileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int64_t, __mmask16);
constexpr GroupTileFn kTiles[kMaxRows] = {group_tile<1>, group_tile<2>, group_tile<3>, group_tile<4>,
                                          group_tile<5>, group_tile<6>, group_tile<7>, group_tile<8>,
                                          group_tile<9>, group_tile<10>, group_tile<11>, group_tile<12>,
                                          group_tile<13>, group_tile<14>, group_tile<15>, group_tile<16>};

}  // namespace

void matmul_mxfp4x16(const MatmulTask& t) {
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
