// compute_peak.h's loop for the avx2 tier: 12 independent chains of
// vpmaddubsw (32 byte products) and vfmadd (8 floats) on ymm registers;
// BF16 weights run as floats on this tier. Built with -march=x86-64-v3.
// Threading: pure function. Tested by tests/backend/compute_peak_test.cc.
#include <immintrin.h>

#include "backend/cpu/compute_peak.h"
#include "backend/cpu/compute_peak_rounds.h"

namespace met::cpu::avx2 {

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

}  // namespace met::cpu::avx2
