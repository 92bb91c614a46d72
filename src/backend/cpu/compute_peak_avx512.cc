// compute_peak.h's loop for the avx512 tier: 12 independent chains of
// vpdpbusd (64 byte products), vdpbf16ps (32 bf16 products) and vfmadd (16
// floats) on zmm registers. Built with the AVX-512 flags.
// Threading: pure function. Tested by tests/backend/compute_peak_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/compute_peak.h"

namespace met::cpu::avx512 {

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
      const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x05060708);
      MET_MAC_ROUNDS(__m512i, _mm512_set1_epi32(0), x = _mm512_dpbusd_epi32(x, a, b));
      return iterations * 12 * 64;
    }
    case MacKind::kBf16Dot: {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = (__m512bh)_mm512_set1_epi32(0x3a803a80);
      MET_MAC_ROUNDS(__m512, _mm512_setzero_ps(), x = _mm512_dpbf16_ps(x, a, b));
      return iterations * 12 * 32;
    }
    case MacKind::kFp32Fma: {
      const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
      MET_MAC_ROUNDS(__m512, _mm512_setzero_ps(), x = _mm512_fmadd_ps(x, a, b));
      return iterations * 12 * 16;
    }
  }
  return 0;
}

#undef MET_MAC_ROUNDS

}  // namespace met::cpu::avx512
