// AVX-512 matmul kernels for Q4_K, Q5_K, Q6_K and IQ4_XS weights against Q8_K activations,
// and the AVX-512 Q8_K activation quantizer (bit for bit src/tensor's
// reference). A super-block is four 64-element vectors: vpmaddubsw of the
// unsigned weight codes (0..15, 0..31 for Q5_K, or 0..63 for Q6_K, so pairs stay below 2^15)
// with the activation codes, then vpdpwssd against the group scales spread
// over int16 lanes, exact in int32 lanes. One float step per super-block
// follows the reference's formula: d_a d_w * I - d_a dmin * M for Q4_K and Q5_K (M from
// the activation's 16-element sums against the mins), d_a d_w * (I - 32 S)
// for Q6_K (S the same sums against the scales). IQ4_XS's signed values
// (vpshufb of its codes) go in as |v| with v's sign moved onto the
// activation (pairs below 2 * 127 * 128), then d_a d_w * I.
// Tiles of up to 4 activation rows x 4 weight rows; each weight super-block is
// decoded once per tile column and used for every row.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

// Index vectors for vpermw: lane j of vector k takes element table[k][j].
__m512i spread_index(int k, int lanes_per_value, int values_per_vector) {
  alignas(64) int16_t idx[32];
  for (int j = 0; j < 32; ++j) idx[j] = static_cast<int16_t>(values_per_vector * k + j / lanes_per_value);
  return _mm512_load_si512(idx);
}

struct Q4_KDecoded {
  __m512i codes[4];    // elements 64k .. 64k+63, codes 0..15
  __m512i scale16[4];  // sub-blocks 2k, 2k+1: scales in int16 lanes 0-15, 16-31
  __m256i mins_pairs;  // m0 m0 m1 m1 .. m7 m7 as int16
  float d, dmin;
};

// The codes' low 4 bits, the scales and mins of a Q4_K or Q5_K block.
template <class Block>
[[gnu::always_inline]] inline Q4_KDecoded decode_q4_k(const Block& block,
                                                    const __m512i (&scale_index)[4]) {
  Q4_KDecoded out;
  const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  for (int k = 0; k < 4; ++k) {
    // Chunk k's low nibbles are sub-block 2k, its high nibbles 2k + 1.
    const __m512i packed = _mm512_broadcast_i64x4(load256(block.qs + 32 * k));
    out.codes[k] = _mm512_and_si512(_mm512_srlv_epi16(packed, shifts), low_mask);
  }
  // The 6-bit scales and mins (k_scales.h), unpacked four at a time.
  const uint32_t u0 = load_u32(block.scales), u1 = load_u32(block.scales + 4);
  const uint32_t u2 = load_u32(block.scales + 8);
  const uint32_t scales_lo = u0 & 0x3F3F3F3Fu;
  const uint32_t scales_hi = (u2 & 0x0F0F0F0Fu) | (((u0 >> 6) & 0x03030303u) << 4);
  const uint32_t mins_lo = u1 & 0x3F3F3F3Fu;
  const uint32_t mins_hi = ((u2 >> 4) & 0x0F0F0F0Fu) | (((u1 >> 6) & 0x03030303u) << 4);
  const __m128i packed = _mm_setr_epi32(static_cast<int>(scales_lo), static_cast<int>(scales_hi),
                                        static_cast<int>(mins_lo), static_cast<int>(mins_hi));
  const __m256i wide = _mm256_cvtepu8_epi16(packed);  // scales in lanes 0-7, mins in 8-15
  const __m512i scales = _mm512_castsi256_si512(wide);
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  const __m256i mins_index =
      _mm256_setr_epi16(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  out.mins_pairs = _mm256_permutexvar_epi16(mins_index, wide);
  out.d = _cvtsh_ss(block.d);
  out.dmin = _cvtsh_ss(block.dmin);
  return out;
}

// Q4_K's decoding plus the fifth bit: element 64k + l takes bit 2k of qh[l],
// element 64k + 32 + l bit 2k + 1, as bit 4 of its code (0..31).
[[gnu::always_inline]] inline Q4_KDecoded decode_q5_k(const BlockQ5_K& block,
                                                    const __m512i (&scale_index)[4]) {
  Q4_KDecoded out = decode_q4_k(block, scale_index);
  const __m512i qh = _mm512_broadcast_i64x4(load256(block.qh));
  const __m512i bit4 = _mm512_set1_epi8(0x10);
  const auto per_half = [](int low, int high) {  // int16 lanes: `low` in the lower 256 bits
    const auto lanes = [](int v) { return static_cast<int16_t>(v); };
    return _mm512_inserti64x4(_mm512_set1_epi16(lanes(low)), _mm256_set1_epi16(lanes(high)), 1);
  };
  for (int k = 0; k < 4; ++k) {
    // Bit b of each byte to bit 4: 16-bit shifts of 4 - b (left) or b - 4
    // (right) move no neighbouring byte's bit into bit 4.
    const int b0 = 2 * k, b1 = 2 * k + 1;
    const __m512i left = per_half(b0 <= 4 ? 4 - b0 : 0, b1 <= 4 ? 4 - b1 : 0);
    const __m512i right = per_half(b0 > 4 ? b0 - 4 : 0, b1 > 4 ? b1 - 4 : 0);
    const __m512i high = _mm512_and_si512(_mm512_srlv_epi16(_mm512_sllv_epi16(qh, left), right), bit4);
    out.codes[k] = _mm512_or_si512(out.codes[k], high);
  }
  return out;
}

__m512 q4_k_term(const Q4_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i pairs = _mm512_maddubs_epi16(w.codes[k], _mm512_loadu_si512(a.qs + 64 * k));
    isum = _mm512_dpwssd_epi32(isum, pairs, w.scale16[k]);
  }
  const __m256i mins = _mm256_madd_epi16(load256(a.bsums), w.mins_pairs);
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(a.d * w.d), acc);
  return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_zextsi256_si512(mins)),
                          _mm512_set1_ps(a.d * w.dmin), acc);
}

struct Q6_KDecoded {
  __m512i codes[4];    // elements 64k .. 64k+63, codes 0..63
  __m512i scale16[4];  // groups 4k .. 4k+3: scales in int16 lanes of 8
  __m256i scales_i16;  // the 16 scales as int16, for the offset term
  float d;
};

[[gnu::always_inline]] inline Q6_KDecoded decode_q6_k(const BlockQ6_K& block,
                                                    const __m512i (&scale_index)[4]) {
  Q6_KDecoded out;
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  const __m512i high_mask = _mm512_set1_epi8(0x30);
  // Element l + 32j of a half takes bits 2j, 2j+1 of qh[l] as bits 4, 5.
  const __m512i shift_up = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i shift_down = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  for (int half = 0; half < 2; ++half) {
    const __m512i ql = _mm512_loadu_si512(block.ql + 64 * half);
    const __m512i qh = _mm512_broadcast_i64x4(load256(block.qh + 32 * half));
    const __m512i h01 = _mm512_and_si512(_mm512_sllv_epi16(qh, shift_up), high_mask);
    const __m512i h23 = _mm512_and_si512(_mm512_srlv_epi16(qh, shift_down), high_mask);
    out.codes[2 * half] = _mm512_or_si512(_mm512_and_si512(ql, low_mask), h01);
    out.codes[2 * half + 1] =
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low_mask), h23);
  }
  out.scales_i16 =
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
  const __m512i scales = _mm512_castsi256_si512(out.scales_i16);
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  out.d = _cvtsh_ss(block.d);
  return out;
}

__m512 q6_k_term(const Q6_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i pairs = _mm512_maddubs_epi16(w.codes[k], _mm512_loadu_si512(a.qs + 64 * k));
    isum = _mm512_dpwssd_epi32(isum, pairs, w.scale16[k]);
  }
  const __m256i offset = _mm256_madd_epi16(load256(a.bsums), w.scales_i16);
  isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(_mm256_slli_epi32(offset, 5)));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(a.d * w.d), acc);
}

struct Iq4XsDecoded {
  __m512i magnitude[4];  // elements 64k .. 64k+63: |kIq4Values[q]|
  __mmask64 negative[4];  // the elements whose value is negative
  __m512i scale16[4];    // groups 2k, 2k+1: ls - 32 in int16 lanes 0-15, 16-31
  float d;
};

// The eight 6-bit group scales of an IQ4_XS block minus 32, as int16.
__m128i iq4_xs_scales(const BlockIq4Xs& block) {
  const uint32_t low = load_u32(block.scales_l);
  const uint64_t nibbles = _pdep_u64(low, 0x0F0F0F0F0F0F0F0Full);        // ls & 15 of group g in byte g
  const uint64_t high = _pdep_u64(block.scales_h, 0x0303030303030303ull);  // ls >> 4 of group g in byte g
  const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(nibbles | (high << 4)));
  return _mm_sub_epi16(_mm_cvtepu8_epi16(bytes), _mm_set1_epi16(32));
}

[[gnu::always_inline]] inline Iq4XsDecoded decode_iq4_xs(const BlockIq4Xs& block, const __m512i (&scale_index)[4]) {
  Iq4XsDecoded out;
  // Group 2k's 16 bytes then group 2k+1's, each as [low nibbles | high nibbles].
  const __m512i spread_index = _mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3);
  const __m512i shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0,
                                           0x0004000400040004, 0x0004000400040004);
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
  for (int k = 0; k < 4; ++k) {
    const __m512i packed = _mm512_castsi256_si512(load256(block.qs + 32 * k));
    const __m512i spread = _mm512_permutexvar_epi64(spread_index, packed);
    const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(spread, shifts), _mm512_set1_epi8(0x0F));
    const __m512i values = _mm512_shuffle_epi8(table, codes);
    out.negative[k] = _mm512_movepi8_mask(values);
    out.magnitude[k] = _mm512_abs_epi8(values);
  }
  const __m512i scales = _mm512_castsi128_si512(iq4_xs_scales(block));
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  out.d = _cvtsh_ss(block.d);
  return out;
}

// d_a * d * sum_g (ls_g - 32) * sum |v| * (a with v's sign), in lanes.
__m512 iq4_xs_term(const Iq4XsDecoded& w, const BlockQ8_K& a, __m512 acc) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i act = _mm512_loadu_si512(a.qs + 64 * k);
    const __m512i signed_act = _mm512_mask_sub_epi8(act, w.negative[k], _mm512_setzero_si512(), act);
    const __m512i pairs = _mm512_maddubs_epi16(w.magnitude[k], signed_act);
    isum = _mm512_dpwssd_epi32(isum, pairs, w.scale16[k]);
  }
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(a.d * w.d), acc);
}

struct Q4_KWeights {
  using Block = BlockQ4_K;
  static constexpr int kLanesPerScale = 16;  // sub-blocks of 32 = 16 int16 pairs
  static Q4_KDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q4_k(b, idx); }
  static __m512 term(const Q4_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return q4_k_term(w, a, acc);
  }
};
struct Q5_KWeights {
  using Block = BlockQ5_K;
  static constexpr int kLanesPerScale = 16;
  static Q4_KDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q5_k(b, idx); }
  static __m512 term(const Q4_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return q4_k_term(w, a, acc);
  }
};
struct Iq4XsWeights {
  using Block = BlockIq4Xs;
  static constexpr int kLanesPerScale = 16;  // groups of 32 = 16 int16 pairs
  static Iq4XsDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_iq4_xs(b, idx); }
  static __m512 term(const Iq4XsDecoded& w, const BlockQ8_K& a, __m512 acc) { return iq4_xs_term(w, a, acc); }
};
struct Q6_KWeights {
  using Block = BlockQ6_K;
  static constexpr int kLanesPerScale = 8;  // groups of 16 = 8 int16 pairs
  static Q6_KDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q6_k(b, idx); }
  static __m512 term(const Q6_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return q6_k_term(w, a, acc);
  }
};

template <class W, int R, int C>
void kquant_tile(const MatmulTask& t, int64_t i0, int64_t n0) {
  using Block = typename W::Block;
  const int64_t num_blocks = t.cols / kQkK;
  const Block* w[C];
  const BlockQ8_K* a[R];
  for (int c = 0; c < C; ++c) {
    w[c] = reinterpret_cast<const Block*>(t.weights + static_cast<size_t>(n0 + c) * t.weight_row_bytes);
  }
  for (int r = 0; r < R; ++r) {
    a[r] = reinterpret_cast<const BlockQ8_K*>(t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes);
  }
  __m512i scale_index[4];
  for (int k = 0; k < 4; ++k) {
    scale_index[k] = spread_index(k, W::kLanesPerScale, 32 / W::kLanesPerScale);
  }
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const char* ahead = reinterpret_cast<const char*>(w[c] + b) + kPrefetchBytes;
      for (size_t off = 0; off < sizeof(Block); off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
      const auto decoded = W::decode(w[c][b], scale_index);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][c] = W::term(decoded, a[r][b], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = _mm512_reduce_add_ps(acc[r][c]);
  }
}

constexpr int kRows = 4;
constexpr int kCols = 4;

#define MET_TILE_ROW(W, R) \
  kquant_tile<W, R, 1>, kquant_tile<W, R, 2>, kquant_tile<W, R, 3>, kquant_tile<W, R, 4>
#define MET_KQUANT_TILES(W) \
  { MET_TILE_ROW(W, 1), MET_TILE_ROW(W, 2), MET_TILE_ROW(W, 3), MET_TILE_ROW(W, 4) }

constexpr TileFn kQ4_KTiles[] = MET_KQUANT_TILES(Q4_KWeights);
constexpr TileFn kQ5_KTiles[] = MET_KQUANT_TILES(Q5_KWeights);
constexpr TileFn kQ6_KTiles[] = MET_KQUANT_TILES(Q6_KWeights);
constexpr TileFn kIq4XsTiles[] = MET_KQUANT_TILES(Iq4XsWeights);
#undef MET_KQUANT_TILES
#undef MET_TILE_ROW

}  // namespace

void matmul_q4_k(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ4_KTiles}); }
void matmul_q5_k(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ5_KTiles}); }
void matmul_q6_k(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kQ6_KTiles}); }
void matmul_iq4_xs(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kIq4XsTiles}); }

void prepare_q8_k(const float* x, int64_t cols, uint8_t* out) {
  auto* blocks = reinterpret_cast<BlockQ8_K*>(out);
  for (int64_t b = 0; b < cols / kQkK; ++b, x += kQkK) {
    __m512 amax = _mm512_setzero_ps();
    for (int j = 0; j < kQkK; j += 16) {
      // max(|x|, acc) keeps acc where |x| is NaN, as the reference does.
      amax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), amax);
    }
    const float d = _mm512_reduce_max_ps(amax) / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_K& block = blocks[b];
    block.d = d;
    const __m512 scale = _mm512_set1_ps(inverse);
    const __m512 low = _mm512_set1_ps(-127.0f), high = _mm512_set1_ps(127.0f);
    for (int g = 0; g < kQkK / 16; ++g) {
      const __m512 s = _mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), scale);
      const __m512i q = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(s, low), high));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(block.qs + 16 * g), _mm512_cvtsepi32_epi8(q));
      block.bsums[g] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
    }
  }
}

}  // namespace met::cpu::avx512
