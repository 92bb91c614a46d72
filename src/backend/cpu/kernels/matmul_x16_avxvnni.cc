// AVX-VNNI matmul for WeightLayout::kQ8_0x16 and the nibble layouts of
// x16_blocks_avx2.h (kMxfp4x16, kQ4_0x16, kIq4NlX16, kQ5_0x16, kQ4_1x16,
// kQ5_1x16; packed_weights.h) against ActQ8_0 activations
// (matmul_kernels.h): the AVX2 kernel's half-group walk (x16_walk_avx2.h:
// 8 rows, one int32 lane per row) with AVX-512's arithmetic on ymm. The
// layout stores each code + 128, so per block, half and quad j one aligned
// 32-byte load is the unsigned operand of vpdpbusd
// against the activation's 4 codes broadcast (signed); two int32 chains, the
// first started at the activation block's offset_bias (-128 x its code sum),
// add up to the exact signed dot, where AVX2 needs vpabsb, vpsignb,
// vpmaddubsw, vpmaddwd and an add. One multiply and one FMA scale the 8
// dots by the rows' fp16 scales (one vcvtph2ps) times the activation's.
// The nibble layouts decode as AVX2's (x16_blocks_avx2.h) into the same
// unsigned operands, each the value + an offset whose term starts the chain.
// This is the tier of Intel's client cores since Alder Lake, which have
// VNNI on ymm and no AVX-512.
// One activation row walks each group once, both halves together, with a
// prefetch two units ahead (x16_walk_avx2.h's x16_one_row). More rows go in
// tiles of up to 4 activation rows x one half group, each quad's weights loaded once for all rows, so at m <= 4 every
// weight byte is read from memory once; with more tiles each walk prefetches a share of the next
// group (next_group_prefetch.h). A row's arithmetic is the same whatever
// tile it lands in: bit-identical alone or in a batch.
// Built with -march=x86-64-v3 -mavxvnni: includes only intrinsics and
// declarations (and the always-inlined walk).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/x16_blocks_avx2.h"
#include "backend/cpu/kernels/x16_walk_avx2.h"
#include "tensor/block_types.h"

namespace met::cpu::avxvnni {
namespace {

using avx2::ActRow;
using avx2::act_codes;
using avx2::act_tail;
using avx2::broadcast_quad;

// x16_blocks_avx2.h's arithmetic on this tier: per activation row, 8
// vpdpbusd of the unsigned operands against the row's quads (broadcast,
// signed) in two int32 chains, the first started at -kValueOffset x the
// block's code sum (offset_bias / 128 x kValueOffset), so their sum is the
// exact signed dot; signed operands (IQ4_NL's values) go in + 128 (one xor).
struct VnniRows {
  template <int kValueOffset, int R>
  [[gnu::always_inline]] static void nibbles(const __m256i (&w)[8], __m256 w_scale, const ActRow (&a)[R], int64_t b,
                                             __m256 (&acc)[R]) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* q = act_codes(a[r], b);
      const ActQ8_0Tail tail = act_tail(a[r], b);
      __m256i even = _mm256_set1_epi32(tail.offset_bias / 128 * kValueOffset);
      __m256i odd = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int j = 0; j < 8; j += 2) {
        even = _mm256_dpbusd_avx_epi32(even, w[j], broadcast_quad(q + 4 * j));
        odd = _mm256_dpbusd_avx_epi32(odd, w[j + 1], broadcast_quad(q + 4 * j + 4));
      }
      const __m256 dot = _mm256_cvtepi32_ps(_mm256_add_epi32(even, odd));
      acc[r] = _mm256_fmadd_ps(dot, _mm256_mul_ps(w_scale, _mm256_set1_ps(tail.d)), acc[r]);
    }
  }
  template <int R>
  [[gnu::always_inline]] static void signed_codes(const __m256i (&w)[8], __m256 w_scale, const ActRow (&a)[R],
                                                  int64_t b, __m256 (&acc)[R]) {
    const __m256i offset = _mm256_set1_epi8(static_cast<char>(0x80));
    __m256i u[8];
    for (int j = 0; j < 8; ++j) u[j] = _mm256_xor_si256(w[j], offset);
    nibbles<128, R>(u, w_scale, a, b, acc);
  }
};

// Q8_0x16: units of two blocks (codes of b, codes of b + 1, 32 scales); an
// odd last block is a unit of its codes and 16 scales.
struct Q8_0x16Block {
  static constexpr int kUnitBlocks = 2;
  static constexpr size_t kBlockBytes = avx2::kX16GroupRows * kQk;  // 512: 8 lines of 16 rows x 4 bytes
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 64;
  // acc[r] += half h's 8 rows' terms of block k of the unit (block b of the
  // row) for activation row r.
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    const uint8_t* codes = unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h);
    const uint8_t* scales = unit + static_cast<size_t>(unit_blocks) * kBlockBytes +
                            32 * static_cast<size_t>(k) + 16 * static_cast<size_t>(h);
    __m256i even[R], odd[R];
    for (int r = 0; r < R; ++r) {
      even[r] = _mm256_set1_epi32(act_tail(a[r], b).offset_bias);
      odd[r] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int j = 0; j < 8; j += 2) {
      const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(codes + 64 * j));
      const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(codes + 64 * (j + 1)));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        even[r] = _mm256_dpbusd_avx_epi32(even[r], w0, broadcast_quad(act_codes(a[r], b) + 4 * j));
        odd[r] = _mm256_dpbusd_avx_epi32(odd[r], w1, broadcast_quad(act_codes(a[r], b) + 4 * j + 4));
      }
    }
    const __m256 w_scale = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(scales)));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 dot = _mm256_cvtepi32_ps(_mm256_add_epi32(even[r], odd[r]));
      acc[r] = _mm256_fmadd_ps(dot, _mm256_mul_ps(w_scale, _mm256_set1_ps(act_tail(a[r], b).d)), acc[r]);
    }
  }
};

}  // namespace

void matmul_q8_0x16(const MatmulTask& t) { avx2::run_x16_halves<Q8_0x16Block>(t); }

void matmul_mxfp4x16(const MatmulTask& t) { avx2::run_x16_halves<avx2::Mxfp4x16Block<VnniRows>>(t); }

void matmul_q4_0x16(const MatmulTask& t) { avx2::run_x16_halves<avx2::Q4_0x16Block<VnniRows>>(t); }

void matmul_iq4_nlx16(const MatmulTask& t) { avx2::run_x16_halves<avx2::Iq4NlX16Block<VnniRows>>(t); }

void matmul_q5_0x16(const MatmulTask& t) { avx2::run_x16_halves<avx2::Q5_0x16Block<VnniRows>>(t); }

void matmul_q4_1x16(const MatmulTask& t) { avx2::run_x16_halves<avx2::MinNibbleX16Block<VnniRows, false>>(t); }

void matmul_q5_1x16(const MatmulTask& t) { avx2::run_x16_halves<avx2::MinNibbleX16Block<VnniRows, true>>(t); }

}  // namespace met::cpu::avxvnni
