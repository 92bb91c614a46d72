// AVX2 matmul kernels for Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, MXFP4 and IQ4_NL weights
// against ActQ8_0
// activations (matmul_kernels.h). Per 32-element block: vpmaddubsw (u8 x s8 ->
// s16 pairs) and vpmaddwd against ones give 8 exact int32 partial dots, scaled
// in float by d_w * d_a and accumulated with FMA; lanes are summed at the end.
// Q8_0 uses |w| and sign(a, w) to make the unsigned operand (pairs stay below
// 2 * 128 * 127, so vpmaddubsw never saturates), and so does MXFP4 on its
// codes' doubled E2M1 values (|w| <= 12, looked up with vpshufb; offset to
// unsigned, pairs of 2 * 140 * 128 would saturate) and IQ4_NL on its values
// (|w| <= 127, looked up the same way); Q4_0 uses its raw codes 0..15
// and subtracts 8 * (the lane's 4 activation codes) from each lane, from the
// activation row's lane sums (Q5_0: its codes 0..31 and 16 times them), so
// every lane holds an exact signed partial dot and float rounding stays
// relative to sum |w a|; Q4_1 and Q5_1 dot their raw codes and add m_w d_a
// times the lane sums in float.
// Tiles of up to 2 activation rows x 4 weight rows.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {
namespace {

float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// One activation row's view of block b.
struct ActBlock {
  __m256i q;                // 32 codes
  __m256 scale;             // d_a in every lane
  const uint8_t* lane_sums;  // 8 int16: sums of codes 4l .. 4l+3
};

ActBlock load_act(const uint8_t* row, int64_t num_blocks, int64_t b) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(row);
  const uint8_t* sums = row + num_blocks * sizeof(BlockQ8_0) + 16 * b;
  return {load256(blocks[b].qs), _mm256_set1_ps(_cvtsh_ss(blocks[b].d)), sums};
}

// Weight block decoders: the unsigned operand for vpmaddubsw, the signed
// activation operand to pair with it, and a per-lane int32 correction.
struct Q8_0Weights {
  static constexpr bool kHasMin = false;
  using Block = BlockQ8_0;
  struct Decoded {
    __m256i magnitude;  // |w|
    __m256i sign;       // w, to transfer its sign to a
  };
  static Decoded decode(const Block& block) {
    const __m256i w = load256(block.qs);
    return {_mm256_sign_epi8(w, w), w};
  }
  static __m256i dot(const Decoded& w, const ActBlock& a) {
    const __m256i pairs = _mm256_maddubs_epi16(w.magnitude, _mm256_sign_epi8(a.q, w.sign));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  }
  static __m256i lane_bias(const ActBlock&) { return _mm256_setzero_si256(); }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

// The 4-bit codes of a Q4_0 or MXFP4 block: elements 0..15 then 16..31.
__m256i nibble_codes(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i low = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
  return _mm256_set_m128i(high, low);
}

struct Mxfp4Weights {
  static constexpr bool kHasMin = false;
  using Block = BlockMxfp4;
  using Decoded = Q8_0Weights::Decoded;
  static Decoded decode(const Block& block) {
    // kMxfp4Values (block_types.h) in both 128-bit lanes.
    const __m256i table = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, 0, 1, 2,
                                           3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const __m256i w = _mm256_shuffle_epi8(table, nibble_codes(block.qs));
    return {_mm256_sign_epi8(w, w), w};
  }
  static __m256i dot(const Decoded& w, const ActBlock& a) { return Q8_0Weights::dot(w, a); }
  static __m256i lane_bias(const ActBlock&) { return _mm256_setzero_si256(); }
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
  static constexpr bool kHasMin = false;
  using Block = BlockIq4Nl;
  using Decoded = Q8_0Weights::Decoded;
  static Decoded decode(const Block& block) {
    // kIq4Values (block_types.h) in both 128-bit lanes.
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    const __m256i w = _mm256_shuffle_epi8(table, nibble_codes(block.qs));
    return {_mm256_sign_epi8(w, w), w};
  }
  static __m256i dot(const Decoded& w, const ActBlock& a) { return Q8_0Weights::dot(w, a); }
  static __m256i lane_bias(const ActBlock&) { return _mm256_setzero_si256(); }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

struct Q4_0Weights {
  static constexpr bool kHasMin = false;
  using Block = BlockQ4_0;
  struct Decoded {
    __m256i codes;  // 0..15: elements 0..15 then 16..31
  };
  static Decoded decode(const Block& block) { return {nibble_codes(block.qs)}; }
  static __m256i dot(const Decoded& w, const ActBlock& a) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w.codes, a.q), _mm256_set1_epi16(1));
  }
  // sum (q - 8) a = sum q a - 8 sum a, lane by lane.
  static __m256i lane_bias(const ActBlock& a) {
    const __m128i sums = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.lane_sums));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_cvtepi16_epi32(sums), 3));
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

// Bit 4 of a Q5 block's 32 codes (qh bit j: element j) as 0x10 bytes: byte j
// takes byte j / 8 of qh, all bits but j % 8 are set, and it is all ones
// exactly when that bit was set too.
__m256i q5_high_bits(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)),
                                             _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                                0x0303030303030303));
  const __m256i others = _mm256_set1_epi64x(0x7FBFDFEFF7FBFDFE);
  const __m256i set = _mm256_cmpeq_epi8(_mm256_or_si256(spread, others), _mm256_set1_epi8(-1));
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Unsigned codes against signed activations, no offset.
__m256i unsigned_dot(__m256i codes, const ActBlock& a) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(codes, a.q), _mm256_set1_epi16(1));
}

__m256i lane_sums_i32(const ActBlock& a) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.lane_sums)));
}

struct Q5_0Weights {
  using Block = BlockQ5_0;
  static constexpr bool kHasMin = false;
  struct Decoded {
    __m256i codes;  // 0..31
  };
  static Decoded decode(const Block& block) {
    return {_mm256_or_si256(nibble_codes(block.qs), q5_high_bits(block.qh))};
  }
  static __m256i dot(const Decoded& w, const ActBlock& a) { return unsigned_dot(w.codes, a); }
  // sum (q - 16) a = sum q a - 16 sum a, lane by lane.
  static __m256i lane_bias(const ActBlock& a) {
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(lane_sums_i32(a), 4));
  }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
};

// x = d q + m: the codes' dot, plus m d_a times the activation's lane sums
// (quant_tile's kHasMin term).
template <class B, bool kFive>
struct WithMinWeights {
  using Block = B;
  static constexpr bool kHasMin = true;
  struct Decoded {
    __m256i codes;
  };
  static Decoded decode(const Block& block) {
    if constexpr (kFive) return {_mm256_or_si256(nibble_codes(block.qs), q5_high_bits(block.qh))};
    return {nibble_codes(block.qs)};
  }
  static __m256i dot(const Decoded& w, const ActBlock& a) { return unsigned_dot(w.codes, a); }
  static __m256i lane_bias(const ActBlock&) { return _mm256_setzero_si256(); }
  static float scale(const Block& block) { return _cvtsh_ss(block.d); }
  static float min(const Block& block) { return _cvtsh_ss(block.m); }
};
using Q4_1Weights = WithMinWeights<BlockQ4_1, false>;
using Q5_1Weights = WithMinWeights<BlockQ5_1, true>;

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
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    typename W::Decoded wd[C];
    __m256 wscale[C];
    __m256 wmin[C];  // kHasMin only
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      _mm_prefetch(reinterpret_cast<const char*>(w[c] + b) + kPrefetchBytes, _MM_HINT_T0);
      wd[c] = W::decode(w[c][b]);
      wscale[c] = _mm256_set1_ps(W::scale(w[c][b]));
      if constexpr (W::kHasMin) wmin[c] = _mm256_set1_ps(W::min(w[c][b]));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const ActBlock ab = load_act(a[r], num_blocks, b);
      const __m256i bias = W::lane_bias(ab);
      __m256 sums = _mm256_setzero_ps();  // kHasMin only: the lane sums, once per row
      if constexpr (W::kHasMin) sums = _mm256_cvtepi32_ps(lane_sums_i32(ab));
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        const __m256i dot = _mm256_add_epi32(W::dot(wd[c], ab), bias);
        const __m256 scale = _mm256_mul_ps(wscale[c], ab.scale);
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[r][c]);
        if constexpr (W::kHasMin) acc[r][c] = _mm256_fmadd_ps(sums, _mm256_mul_ps(wmin[c], ab.scale), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = hsum(acc[r][c]);
  }
}

constexpr int kRows = 2;
constexpr int kCols = 4;

#define MET_QUANT_TILES(W)                                                              \
  {                                                                                     \
    quant_tile<W, 1, 1>, quant_tile<W, 1, 2>, quant_tile<W, 1, 3>, quant_tile<W, 1, 4>, \
        quant_tile<W, 2, 1>, quant_tile<W, 2, 2>, quant_tile<W, 2, 3>,                  \
        quant_tile<W, 2, 4>,                                                            \
  }

constexpr TileFn kQ8_0Tiles[] = MET_QUANT_TILES(Q8_0Weights);
constexpr TileFn kQ4_0Tiles[] = MET_QUANT_TILES(Q4_0Weights);
constexpr TileFn kMxfp4Tiles[] = MET_QUANT_TILES(Mxfp4Weights);
constexpr TileFn kIq4NlTiles[] = MET_QUANT_TILES(Iq4NlWeights);
constexpr TileFn kQ5_0Tiles[] = MET_QUANT_TILES(Q5_0Weights);
constexpr TileFn kQ4_1Tiles[] = MET_QUANT_TILES(Q4_1Weights);
constexpr TileFn kQ5_1Tiles[] = MET_QUANT_TILES(Q5_1Weights);
#undef MET_QUANT_TILES

}  // namespace

void matmul_q8_0(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ8_0Tiles}); }
void matmul_q4_0(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ4_0Tiles}); }
void matmul_mxfp4(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kMxfp4Tiles}); }
void matmul_iq4_nl(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kIq4NlTiles}); }
void matmul_q5_0(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ5_0Tiles}); }
void matmul_q4_1(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ4_1Tiles}); }
void matmul_q5_1(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ5_1Tiles}); }

}  // namespace met::cpu::avx2
