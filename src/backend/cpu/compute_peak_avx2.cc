// compute_peak.h's loop for the avx2 tier: 12 independent chains of
// vpmaddubsw (32 byte products) and vfmadd (8 floats) on ymm registers;
// BF16 weights run as floats on this tier. Built with -march=x86-64-v3.
// Threading: pure function. Tested by tests/backend/compute_peak_test.cc.
#include <immintrin.h>

#include "backend/cpu/compute_peak.h"

namespace met::cpu::avx2 {

// Rounds of one instruction on 12 accumulators of type T (each `x = f(x)`),
// kept in registers across rounds by an empty asm that reads and writes them.
#define MET_MAC_ROUNDS(T, init, step)                                                                    \
  T x0 = init, x1 = init, x2 = init, x3 = init, x4 = init, x5 = init;                                     \
  T x6 = init, x7 = init, x8 = init, x9 = init, x10 = init, x11 = init;                                   \
  for (int64_t i = 0; i < iterations; ++i) {                                                              \
    {T& x = x0; step;} {T& x = x1; step;} {T& x = x2; step;} {T& x = x3; step;}                          \
    {T& x = x4; step;} {T& x = x5; step;} {T& x = x6; step;} {T& x = x7; step;}                          \
    {T& x = x8; step;} {T& x = x9; step;} {T& x = x10; step;} {T& x = x11; step;}                        \
    asm volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7),     \
                 "+v"(x8), "+v"(x9), "+v"(x10), "+v"(x11));                                               \
  }

int64_t mac_loop(MacKind kind, int64_t iterations) {
  switch (kind) {
    case MacKind::kInt8Dot: {
      const __m256i b = _mm256_set1_epi32(0x05060708);
      MET_MAC_ROUNDS(__m256i, _mm256_set1_epi32(0x01020304), x = _mm256_maddubs_epi16(x, b));
      return iterations * 12 * 32;
    }
    case MacKind::kBf16Dot:
    case MacKind::kFp32Fma: {
      const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
      MET_MAC_ROUNDS(__m256, _mm256_setzero_ps(), x = _mm256_fmadd_ps(x, a, b));
      return iterations * 12 * 8;
    }
  }
  return 0;
}

#undef MET_MAC_ROUNDS

}  // namespace met::cpu::avx2
