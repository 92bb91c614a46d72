// AVX-512 matmul for the 16-row packed float layouts (packed_weights.h):
//   F16x16 against f32 activations: per input k, one 32-byte load widened
//     by vcvtph2ps holds the group's 16 rows; one FMA per activation row
//     against that row's x[k] broadcast.
//   Bf16x16 against bf16 activations: per pair of inputs, one aligned
//     64-byte load holds the 16 rows' pairs; one vdpbf16ps per activation
//     row against that row's pair broadcast (bf16 subnormals count as zero
//     and subnormal sums flush, as in matmul_float_avx512.cc).
// The 16 int32/float lanes are 16 output rows, so no horizontal sum: a
// thread's outputs are a run of whole groups, read front to back as one
// sequential stream, software-prefetched kPrefetchBytes ahead by the first
// row tile. Tiles of up to 4 activation rows reuse each weight vector from
// a register. Every row splits the inputs over 4 accumulator chains (step
// s into chain s % 4, summed in chain order), so batch-1 decode waits on
// memory, not on the FMA latency, and a row's arithmetic is the same
// whatever tile it lands in: bit-identical alone or in a batch. Outputs outside
// [n_begin, n_end) are masked off at the store.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kGroupRows = 16;
constexpr int kMaxTileRows = 4;
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

// y rows [i0, i0 + R), outputs n0 .. n0 + 15 where `mask` is set, from the
// group at `group` (`steps` steps of S::kBytes).
template <class S, int R>
void group_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t steps, int64_t n0, __mmask16 mask) {
  const uint8_t* a[R];
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m512 acc[kChains][R];
#pragma GCC unroll 4
  for (int c = 0; c < kChains; ++c) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[c][r] = _mm512_setzero_ps();
  }
  const bool prefetch = i0 == 0;
  const NextGroupShare share = next_group_share((t.m + kMaxTileRows - 1) / kMaxTileRows, i0 / kMaxTileRows, group,
                                                t.weight_row_bytes, n0 + kGroupRows < t.n_end);
  int64_t s = 0;
  for (; s + 4 <= steps; s += 4) {
    const uint8_t* p = group + static_cast<size_t>(s) * S::kBytes;
    prefetch_share(share, s / 4, static_cast<size_t>(s) * S::kBytes, 4 * S::kBytes);
    if (prefetch) {
      for (size_t line = 0; line < 4 * S::kBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(p + line) + kPrefetchBytes, _MM_HINT_T0);
      }
    }
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const __m512 w = S::weights(p + u * S::kBytes);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[u % kChains][r] = S::fma(w, S::act(a[r], s + u), acc[u % kChains][r]);
    }
  }
#pragma GCC unroll 3
  for (int u = 0; u < 3; ++u) {  // the last steps (s is a multiple of 4: step s + u is chain u's)
    if (s + u >= steps) break;
    const __m512 w = S::weights(group + static_cast<size_t>(s + u) * S::kBytes);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[u][r] = S::fma(w, S::act(a[r], s + u), acc[u][r]);
  }
  for (int r = 0; r < R; ++r) {
    __m512 sum = acc[0][r];
    for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c][r]);
    _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + n0, mask, sum);
  }
}

using GroupTileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int64_t, int64_t, __mmask16);

template <class S>
constexpr GroupTileFn kTiles[kMaxTileRows] = {group_tile<S, 1>, group_tile<S, 2>, group_tile<S, 3>,
                                               group_tile<S, 4>};

// Every group overlapping [n_begin, n_end), front to back; per group, row
// tiles of up to kMaxTileRows activation rows.
template <class S>
void run_groups(const MatmulTask& t) {
  const int64_t steps = (t.cols + S::kInputs - 1) / S::kInputs;
  for (int64_t g = t.n_begin / kGroupRows; g * kGroupRows < t.n_end; ++g) {
    const int64_t n0 = g * kGroupRows;
    // (No std::min/max: an inline template instantiated here would be built
    // for AVX-512 and could be the copy the linker keeps for baseline code.)
    const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
    const int64_t hi = t.n_end < n0 + kGroupRows ? t.n_end - n0 : kGroupRows;
    const auto mask = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
    const uint8_t* group = t.weights + static_cast<size_t>(g) * t.weight_row_bytes;
    for (int64_t i0 = 0; i0 < t.m; i0 += kMaxTileRows) {
      const int64_t rows = t.m - i0 < kMaxTileRows ? t.m - i0 : kMaxTileRows;
      kTiles<S>[rows - 1](t, i0, group, steps, n0, mask);
    }
  }
}

}  // namespace

void matmul_f16x16(const MatmulTask& t) { run_groups<F16Step>(t); }

void matmul_bf16x16(const MatmulTask& t) { run_groups<Bf16Step>(t); }

}  // namespace met::cpu::avx512
