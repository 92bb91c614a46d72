// AVX-512 matmul for the 16-row packed float layouts (packed_weights.h):
//   F16x16 against f32 activations: per input k, one 32-byte load widened
//     by vcvtph2ps holds the group's 16 rows; one FMA per activation row
//     against that row's x[k] broadcast.
//   Bf16x16 against bf16 activations: per pair of inputs, one aligned
//     64-byte load holds the 16 rows' pairs; one vdpbf16ps per activation
//     row against that row's pair broadcast (bf16 subnormals count as zero
//     and subnormal sums flush, as in matmul_float_avx512.cc).
// The 16 int32/float lanes are 16 output rows, so no horizontal sum: a
// thread's outputs are a run of whole groups, read front to back; the
// first row tile software-prefetches kPrefetchBytes ahead when the task has
// kFloatPrefetchMinRows rows or more (matmul_kernels.h says why). Up to 4
// activation rows, a group is one tile's walk; with more, groups go in
// pairs (group_tile), tiles of up to 3 rows over both, so each broadcast
// serves two weight vectors (a lone last group: tiles of up to 4). Every
// row splits the inputs over 4 accumulator chains (step s into chain s % 4,
// summed in chain order), so batch-1 decode waits on memory, not on the FMA
// latency, and a row's arithmetic is the same whatever tile and walk it
// lands in: bit-identical alone or in a batch. Outputs outside [n_begin,
// n_end) are masked off at the store.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/group_walk_avx512.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kGroupRows = 16;
constexpr int kMaxTileRows = 4;   // rows of a tile over one group
constexpr int kPairTileRows = 3;  // over two
constexpr int kChains = 4;

// F16x16: a step is one input; activations are f32.
struct F16Step {
  static constexpr int64_t kInputs = 1;
  static constexpr size_t kBytes = 32;
  static __m512 weights(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 act(const uint8_t* row, int64_t s) {
    return _mm512_set1_ps(reinterpret_cast<const float*>(row)[s]);
  }
  static __m512 fma(__m512 w, __m512 x, __m512 acc) { return _mm512_fmadd_ps(w, x, acc); }
};

// Bf16x16: a step is a pair of inputs; activations are bf16.
struct Bf16Step {
  static constexpr int64_t kInputs = 2;
  static constexpr size_t kBytes = 64;
  static __m512 weights(const uint8_t* p) { return _mm512_castsi512_ps(_mm512_load_si512(p)); }
  static __m512 act(const uint8_t* row, int64_t s) {
    int32_t pair;
    std::memcpy(&pair, row + 4 * s, sizeof(pair));
    return _mm512_castsi512_ps(_mm512_set1_epi32(pair));
  }
  static __m512 fma(__m512 w, __m512 x, __m512 acc) { return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x); }
};

// y rows [i0, i0 + R), the walk's outputs; the tile is walk `index` of
// `walks` over these groups (next_group_share). Each weight vector (one group's
// 16 rows at one step) serves the tile's R rows and each broadcast
// activation the G groups: a walk over two groups loads 5 vectors for 6
// FMAs where one group's tile of 4 loads 5 for 4, and on Zen 5, whose
// vector loads (about 2 a cycle) bound this loop before its FMAs do, that
// is 1.29x the FMAs a cycle (0.567 cycles an FMA against 0.730,
// cache-resident). An output's arithmetic is the same in every walk.
template <class S, int R, int G>
void group_tile(const MatmulTask& t, int64_t i0, const Walk<G>& walk, int64_t steps, int64_t walks, int64_t index) {
  const uint8_t* a[R];
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m512 acc[kChains][G][R];
#pragma GCC unroll 4
  for (int c = 0; c < kChains; ++c) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[c][g][r] = _mm512_setzero_ps();
    }
  }
  const bool prefetch = i0 == 0 && t.m >= kFloatPrefetchMinRows;
  const size_t group_bytes = t.weight_row_bytes;
  NextGroupShare share[G];
  for (int g = 0; g < G; ++g) {  // the next walk's group g, G groups on
    share[g] = next_group_share(walks, index, walk.group + (G - 1 + g) * group_bytes, group_bytes,
                                walk.n0 + (G + g) * kGroupRows < t.n_end);
  }
  const auto step = [&](int c, int64_t s) {
    __m512 w[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) w[g] = S::weights(walk.group + g * group_bytes + static_cast<size_t>(s) * S::kBytes);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 x = S::act(a[r], s);
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) acc[c][g][r] = S::fma(w[g], x, acc[c][g][r]);
    }
  };
  int64_t s = 0;
  for (int64_t turn = 0; s + 4 <= steps; s += 4, turn = turn + 1 == walks ? 0 : turn + 1) {
    const size_t offset = static_cast<size_t>(s) * S::kBytes;
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      prefetch_share_turn(share[g], turn, offset, 4 * S::kBytes);
      if (prefetch) {
        const char* p = reinterpret_cast<const char*>(walk.group + g * group_bytes + offset) + kPrefetchBytes;
        for (size_t line = 0; line < 4 * S::kBytes; line += 64) _mm_prefetch(p + line, _MM_HINT_T0);
      }
    }
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) step(u % kChains, s + u);
  }
#pragma GCC unroll 3
  for (int u = 0; u < 3; ++u) {  // the last steps (s is a multiple of 4: step s + u is chain u's)
    if (s + u >= steps) break;
    step(u, s + u);
  }
  for (int g = 0; g < G; ++g) {
    for (int r = 0; r < R; ++r) {
      __m512 sum = acc[0][g][r];
      for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c][g][r]);
      _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + walk.n0 + g * kGroupRows, walk.masks[g], sum);
    }
  }
}

// The row tiles of a walk over G groups: up to kMaxTileRows rows over one
// group, kPairTileRows over two (24 accumulators, 32 vector registers).
template <class S, int G>
void walk_rows(const MatmulTask& t, const Walk<G>& walk, int64_t steps) {
  constexpr int kRows = G == 1 ? kMaxTileRows : kPairTileRows;
  const int64_t walks = (t.m + kRows - 1) / kRows;
  for (int64_t i0 = 0; i0 < t.m; i0 += kRows) {
    switch (t.m - i0 < kRows ? t.m - i0 : kRows) {
      case 1: group_tile<S, 1, G>(t, i0, walk, steps, walks, i0 / kRows); break;
      case 2: group_tile<S, 2, G>(t, i0, walk, steps, walks, i0 / kRows); break;
      case 3: group_tile<S, 3, G>(t, i0, walk, steps, walks, i0 / kRows); break;
      default:
        if constexpr (kRows >= 4) group_tile<S, 4, G>(t, i0, walk, steps, walks, i0 / kRows);
        break;
    }
  }
}

// Every group overlapping [n_begin, n_end), front to back: in pairs where
// one group's tiles would walk it more than once (m > kMaxTileRows: a
// batch, whose FMAs wait on loads), else one by one, each read once (at
// small m the stream from memory, not the loads, sets the pace).
template <class S>
void run_groups(const MatmulTask& t) {
  const int64_t steps = (t.cols + S::kInputs - 1) / S::kInputs;
  // The two loops written out, not walk_groups: called through its lambda,
  // GCC 12 kept fewer vector registers for the Bf16 tile of 3 rows x 2
  // groups, reloading each weight vector for every row (BF16 prefill of 512
  // tokens 600-630 -> 440-455 tok/s on med-bf16, Zen 5).
  const size_t group_bytes = t.weight_row_bytes;
  int64_t g = t.n_begin / kGroupRows;
  if (t.m > kMaxTileRows) {
    for (; (g + 1) * kGroupRows < t.n_end; g += 2) {
      const int64_t n0 = g * kGroupRows;
      const Walk<2> walk{t.weights + static_cast<size_t>(g) * group_bytes, n0,
                         {group_mask(t, n0), group_mask(t, n0 + kGroupRows)}};
      walk_rows<S, 2>(t, walk, steps);
    }
  }
  for (; g * kGroupRows < t.n_end; ++g) {
    const int64_t n0 = g * kGroupRows;
    const Walk<1> walk{t.weights + static_cast<size_t>(g) * group_bytes, n0, {group_mask(t, n0)}};
    walk_rows<S, 1>(t, walk, steps);
  }
}

}  // namespace

void matmul_f16x16(const MatmulTask& t) { run_groups<F16Step>(t); }

void matmul_bf16x16(const MatmulTask& t) { run_groups<Bf16Step>(t); }

}  // namespace met::cpu::avx512
