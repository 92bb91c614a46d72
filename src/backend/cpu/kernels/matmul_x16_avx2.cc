// AVX2 matmul for the 16-row packed layouts (packed_weights.h),
// WeightLayout::kQ8_0x16, kMxfp4x16, kIq4NlX16, kQ4_0x16, kQ5_0x16, kQ4_1x16 and
// kQ5_1x16, against ActQ8_0 activations (matmul_kernels.h): x16_walk_avx2.h's
// tile driver over the block kernels (Q8_0x16 here, the nibble layouts'
// decoding in x16_blocks_avx2.h, shared with the avxvnni tier) with this
// tier's arithmetic (Avx2Rows). A
// 16-row group is run as two halves of 8 rows (one int32 lane per row); the
// half's weights are loaded (and decoded) once per block for every
// activation row of the tile, so at m <= 4 every weight byte is read from
// memory once for all rows (a MoE expert's few rows at batch 16), and a
// thread's outputs are a run of whole groups, read front to back.
//   Q8_0x16: per block and half, 8 aligned 32-byte loads hold the 8 rows'
//     codes (offset +128); xor 0x80 gives the signed codes w and vpabsb |w|.
//     Per row and quad, vpmaddubsw(|w|, sign(a, w)) (|w| <= 128 and |a| <=
//     127, so pairs stay within int16) and vpmaddwd against ones give exact
//     int32 dots; the 8 fp16 scales widen with one vcvtph2ps. (The row-major
//     AVX2 Q8_0 kernel reads 4 weight rows side by side and streamed 15 GB/s
//     at m = 1 on two threads against 1024 x 1024 matrices here.)
//   Mxfp4x16: per block and half, 4 aligned 32-byte loads hold the 8 rows'
//     nibbles; masked (low nibbles) or shifted (high), each goes through one
//     vpshufb of the doubled E2M1 values + 12 (0 .. 24, unsigned). Per row,
//     vpmaddubsw against the activation's quads (broadcast, signed) gives
//     int16 pairs of at most 2 x 24 x 128, so four quads sum in int16
//     without saturating; vpmaddwd against ones widens each half-block to
//     int32, and -12 x (the activation block's code sum, from its
//     offset_bias) takes the offset back out. The E8M0 exponents widen to
//     2^(e - 128) with integer ops (bit exact, subnormal e = 0, 1 included).
//   Iq4NlX16: the nibbles through one vpshufb of kIq4Values (signed; an
//     offset would saturate vpmaddubsw), then as Q8_0x16.
//   Q4_0x16: as Mxfp4x16 with no table: a nibble is Q4_0's value + 8 (0 ..
//     15), so -8 x the code sum comes out; the 8 fp16 scales widen with one
//     vcvtph2ps.
//   Q5_0x16: as Q4_0x16 with each operand's fifth bits from the block's qh
//     (a vpshufb spreads the qh byte holding them over their 4 bytes, a
//     compare against each byte's bit gives 16 to add): codes 0 .. 31, -16
//     x the code sum out, pairs at most 8 x 31 x 127 = 31496 before widening.
//   Q4_1x16, Q5_1x16: the codes (0 .. 15 or 31, no offset) of Q4_0x16 and
//     Q5_0x16, each block's 8 (d, m) pairs in one load (vpackusdw parts d
//     from m), and m x the activation block's scale x its code sum added.
// One activation row walks each group once, both halves together, with a
// prefetch two units ahead (x16_one_row: two half walks, each reading half of
// every line, ran batch-1 decode of the medium Q8_0 llama at 73-81 tok/s,
// this at 91-92). Tiles: up to 4 activation rows x one half group (2 rows measured 20%
// slower on a batch; 8 no faster, its accumulators spilled from the 16 ymm
// registers). Each walk of a half prefetches a share of the next group
// (next_group_prefetch.h). Outputs outside [n_begin, n_end) are masked off at the store.
// Every activation row's arithmetic is the same whatever tile it lands in,
// so a row's outputs are bit-identical alone or in a batch.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/x16_blocks_avx2.h"
#include "backend/cpu/kernels/x16_walk_avx2.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {
namespace {

constexpr int kGroupRows = kX16GroupRows;

// acc[r] += the 8 rows' terms of one block for activation row r, from the
// rows' signed codes in w (-128 .. 127) and their scales: per quad,
// vpmaddubsw(|w|, sign(a, w)) (|w| <= 128 and |a| <= 127, so pairs stay
// within int16) and vpmaddwd against ones give exact int32 dots.
template <int R>
[[gnu::always_inline]] inline void signed_rows(const __m256i (&w)[8], __m256 w_scale, const ActRow (&a)[R], int64_t b,
                                               __m256 (&acc)[R]) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i dot[R];
  for (int r = 0; r < R; ++r) dot[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m256i magnitude = _mm256_abs_epi8(w[j]);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256i signed_a = _mm256_sign_epi8(broadcast_quad(act_codes(a[r], b) + 4 * j), w[j]);
      dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, signed_a), ones));
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const __m256 scale = _mm256_mul_ps(w_scale, _mm256_set1_ps(act_tail(a[r], b).d));
    acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r]), scale, acc[r]);
  }
}

// Q8_0x16: units of two blocks (codes of b, codes of b + 1, 32 scales); an
// odd last block is a unit of its codes and 16 scales.
struct Q8_0x16Block {
  static constexpr int kUnitBlocks = 2;
  static constexpr size_t kBlockBytes = kGroupRows * kQk;  // 512: 8 lines of 16 rows x 4 bytes
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 64;
  // acc[r] += half h's 8 rows' terms of block k of the unit (block b of the
  // row) for activation row r.
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    const uint8_t* codes = unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h);
    const uint8_t* scales = unit + static_cast<size_t>(unit_blocks) * kBlockBytes +
                            32 * static_cast<size_t>(k) + 16 * static_cast<size_t>(h);
    const __m256 w_scale = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(scales)));
    const __m256i offset = _mm256_set1_epi8(static_cast<char>(0x80));
    __m256i w[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      w[j] = _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(codes + 64 * j)), offset);
    }
    signed_rows<R>(w, w_scale, a, b, acc);
  }
};

// Sum over quads j0 .. j0+3 of w[j] times the activation's quad j, as int16
// pairs (at most 4 x 2 x 24 x 128 = 24576 in magnitude).
inline __m256i four_quads(const __m256i (&w)[8], int j0, const uint8_t* q) {
  const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(w[j0], broadcast_quad(q + 4 * j0)),
                                     _mm256_maddubs_epi16(w[j0 + 1], broadcast_quad(q + 4 * j0 + 4)));
  const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(w[j0 + 2], broadcast_quad(q + 4 * j0 + 8)),
                                     _mm256_maddubs_epi16(w[j0 + 3], broadcast_quad(q + 4 * j0 + 12)));
  return _mm256_add_epi16(a, b);
}

// acc[r] += the 8 rows' terms of one block for activation row r, from the
// rows' values + kValueOffset in w (unsigned, at most 24) and their scales.
template <int kValueOffset, int R>
inline void nibble_rows(const __m256i (&w)[8], __m256 w_scale, const ActRow (&a)[R], int64_t b, __m256 (&acc)[R]) {
  const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const uint8_t* q = act_codes(a[r], b);
    const ActQ8_0Tail tail = act_tail(a[r], b);
    // offset_bias is -128 x the block's code sum.
    const __m256i bias = _mm256_set1_epi32(tail.offset_bias / 128 * kValueOffset);
    const __m256i low = _mm256_madd_epi16(four_quads(w, 0, q), ones);
    const __m256i high = _mm256_madd_epi16(four_quads(w, 4, q), ones);
    const __m256i dot = _mm256_add_epi32(_mm256_add_epi32(low, high), bias);
    acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(w_scale, _mm256_set1_ps(tail.d)), acc[r]);
  }
}

// The AVX2 arithmetic of x16_blocks_avx2.h's block kernels.
struct Avx2Rows {
  template <int kValueOffset, int R>
  [[gnu::always_inline]] static void nibbles(const __m256i (&w)[8], __m256 w_scale, const ActRow (&a)[R], int64_t b,
                                             __m256 (&acc)[R]) {
    nibble_rows<kValueOffset, R>(w, w_scale, a, b, acc);
  }
  template <int R>
  [[gnu::always_inline]] static void signed_codes(const __m256i (&w)[8], __m256 w_scale, const ActRow (&a)[R],
                                                  int64_t b, __m256 (&acc)[R]) {
    signed_rows<R>(w, w_scale, a, b, acc);
  }
};

}  // namespace

void matmul_q8_0x16(const MatmulTask& t) { run_x16_halves<Q8_0x16Block>(t); }

void matmul_mxfp4x16(const MatmulTask& t) { run_x16_halves<Mxfp4x16Block<Avx2Rows>>(t); }

void matmul_q4_0x16(const MatmulTask& t) { run_x16_halves<Q4_0x16Block<Avx2Rows>>(t); }

void matmul_iq4_nlx16(const MatmulTask& t) { run_x16_halves<Iq4NlX16Block<Avx2Rows>>(t); }

void matmul_q5_0x16(const MatmulTask& t) { run_x16_halves<Q5_0x16Block<Avx2Rows>>(t); }

void matmul_q4_1x16(const MatmulTask& t) { run_x16_halves<MinNibbleX16Block<Avx2Rows, false>>(t); }

void matmul_q5_1x16(const MatmulTask& t) { run_x16_halves<MinNibbleX16Block<Avx2Rows, true>>(t); }

}  // namespace met::cpu::avx2
