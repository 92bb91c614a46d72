// AVX-512 VNNI matmul for the packed K-quant layouts WeightLayout::kQ4_Kx16,
// kQ5_Kx16, kQ6_Kx16, kIq4XsX16, kQ3_Kx16 and kQ2_Kx16 (packed_weights.h) against Q8_K
// activations. Each aligned
// 64-byte load of a unit holds 4 bytes of each of the 16 rows of a group, so
// after a mask or shift it is the unsigned operand of one vpdpbusd whose 16
// int32 lanes are the 16 output rows, against 4 activation codes broadcast.
//   Q4_Kx16: per chunk of 64 inputs, 8 loads give 16 operands (low nibbles:
//     sub-block 2c, high: 2c + 1); per activation row two chains of 8
//     vpdpbusd, each sub-block's dot times its 16 scales (bytes widened with
//     one vpmovzxbd, vpmulld: exact in int32). The mins once a super-block:
//     vpdpwssd of (m_2c, m_2c+1) pairs against the activation's per-32 sums
//     (its per-16 sums added in pairs: the same integers). One float step
//     per super-block: d_a d * I - d_a dmin * M, as the reference.
//   Q5_Kx16: as Q4_Kx16, each operand's bit 4 merged in from a load of qh
//     (a shift and a vpternlogd).
//   Q6_Kx16: per half and pass of 32 inputs, 12 loads (ql, ql, qh) give 16
//     operands of 6-bit codes (vpternlogd merges each nibble with its two
//     high bits); per activation row four chains of 4 vpdpbusd (one per
//     group of 16), times the group's scale (vpmulld), and the offset of 32
//     as vpdpwssd of the scale pairs times -32 against the per-16 sums. One
//     float step per super-block: d_a d * I.
//   Iq4XsX16: per group of 32 inputs, 4 loads give 8 operands (low and high
//     nibbles) through one vpshufb of kIq4Values + 128; per activation row
//     two chains of 4 vpdpbusd, their sum times the group's 16 scales
//     (ls - 32, vpmulld), and the +128 taken back out as vpdpwssd of
//     (-128 (ls - 32)) pairs against the group's two per-16 sums. One float
//     step per super-block: d_a d * I.
//   Q3_Kx16: as Q6_Kx16, per half and pass 8 loads (qs, hmask) give 16
//     operands of 3-bit codes (a shift of qs, and the hmask bit shifted to
//     bit 2 and merged with a vpternlogd), the offset of 4 as vpdpwssd of
//     the scale pairs times -4 against the per-16 sums.
//   Q2_Kx16: as Q3_Kx16 without the hmask (4 loads of qs a pass), the
//     scales and mins the low and high nibbles of the group bytes' int16
//     pairs; the mins as vpdpwssd against the per-16 sums, one float step
//     per super-block: d_a d * I - d_a dmin * M.
// The operands are decoded once per tile of up to 4 activation rows, so a
// group is read from memory once for the whole tile; the first tile of a
// group prefetches kKx16PrefetchBytes ahead (a thread's share is one sequential
// stream of units). Past 4 rows Q4_Kx16 and Q5_Kx16 walk groups in pairs,
// tiles of up to 3 rows over both, so each broadcast serves two operands:
// cache-resident, 0.75 cycles a vpdpbusd against 0.91 for one group's tile
// of 4 (Q4_Kx16, Zen 5), as matmul_fx16_avx512.cc does for the float
// layouts. Outputs outside [n_begin, n_end) are masked off at the
// store. A row's arithmetic is the same whatever tile it lands in, so its
// outputs are bit-identical alone or in a batch.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/kquant_x16_layout.h"
#include "backend/cpu/kernels/group_walk_avx512.h"
#include "backend/cpu/kernels/kx16_decode_avx512.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kTileRows = 4;      // rows of a tile over one group
constexpr int kPairTileRows = 3;  // over two (ScaleMinX16)
constexpr size_t kActQs = sizeof(float);                  // BlockQ8_K::qs
constexpr size_t kActBsums = sizeof(float) + kQkK;        // BlockQ8_K::bsums

// How far ahead the first tile of a group prefetches: 6 KiB streamed 4-10%
// more than kPrefetchBytes (2 KiB, under one Q4_Kx16 unit) on Q4_Kx16 and
// Q6_Kx16 at 2 threads (1024 x 4096 copies, the two alternated every pass
// in one process, Zen 5); 10 KiB no more than 6.
constexpr size_t kKx16PrefetchBytes = 6144;

void prefetch_ahead(const uint8_t* unit, size_t unit_bytes) {
  for (size_t line = 0; line < unit_bytes; line += kx16::kLine) {
    _mm_prefetch(reinterpret_cast<const char*>(unit + kKx16PrefetchBytes + line), _MM_HINT_T0);
  }
}

// Chunk c (inputs 64c .. 64c + 63) of G units `group_bytes` apart (one per
// group) for R activation super-blocks `a`: isum[g][r] += the two
// sub-blocks' dots times their scales. Line by line, each operand serves
// the R rows and each broadcast the G groups.
template <class F, int R, int G>
[[gnu::always_inline]] inline void scale_min_chunk(const uint8_t* unit, size_t group_bytes, int c,
                                                   const uint8_t* const (&a)[R], __m512i (&isum)[G][R]) {
  __m512i dot_lo[G][R], dot_hi[G][R];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) dot_lo[g][r] = dot_hi[g][r] = _mm512_setzero_si512();
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    __m512i lo[G], hi[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) scale_min_line<F>(unit + g * group_bytes, c, j, lo[g], hi[g]);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* qs = a[r] + kActQs + 64 * static_cast<size_t>(c) + 4 * static_cast<size_t>(j);
      const __m512i x_lo = bcast32(qs), x_hi = bcast32(qs + 32);
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        dot_lo[g][r] = _mm512_dpbusd_epi32(dot_lo[g][r], lo[g], x_lo);
        dot_hi[g][r] = _mm512_dpbusd_epi32(dot_hi[g][r], hi[g], x_hi);
      }
    }
  }
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    const __m512i sc_lo = scale_min_bytes(unit + g * group_bytes, F::kScales, 2 * c);
    const __m512i sc_hi = scale_min_bytes(unit + g * group_bytes, F::kScales, 2 * c + 1);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      isum[g][r] = _mm512_add_epi32(isum[g][r], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo[g][r], sc_lo),
                                                                 _mm512_mullo_epi32(dot_hi[g][r], sc_hi)));
    }
  }
}

// Q4_Kx16 / Q5_Kx16, over G groups at once (G = 2: run_kx16_groups' pairs).
template <class F>
struct ScaleMinX16 {
  static constexpr size_t kUnitBytes = F::kUnitBytes;
  static constexpr bool kPairs = true;
  // acc[g][r] += row r's terms of the super-block at `unit` + g group_bytes.
  // The mins come last, once a super-block: per row the activation's per-32
  // sums as pairs, one vpdpwssd per two sub-blocks (the same integers as a
  // min times each per-16 sum).
  template <int R, int G>
  static void unit_step(const uint8_t* unit, size_t group_bytes, const uint8_t* const (&a)[R],
                        __m512 (&acc)[G][R]) {
    __m512i isum[G][R];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) isum[g][r] = _mm512_setzero_si512();
    }
#pragma GCC unroll 1
    for (int c = 0; c < 4; ++c) scale_min_chunk<F, R, G>(unit, group_bytes, c, a, isum);
    __m512i sums[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) sums[r] = sum32_pairs(reinterpret_cast<const int16_t*>(a[r] + kActBsums));
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const uint8_t* u = unit + g * group_bytes;
      __m512i msum[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) msum[r] = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m512i mins = min_pairs(u, F::kMins, c);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) msum[r] = _mm512_dpwssd_epi32(msum[r], mins, pair_lane(sums[r], c));
      }
      const __m512 d = load_ph16(u + F::kD), dmin = load_ph16(u + F::kDmin);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512 da = _mm512_set1_ps(load_f32(a[r]));
        acc[g][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[g][r]), _mm512_mul_ps(d, da), acc[g][r]);
        acc[g][r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[r]), _mm512_mul_ps(dmin, da), acc[g][r]);
      }
    }
  }
};

// isum[r] += sum over k < 4 of scales[k] x the dot of operands w[0 .. 3][k]
// with activation row r's codes at `offset` + 32k (four groups of 16
// inputs: the pass Q6_Kx16 and Q3_Kx16 share).
template <int R>
[[gnu::always_inline]] inline void scaled_group_dots(const __m512i (&w)[4][4], const __m512i (&scales)[4],
                                                     const uint8_t* const (&a)[R], size_t offset,
                                                     __m512i (&isum)[R]) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const uint8_t* qs = a[r] + kActQs + offset;
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      __m512i dot = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int jj = 0; jj < 4; ++jj) dot = _mm512_dpbusd_epi32(dot, w[jj][k], bcast32(qs + 32 * k + 4 * jj));
      isum[r] = _mm512_add_epi32(isum[r], _mm512_mullo_epi32(dot, scales[k]));
    }
  }
}

struct Q6_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ6_KUnitBytes;
  static constexpr bool kPairs = false;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      __m512i pairs[4];  // scales of groups 8h + 2k, 8h + 2k + 1 as int16 pairs
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const uint8_t* p = unit + kx16::kQ6_KScales + 32 * static_cast<size_t>(4 * h + k);
        pairs[k] = _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
        const __m512i offset = _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(pairs[k], 5));
        for (int r = 0; r < R; ++r) {
          const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * h + k);
          isum[r] = _mm512_dpwssd_epi32(isum[r], offset, bcast32(bsums));
        }
      }
      for (int q = 0; q < 2; ++q) q6_k_pass<R>(unit, h, q, pairs, a, isum);
    }
    const __m512 d = load_ph16(unit + kx16::kQ6_KD);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
    }
  }

  // Inputs 128h + 32k + 16q .. +15 (k < 4): groups 8h + 2k + q.
  template <int R>
  [[gnu::always_inline]] static void q6_k_pass(const uint8_t* unit, int h, int q, const __m512i (&pairs)[4],
                                               const uint8_t* const (&a)[R], __m512i (&isum)[R]) {
    __m512i w[4][4];
    q6_k_decode(unit, h, q, w);
    __m512i scales[4];
    for (int k = 0; k < 4; ++k) scales[k] = pair_scale(pairs[k], q);
    scaled_group_dots<R>(w, scales, a, 128 * static_cast<size_t>(h) + 16 * static_cast<size_t>(q), isum);
  }
};

struct Q3_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ3_KUnitBytes;
  static constexpr bool kPairs = false;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) q3_k_pass<R>(unit, n, q, a, isum);
    }
    const __m512 d = load_ph16(unit + kx16::kQ3_KD);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
    }
  }

  // Inputs 128n + 32j + 16q .. +15 (j < 4): groups 8n + 2j + q, with the
  // offset of 4 of groups 8n .. 8n + 7 on the first pass (q = 0). The
  // scales are read after the codes, so a unit is read front to back (this,
  // with the passes unrolled, measured 97-114 tok/s at batch 1 on the medium
  // Q3_K llama against 71-79 with each half's scales read first).
  template <int R>
  [[gnu::always_inline]] static void q3_k_pass(const uint8_t* unit, int n, int q, const uint8_t* const (&a)[R],
                                               __m512i (&isum)[R]) {
    __m512i w[4][4];
    q3_k_decode(unit, n, q, w);
    __m512i scales[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      // Scales of groups 8n + 2j, 8n + 2j + 1 as int16 pairs.
      const uint8_t* p = unit + kx16::kQ3_KScales + 32 * static_cast<size_t>(4 * n + j);
      const __m512i pairs = _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
      scales[j] = pair_scale(pairs, q);
      if (q != 0) continue;
      const __m512i offset = _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(pairs, 2));
      for (int r = 0; r < R; ++r) {
        const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * n + j);
        isum[r] = _mm512_dpwssd_epi32(isum[r], offset, bcast32(bsums));
      }
    }
    scaled_group_dots<R>(w, scales, a, 128 * static_cast<size_t>(n) + 16 * static_cast<size_t>(q), isum);
  }
};

struct Q2_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ2_KUnitBytes;
  static constexpr bool kPairs = false;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R], msum[R];
    for (int r = 0; r < R; ++r) isum[r] = msum[r] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) q2_k_pass<R>(unit, n, q, a, isum, msum);
    }
    const __m512 d = load_ph16(unit + kx16::kQ2_KD), dmin = load_ph16(unit + kx16::kQ2_KDmin);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
      acc[r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[r]), _mm512_mul_ps(dmin, da), acc[r]);
    }
  }

  // Inputs 128n + 32j + 16q .. +15 (j < 4): groups 8n + 2j + q, with the
  // mins of groups 8n .. 8n + 7 against the per-16 sums on the first pass.
  template <int R>
  [[gnu::always_inline]] static void q2_k_pass(const uint8_t* unit, int n, int q, const uint8_t* const (&a)[R],
                                               __m512i (&isum)[R], __m512i (&msum)[R]) {
    __m512i w[4][4];
    q2_k_decode(unit, n, q, w);
    __m512i scales[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512i bytes = q2_k_pairs(unit, n, j);
      scales[j] = pair_scale(_mm512_and_si512(bytes, _mm512_set1_epi16(0x0F)), q);
      if (q != 0) continue;
      const __m512i mins = _mm512_srli_epi16(bytes, 4);
      for (int r = 0; r < R; ++r) {
        const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * n + j);
        msum[r] = _mm512_dpwssd_epi32(msum[r], mins, bcast32(bsums));
      }
    }
    scaled_group_dots<R>(w, scales, a, 128 * static_cast<size_t>(n) + 16 * static_cast<size_t>(q), isum);
  }
};

struct Iq4XsX16 {
  static constexpr size_t kUnitBytes = kx16::kIq4XsUnitBytes;
  static constexpr bool kPairs = false;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int g = 0; g < 8; ++g) iq4_xs_group<R>(unit, g, a, isum);
    const __m512 d = load_ph16(unit + kx16::kIq4XsD);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
    }
  }

  // isum += group g's dots (inputs 32g .. 32g + 31) times its scales.
  template <int R>
  [[gnu::always_inline]] static void iq4_xs_group(const uint8_t* unit, int g, const uint8_t* const (&a)[R],
                                                  __m512i (&isum)[R]) {
    __m512i lo[4], hi[4];
    iq4_xs_decode(unit, g, lo, hi);
    const __m512i scale = iq4_xs_scale(unit, g);
    const __m512i pairs = iq4_xs_offset_pairs(scale);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* qs = a[r] + kActQs + 32 * static_cast<size_t>(g);
      __m512i dot_lo = _mm512_setzero_si512(), dot_hi = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        dot_lo = _mm512_dpbusd_epi32(dot_lo, lo[i], bcast32(qs + 4 * i));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, hi[i], bcast32(qs + 16 + 4 * i));
      }
      isum[r] = _mm512_add_epi32(isum[r], _mm512_mullo_epi32(_mm512_add_epi32(dot_lo, dot_hi), scale));
      const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(g);  // sums 2g, 2g + 1
      isum[r] = _mm512_dpwssd_epi32(isum[r], pairs, bcast32(bsums));
    }
  }
};

// y rows [i0, i0 + R), the walk's outputs; the tile is walk `index` of
// `walks` over these groups (next_group_share).
template <class L, int R, int G>
void kx16_tile(const MatmulTask& t, int64_t i0, const Walk<G>& walk, int64_t walks, int64_t index) {
  static_assert(G == 1 || L::kPairs, "only a layout with kPairs walks two groups");
  const int64_t num_blocks = t.cols / kQkK;
  const size_t group_bytes = t.weight_row_bytes;
  const uint8_t* a[R];
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m512 acc[G][R];
  for (int g = 0; g < G; ++g) {
    for (int r = 0; r < R; ++r) acc[g][r] = _mm512_setzero_ps();
  }
  NextGroupShare share[G];
  for (int g = 0; g < G; ++g) {  // the next walk's group g, G groups on
    share[g] = next_group_share(walks, index, walk.group + (G - 1 + g) * group_bytes, group_bytes,
                                walk.n0 + (G + g) * kx16::kRows < t.n_end);
  }
  const uint8_t* unit = walk.group;
  for (int64_t b = 0; b < num_blocks; ++b, unit += L::kUnitBytes) {
    for (int g = 0; g < G; ++g) {
      prefetch_share(share[g], b, static_cast<size_t>(unit - walk.group), L::kUnitBytes);
      if (i0 == 0) prefetch_ahead(unit + g * group_bytes, L::kUnitBytes);
    }
    if constexpr (L::kPairs) {
      L::template unit_step<R, G>(unit, group_bytes, a, acc);
    } else {
      L::template unit_step<R>(unit, a, acc[0]);
    }
    for (int r = 0; r < R; ++r) a[r] += sizeof(BlockQ8_K);
  }
  for (int g = 0; g < G; ++g) {
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + walk.n0 + g * kx16::kRows, walk.masks[g], acc[g][r]);
    }
  }
}

// The row tiles of a walk over G groups: up to kTileRows rows over one
// group, kPairTileRows over two.
template <class L, int G>
void walk_rows(const MatmulTask& t, const Walk<G>& walk) {
  constexpr int kRows = G == 1 ? kTileRows : kPairTileRows;
  const int64_t walks = (t.m + kRows - 1) / kRows;
  for (int64_t i0 = 0; i0 < t.m; i0 += kRows) {
    switch (t.m - i0 < kRows ? t.m - i0 : kRows) {
      case 1: kx16_tile<L, 1, G>(t, i0, walk, walks, i0 / kRows); break;
      case 2: kx16_tile<L, 2, G>(t, i0, walk, walks, i0 / kRows); break;
      case 3: kx16_tile<L, 3, G>(t, i0, walk, walks, i0 / kRows); break;
      default:
        if constexpr (kRows >= 4) kx16_tile<L, 4, G>(t, i0, walk, walks, i0 / kRows);
        break;
    }
  }
}

// Every group overlapping [n_begin, n_end), front to back: for a layout
// that walks pairs (L::kPairs), two at a time where one group's tiles would
// walk it more than once (m > kTileRows: a batch, whose vpdpbusd wait on
// loads), else one by one, each read once.
template <class L>
void run_kx16_groups(const MatmulTask& t) {
  walk_groups<L::kPairs>(t, t.m > kTileRows, [&](const auto& walk) { walk_rows<L>(t, walk); });
}

}  // namespace

void matmul_q4_kx16(const MatmulTask& t) { run_kx16_groups<ScaleMinX16<kx16::Q4_KFields>>(t); }

void matmul_q5_kx16(const MatmulTask& t) { run_kx16_groups<ScaleMinX16<kx16::Q5_KFields>>(t); }

void matmul_q6_kx16(const MatmulTask& t) { run_kx16_groups<Q6_Kx16>(t); }

void matmul_iq4_xsx16(const MatmulTask& t) { run_kx16_groups<Iq4XsX16>(t); }

void matmul_q3_kx16(const MatmulTask& t) { run_kx16_groups<Q3_Kx16>(t); }

void matmul_q2_kx16(const MatmulTask& t) { run_kx16_groups<Q2_Kx16>(t); }

}  // namespace met::cpu::avx512
