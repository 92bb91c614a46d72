// compute_peak.h's loop for the avx512 tier: 12 independent chains of
// vpdpbusd (64 byte products), vdpbf16ps (32 bf16 products) and vfmadd (16
// floats) on zmm registers. Built with the AVX-512 flags.
// Threading: pure function. Tested by tests/backend/compute_peak_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/compute_peak.h"
#include "backend/cpu/compute_peak_rounds.h"

namespace met::cpu::avx512 {

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

}  // namespace met::cpu::avx512
