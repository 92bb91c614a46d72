// AVX2 matmul for the 16-row packed float layouts (packed_weights.h), a
// group run as two halves of 8 rows (one float lane per row):
//   F16x16 against f32 activations: per input and half, one 16-byte load
//     widened by vcvtph2ps (F16C); one FMA per activation row against that
//     row's x[k] broadcast.
//   Bf16x16 against bf16 activations: per pair of inputs and half, one
//     32-byte load holds 8 rows' pairs; a shift (the first input) and a
//     mask (the second) widen them to f32, each FMA'd against the
//     activation's input broadcast (exact products, no flushing).
// Every row splits its steps over 2 accumulator chains per half (step s into
// chain s % 2, summed in chain order), whatever tile it lands in, so a row's
// outputs are bit-identical alone or in a batch. Tiles of up to 3 activation
// rows (12 accumulators of the 16 ymm registers). A thread's outputs are a
// run of whole groups, read front to back; the first row tile
// software-prefetches kPrefetchBytes ahead when the task has
// kFloatPrefetchMinRows rows or more (matmul_kernels.h says why). Outputs
// outside [n_begin, n_end) are masked off at the store.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"

namespace met::cpu::avx2 {
namespace {

constexpr int kGroupRows = 16;
constexpr int kMaxTileRows = 3;
constexpr int kChains = 2;

// F16x16: a step is one input; half h's 8 weights at p + 16 h.
struct F16Step {
  static constexpr int64_t kInputs = 1;
  static constexpr size_t kBytes = 32;
  static constexpr int kParts = 1;  // products per half and step
  static void weights(const uint8_t* p, int h, __m256 (&w)[kParts]) {
    w[0] = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
  }
  static void act(const uint8_t* row, int64_t s, __m256 (&x)[kParts]) {
    x[0] = _mm256_set1_ps(reinterpret_cast<const float*>(row)[s]);
  }
};

float bf16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Bf16x16: a step is a pair of inputs; half h's 8 pairs at p + 32 h.
struct Bf16Step {
  static constexpr int64_t kInputs = 2;
  static constexpr size_t kBytes = 64;
  static constexpr int kParts = 2;
  static void weights(const uint8_t* p, int h, __m256 (&w)[kParts]) {
    const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32 * h));
    w[0] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    w[1] = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int32_t>(0xFFFF0000u))));
  }
  static void act(const uint8_t* row, int64_t s, __m256 (&x)[kParts]) {
    x[0] = _mm256_set1_ps(bf16_at(row + 4 * s));
    x[1] = _mm256_set1_ps(bf16_at(row + 4 * s + 2));
  }
};

// acc[c][r][h] += step s's products for every row of the tile.
template <class S, int R>
[[gnu::always_inline]] inline void tile_step(const uint8_t* p, const uint8_t* const (&a)[R], int64_t s, int c,
                                             __m256 (&acc)[kChains][R][2]) {
  __m256 w[2][S::kParts];
  S::weights(p, 0, w[0]);
  S::weights(p, 1, w[1]);
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) {
    __m256 x[S::kParts];
    S::act(a[r], s, x);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
      for (int e = 0; e < S::kParts; ++e) acc[c][r][h] = _mm256_fmadd_ps(w[h][e], x[e], acc[c][r][h]);
    }
  }
}

// y rows [i0, i0 + R), outputs n0 .. n0 + 15 where `mask` is set.
template <class S, int R>
void group_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t steps, int64_t n0, uint32_t mask) {
  const uint8_t* a[R];
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m256 acc[kChains][R][2];
  for (int c = 0; c < kChains; ++c) {
    for (int r = 0; r < R; ++r) acc[c][r][0] = acc[c][r][1] = _mm256_setzero_ps();
  }
  const bool prefetch = i0 == 0 && t.m >= kFloatPrefetchMinRows;
  const NextGroupShare share = next_group_share((t.m + kMaxTileRows - 1) / kMaxTileRows, i0 / kMaxTileRows, group,
                                                t.weight_row_bytes, n0 + kGroupRows < t.n_end);
  int64_t s = 0;
  for (; s + 2 <= steps; s += 2) {
    const uint8_t* p = group + static_cast<size_t>(s) * S::kBytes;
    prefetch_share(share, s / 2, static_cast<size_t>(s) * S::kBytes, 2 * S::kBytes);
    if (prefetch) {
      for (size_t line = 0; line < 2 * S::kBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(p + line) + kPrefetchBytes, _MM_HINT_T0);
      }
    }
    tile_step<S, R>(p, a, s, 0, acc);
    tile_step<S, R>(p + S::kBytes, a, s + 1, 1, acc);
  }
  if (s < steps) tile_step<S, R>(group + static_cast<size_t>(s) * S::kBytes, a, s, 0, acc);
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  for (int h = 0; h < 2; ++h) {
    const __m256i bits = _mm256_set1_epi32(static_cast<int32_t>((mask >> (8 * h)) & 0xFF));
    const __m256i store = _mm256_cmpeq_epi32(_mm256_and_si256(bits, lane), lane);
    for (int r = 0; r < R; ++r) {
      const __m256 sum = _mm256_add_ps(acc[0][r][h], acc[1][r][h]);
      _mm256_maskstore_ps(t.y + (i0 + r) * t.y_stride + n0 + 8 * h, store, sum);
    }
  }
}

using GroupTileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int64_t, int64_t, uint32_t);

template <class S>
constexpr GroupTileFn kTiles[kMaxTileRows] = {group_tile<S, 1>, group_tile<S, 2>, group_tile<S, 3>};

// Every group overlapping [n_begin, n_end), front to back; per group, row
// tiles of up to kMaxTileRows activation rows.
template <class S>
void run_groups(const MatmulTask& t) {
  const int64_t steps = (t.cols + S::kInputs - 1) / S::kInputs;
  for (int64_t g = t.n_begin / kGroupRows; g * kGroupRows < t.n_end; ++g) {
    const int64_t n0 = g * kGroupRows;
    // (No std::min/max: an inline template instantiated here would be built
    // for AVX2 and could be the copy the linker keeps for baseline code.)
    const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
    const int64_t hi = t.n_end < n0 + kGroupRows ? t.n_end - n0 : kGroupRows;
    const uint32_t mask = ((1u << hi) - 1) & ~((1u << lo) - 1);
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

}  // namespace met::cpu::avx2
