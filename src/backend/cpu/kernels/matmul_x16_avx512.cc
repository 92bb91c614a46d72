// AVX-512 VNNI matmul for the 16-row packed layouts (packed_weights.h),
// WeightLayout::kQ8_0x16, kMxfp4x16, kIq4NlX16, kQ4_0x16, kQ5_0x16, kQ4_1x16 and
// kQ5_1x16, against ActQ8_0 activations
// (matmul_kernels.h): one tile driver, templated on the block decoder
// (x16_decoders_avx512.h, shared with the AMX driver, matmul_x16_amx.h).
// A decoder turns one block of a 16-row group into the operand vpdpbusd
// takes: 8 registers, register j holding 16 rows' 4 unsigned bytes of quad j
// (weight code + 128), and the 16 rows' scales as floats. Per activation row,
// 8 vpdpbusd against the activation's quads (broadcast, signed) in two int32
// chains, the first started at the activation block's offset_bias so their
// sum is the exact signed dot; one multiply and one FMA scale the 16 dots.
//   Q8_0x16: the codes are stored offset already: 8 aligned loads a block;
//     the 16 fp16 scales widen with one vcvtph2ps. Tiles of up to 4 activation
//     rows; even and odd blocks go to separate float accumulators (half the
//     dependency chain and half the f32 summation error of one). A thread's
//     outputs are a run of whole groups, read front to back as one stream,
//     which the hardware prefetchers follow: software prefetch (2 to 8 pairs
//     ahead) measured no faster at m = 1 on Zen 5, so there is none. Batches
//     (m > 4) are compute-bound: per weight byte streamed from DRAM at m = 16
//     the kernel runs at about half its cache-resident rate.
//   Mxfp4x16: 4 aligned loads a block hold 16 rows' nibbles; masked (low) or
//     shifted (high), each goes through one vpshufb of the doubled E2M1
//     values + 128; the E8M0 exponents widen to 2^(e - 128) with integer ops
//     (bit exact, subnormal e = 0, 1 included). That decode (about 27
//     instructions a block, on the ports vpdpbusd needs) is reused by every
//     row of a tile, so tiles are 16 rows tall (4 rows measured 20% slower on
//     a batch, 8 rows 10%); one float accumulator per row. The first row tile
//     of a group prefetches six units (6.4 KB) ahead: two took m = 1 from
//     about 70% to about 90% of Q8_0x16's DRAM bytes a second; six streamed
//     8-31% more than two at 2 threads on every nibble type (1024 x 4096
//     copies, the two alternated every pass in one process, Zen 5), and that
//     decode's instruction count (ANDs dropped through vpermb, 2-op scales)
//     measured no different: the stream's lookahead, not its compute, sets
//     the rate.
//   Iq4NlX16: as Mxfp4x16, through kIq4Values + 128, the 16 fp16 scales
//     widened with one vcvtph2ps.
//   Q4_0x16: as Iq4NlX16, through Q4_0's values (code - 8) + 128.
//   Q5_0x16: as Q4_0x16 through (code - 16) + 128 for the low 4 bits; each
//     operand's fifth bits come from one load of the block's qh: a vpshufb
//     puts the qh byte holding its 4 elements' bits in their 4 bytes, a
//     vptestmb picks each byte's bit, and a masked vpaddb adds 16.
//   Q4_1x16, Q5_1x16: as Q4_0x16 and Q5_0x16 on the codes + 128 (0 .. 15 or
//     31, no offset), each block's 16 (d, m) pairs in one load; the min's
//     term, m x the activation block's scale x its code sum, is one FMA a
//     block and row.
// The group's weights are decoded once per row tile, so at m <= the tile
// height every weight byte is read from memory once for all rows (a MoE
// expert's few rows at batch 16); with more tiles, each prefetches a share
// of the next group (next_group_prefetch.h). Outputs outside [n_begin, n_end) are masked
// off at the store. Every activation row's arithmetic is the same whatever
// tile it lands in, so a row's outputs are bit-identical alone or in a batch.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>
#include <utility>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"
#include "backend/cpu/kernels/x16_decoders_avx512.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kGroupRows = kX16GroupRows;

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
// block's decoded operand and its 16 scales.
template <int R>
inline void dot_step(const __m512i (&w)[8], __m512 w_scale, const ActRow (&a)[R], int64_t b, __m512 (&acc)[R]) {
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

// acc[r] += block k of the unit's terms (block b of the rows) for each
// activation row r; for a type with a min per block (D::mins), also m x the
// activation block's sum (-offset_bias / 128, exact) x its scale.
template <class D, int R>
[[gnu::always_inline]] inline void block_step(const uint8_t* unit, int64_t k, int64_t unit_blocks,
                                              const ActRow (&a)[R], int64_t b, __m512 (&acc)[R]) {
  __m512i w[8];
  const __m512 w_scale = D::decode(unit, k, unit_blocks, w);
  dot_step<R>(w, w_scale, a, b, acc);
  if constexpr (requires { D::mins(unit, k, unit_blocks); }) {
    const __m512 w_min = D::mins(unit, k, unit_blocks);
    for (int r = 0; r < R; ++r) {
      ActQ8_0Tail tail;
      std::memcpy(&tail, a[r].tails + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), sizeof(tail));
      const auto sum = static_cast<float>(-(tail.offset_bias / 128));
      acc[r] = _mm512_fmadd_ps(w_min, _mm512_set1_ps(tail.d * sum), acc[r]);
    }
  }
}

// Blocks K... of the full unit at `unit` (block b first), block k into
// accumulator chain k % D::kChains.
template <class D, int R, int... K>
inline void full_unit(const uint8_t* unit, const ActRow (&a)[R], int64_t b, __m512 (&acc)[D::kChains][R],
                      std::integer_sequence<int, K...>) {
  auto step = [&](int k, __m512 (&chain)[R]) { block_step<D, R>(unit, k, D::kUnitBlocks, a, b + k, chain); };
  (step(K, acc[K % D::kChains]), ...);
}

// y rows [i0, i0 + R), outputs n0 .. n0 + 15 where `mask` is set, from the
// group at `group`.
template <class D, int R>
void group_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask) {
  const int64_t num_blocks = t.cols / kQk;
  ActRow a[R];
  for (int r = 0; r < R; ++r) {
    const uint8_t* row = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
    a[r].blocks = row;
    a[r].tails = row + static_cast<size_t>(num_blocks) * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t));
  }
  __m512 acc[D::kChains][R];
  for (int c = 0; c < D::kChains; ++c) {
    for (int r = 0; r < R; ++r) acc[c][r] = _mm512_setzero_ps();
  }
  const NextGroupShare share = next_group_share((t.m + D::kMaxRows - 1) / D::kMaxRows, i0 / D::kMaxRows, group,
                                                 t.weight_row_bytes, n0 + kGroupRows < t.n_end);
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; b += D::kUnitBlocks, unit += D::kUnitBytes) {
    prefetch_share(share, b / D::kUnitBlocks, static_cast<size_t>(unit - group), D::kUnitBytes);
    if (D::kPrefetchUnits > 0 && i0 == 0) {
      for (size_t line = 0; line < D::kUnitBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(unit + D::kPrefetchUnits * D::kUnitBytes + line), _MM_HINT_T0);
      }
    }
    const int64_t unit_blocks = num_blocks - b < D::kUnitBlocks ? num_blocks - b : D::kUnitBlocks;
    if (D::kChains > 1 && unit_blocks == D::kUnitBlocks) {
      full_unit<D, R>(unit, a, b, acc, std::make_integer_sequence<int, D::kUnitBlocks>());
      continue;
    }
    // One chain, or a last partial unit (into the first chain): a loop, as
    // unrolled 16-row tiles outgrow the registers and the instruction cache.
    for (int64_t k = 0; k < unit_blocks; ++k) block_step<D, R>(unit, k, unit_blocks, a, b + k, acc[0]);
  }
  for (int r = 0; r < R; ++r) {
    __m512 sum = acc[0][r];
    for (int c = 1; c < D::kChains; ++c) sum = _mm512_add_ps(sum, acc[c][r]);
    _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + n0, mask, sum);
  }
}

using GroupTileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int64_t, __mmask16);

template <class D, int... R>
constexpr auto make_tiles(std::integer_sequence<int, R...>) {
  struct Tiles {
    GroupTileFn fns[sizeof...(R)];
  };
  return Tiles{{group_tile<D, R + 1>...}};
}

// Every group overlapping [n_begin, n_end), front to back; per group, row
// tiles of up to D::kMaxRows activation rows.
template <class D>
void run_groups(const MatmulTask& t) {
  static constexpr auto kTiles = make_tiles<D>(std::make_integer_sequence<int, D::kMaxRows>());
  const size_t group_bytes = t.weight_row_bytes;
  for (int64_t g = t.n_begin / kGroupRows; g * kGroupRows < t.n_end; ++g) {
    const int64_t n0 = g * kGroupRows;
    // (No std::min/max: an inline template instantiated here would be built
    // for AVX-512 and could be the copy the linker keeps for baseline code.)
    const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
    const int64_t hi = t.n_end < n0 + kGroupRows ? t.n_end - n0 : kGroupRows;
    const auto mask = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
    const uint8_t* group = t.weights + static_cast<size_t>(g) * group_bytes;
    for (int64_t i0 = 0; i0 < t.m; i0 += D::kMaxRows) {
      const int64_t rows = t.m - i0 < D::kMaxRows ? t.m - i0 : D::kMaxRows;
      kTiles.fns[rows - 1](t, i0, group, n0, mask);
    }
  }
}

}  // namespace

void matmul_q8_0x16(const MatmulTask& t) { run_groups<Q8_0x16Decoder>(t); }

void matmul_mxfp4x16(const MatmulTask& t) { run_groups<Mxfp4x16Decoder>(t); }

void matmul_iq4_nlx16(const MatmulTask& t) { run_groups<Iq4NlX16Decoder>(t); }

void matmul_q4_0x16(const MatmulTask& t) { run_groups<Q4_0x16Decoder>(t); }

void matmul_q5_0x16(const MatmulTask& t) { run_groups<Q5_0x16Decoder>(t); }

void matmul_q4_1x16(const MatmulTask& t) { run_groups<Q4_1x16Decoder>(t); }

void matmul_q5_1x16(const MatmulTask& t) { run_groups<Q5_1x16Decoder>(t); }

}  // namespace met::cpu::avx512
