// AVX-512 VNNI matmul kernels for Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, MXFP4 and IQ4_NL weights against
// ActQ8_0 activations (matmul_kernels.h), two 32-element blocks per 512-bit
// vector. vpdpbusd needs an unsigned operand: Q8_0 codes are offset to
// w + 128 (xor 0x80), Q4_0 codes are 0..15 as stored (Q5_0's 0..31, bit 4
// from qh), Q4_1 and Q5_1 codes as stored with m_w d_a times the lane sums
// added in float, and MXFP4 and IQ4_NL
// codes are looked up (vpshufb) as their values (MXFP4's doubled) + 128; the offsets (128 or
// 8 times the lane's 4 activation codes, from the activation row's lane sums)
// start the accumulator, so each int32 lane holds an exact signed partial dot
// and float rounding stays relative to sum |w a|. Lanes are scaled by
// d_w * d_a in float (FMA) and summed at the end (MXFP4's d_w is 2^(e-128)).
// Tiles of up to 4 activation rows x 4 weight rows: a weight pair is decoded
// once per tile and used for every row.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

// Two floats spread over lanes 0-7 and 8-15.
__m512 pair_splat(float first, float second) {
  return _mm512_insertf32x8(_mm512_set1_ps(first), _mm256_set1_ps(second), 1);
}
__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// An activation row's view of blocks b and b + 1 (or b alone: the second is
// zero when `single`).
struct ActPair {
  __m512i q;
  __m512 scale;
  __m512i lane_sums;  // sums of codes 4l .. 4l+3, one per int32 lane
};

template <bool kSingle>
ActPair load_act_pair(const uint8_t* row, int64_t num_blocks, int64_t b) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(row);
  const uint8_t* sums = row + num_blocks * sizeof(BlockQ8_0) + 16 * b;
  ActPair out;
  const __m512i first = _mm512_castsi256_si512(load256(blocks[b].qs));
  out.q = kSingle ? _mm512_zextsi256_si512(load256(blocks[b].qs))
                  : _mm512_inserti64x4(first, load256(blocks[b + 1].qs), 1);
  out.scale = pair_splat(_cvtsh_ss(blocks[b].d), kSingle ? 0.0f : _cvtsh_ss(blocks[b + 1].d));
  out.lane_sums = _mm512_cvtepi16_epi32(kSingle ? _mm256_maskz_loadu_epi16(0x00FF, sums) : load256(sums));
  return out;
}

struct Q8_0Weights {
  using Block = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static constexpr int kOffsetShift = 7;  // codes offset by 128
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    const __m512i q = kSingle ? _mm512_zextsi256_si512(load256(blocks[b].qs))
                              : _mm512_inserti64x4(_mm512_castsi256_si512(load256(blocks[b].qs)),
                                                   load256(blocks[b + 1].qs), 1);
    return _mm512_xor_si512(q, _mm512_set1_epi8(static_cast<char>(0x80)));
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

// The 4-bit codes of blocks b and b + 1 (zero for the second when kSingle),
// each block's elements 0..15 then 16..31: [qs_b | qs_b | qs_b+1 | qs_b+1]
// in 128-bit lanes, low nibbles kept in lanes 0 and 2, high in 1 and 3.
template <class Block, bool kSingle>
__m512i nibble_codes(const Block* blocks, int64_t b) {
  const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[b].qs));
  const __m128i second =
      kSingle ? _mm_setzero_si128() : _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[b + 1].qs));
  const __m512i both = _mm512_castsi256_si512(_mm256_set_m128i(second, first));
  const __m512i spread = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3), both);
  const __m512i shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0,
                                           0x0004000400040004, 0x0004000400040004);
  return _mm512_and_si512(_mm512_srlv_epi16(spread, shifts), _mm512_set1_epi8(0x0F));
}

// Bit 4 of the 5-bit codes of blocks b and b + 1 (qh bit j: element j).
template <class Block, bool kSingle>
__m512i q5_high_bits(const Block* blocks, int64_t b) {
  uint32_t first, second = 0;
  std::memcpy(&first, blocks[b].qh, sizeof(first));
  if (!kSingle) std::memcpy(&second, blocks[b + 1].qh, sizeof(second));
  return _mm512_maskz_mov_epi8(first | (uint64_t{second} << 32), _mm512_set1_epi8(0x10));
}

struct Q4_0Weights {
  using Block = BlockQ4_0;
  static constexpr bool kHasMin = false;
  static constexpr int kOffsetShift = 3;  // codes offset by 8
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    return nibble_codes<Block, kSingle>(blocks, b);
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

struct Q5_0Weights {
  using Block = BlockQ5_0;
  static constexpr bool kHasMin = false;
  static constexpr int kOffsetShift = 4;  // codes offset by 16
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    return _mm512_or_si512(nibble_codes<Block, kSingle>(blocks, b), q5_high_bits<Block, kSingle>(blocks, b));
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

// x = d q + m: the dot of the codes (no offset) plus m d_a times the
// activation's sums (tile_step's kHasMin term).
struct Q4_1Weights {
  using Block = BlockQ4_1;
  static constexpr bool kHasMin = true;
  static constexpr int kOffsetShift = -1;  // no offset
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    return nibble_codes<Block, kSingle>(blocks, b);
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
  static float min(const Block& block) { return _cvtsh_ss(block.m); }
};

struct Q5_1Weights {
  using Block = BlockQ5_1;
  static constexpr bool kHasMin = true;
  static constexpr int kOffsetShift = -1;
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    return _mm512_or_si512(nibble_codes<Block, kSingle>(blocks, b), q5_high_bits<Block, kSingle>(blocks, b));
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
  static float min(const Block& block) { return _cvtsh_ss(block.m); }
};

struct Mxfp4Weights {
  using Block = BlockMxfp4;
  static constexpr bool kHasMin = false;
  static constexpr int kOffsetShift = 7;  // values offset by 128
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    // kMxfp4Values + 128 (block_types.h), in every 128-bit lane.
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_setr_epi8(static_cast<char>(128), static_cast<char>(129), static_cast<char>(130),
                      static_cast<char>(131), static_cast<char>(132), static_cast<char>(134),
                      static_cast<char>(136), static_cast<char>(140), static_cast<char>(128), 127, 126,
                      125, 124, 122, 120, 116));
    return _mm512_shuffle_epi8(table, nibble_codes<Block, kSingle>(blocks, b));
  }
  // 2^(e - 128) (tensor/mxfp4.h's e8m0_to_f32_half, kept local to this
  // translation unit's instruction set).
  static float scale(const Block& block) {
    const uint32_t bits = block.e < 2 ? 0x00200000u << block.e : static_cast<uint32_t>(block.e - 1) << 23;
    float out;
    std::memcpy(&out, &bits, sizeof(out));
    return out;
  }
};

struct Iq4NlWeights {
  using Block = BlockIq4Nl;
  static constexpr bool kHasMin = false;
  static constexpr int kOffsetShift = 7;  // values offset by 128
  template <bool kSingle>
  static __m512i decode(const Block* blocks, int64_t b) {
    // kIq4Values + 128 (block_types.h), in every 128-bit lane.
    const __m512i table = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, static_cast<char>(129),
                                                               static_cast<char>(141), static_cast<char>(153),
                                                               static_cast<char>(166), static_cast<char>(181),
                                                               static_cast<char>(197), static_cast<char>(217),
                                                               static_cast<char>(241)));
    return _mm512_shuffle_epi8(table, nibble_codes<Block, kSingle>(blocks, b));
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

template <class W, int R, int C, bool kSingle>
void tile_step(const typename W::Block* const (&w)[C], const uint8_t* const (&a)[R],
               int64_t num_blocks, int64_t b, __m512 (&acc)[R][C]) {
  __m512i wq[C];
  __m512 wscale[C];
  __m512 wmin[C];  // kHasMin only
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
    const char* ahead = reinterpret_cast<const char*>(w[c] + b) + kPrefetchBytes;
    _mm_prefetch(ahead, _MM_HINT_T0);
    if (sizeof(typename W::Block) * 2 > 64) _mm_prefetch(ahead + 64, _MM_HINT_T0);
    wq[c] = W::template decode<kSingle>(w[c], b);
    wscale[c] = pair_splat(W::scale(w[c][b]), kSingle ? 0.0f : W::scale(w[c][b + 1]));
    if constexpr (W::kHasMin) wmin[c] = pair_splat(W::min(w[c][b]), kSingle ? 0.0f : W::min(w[c][b + 1]));
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const ActPair ap = load_act_pair<kSingle>(a[r], num_blocks, b);
    __m512i bias = _mm512_setzero_si512();
    if constexpr (W::kOffsetShift >= 0) bias = _mm512_sub_epi32(bias, _mm512_slli_epi32(ap.lane_sums, W::kOffsetShift));
    __m512 sums = _mm512_setzero_ps();  // kHasMin only: the lane sums, once per row
    if constexpr (W::kHasMin) sums = _mm512_cvtepi32_ps(ap.lane_sums);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m512i dot = _mm512_dpbusd_epi32(bias, wq[c], ap.q);
      const __m512 scale = _mm512_mul_ps(wscale[c], ap.scale);
      acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[r][c]);
      if constexpr (W::kHasMin) acc[r][c] = _mm512_fmadd_ps(sums, _mm512_mul_ps(wmin[c], ap.scale), acc[r][c]);
    }
  }
}

template <class W, int R, int C>
void quant_tile(const MatmulTask& t, int64_t i0, int64_t n0) {
  using Block = typename W::Block;
  const int64_t num_blocks = t.cols / kQk;
  const Block* w[C];
  const uint8_t* a[R];
  for (int c = 0; c < C; ++c) {
    w[c] = reinterpret_cast<const Block*>(t.weights + static_cast<size_t>(n0 + c) * t.weight_row_bytes);
  }
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  int64_t b = 0;
  for (; b + 2 <= num_blocks; b += 2) tile_step<W, R, C, false>(w, a, num_blocks, b, acc);
  if (b < num_blocks) tile_step<W, R, C, true>(w, a, num_blocks, b, acc);
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = _mm512_reduce_add_ps(acc[r][c]);
  }
}

constexpr int kRows = 4;
constexpr int kCols = 4;

#define MET_TILE_ROW(W, R) \
  quant_tile<W, R, 1>, quant_tile<W, R, 2>, quant_tile<W, R, 3>, quant_tile<W, R, 4>
#define MET_QUANT_TILES(W) \
  { MET_TILE_ROW(W, 1), MET_TILE_ROW(W, 2), MET_TILE_ROW(W, 3), MET_TILE_ROW(W, 4) }

constexpr TileFn kQ8_0Tiles[] = MET_QUANT_TILES(Q8_0Weights);
constexpr TileFn kQ4_0Tiles[] = MET_QUANT_TILES(Q4_0Weights);
constexpr TileFn kMxfp4Tiles[] = MET_QUANT_TILES(Mxfp4Weights);
constexpr TileFn kIq4NlTiles[] = MET_QUANT_TILES(Iq4NlWeights);
constexpr TileFn kQ5_0Tiles[] = MET_QUANT_TILES(Q5_0Weights);
constexpr TileFn kQ4_1Tiles[] = MET_QUANT_TILES(Q4_1Weights);
constexpr TileFn kQ5_1Tiles[] = MET_QUANT_TILES(Q5_1Weights);
#undef MET_QUANT_TILES
#undef MET_TILE_ROW

}  // namespace

void matmul_q8_0(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ8_0Tiles}); }
void matmul_q4_0(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ4_0Tiles}); }
void matmul_mxfp4(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kMxfp4Tiles}); }
void matmul_iq4_nl(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kIq4NlTiles}); }
void matmul_q5_0(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ5_0Tiles}); }
void matmul_q4_1(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ4_1Tiles}); }
void matmul_q5_1(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ5_1Tiles}); }

}  // namespace met::cpu::avx512
