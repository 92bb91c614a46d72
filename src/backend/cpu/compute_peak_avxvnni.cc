// compute_peak.h's loop for the avxvnni tier's integer kernels: 12
// independent chains of vpdpbusd on ymm (32 byte products each); its float
// arithmetic is AVX2's loop. Built with -march=x86-64-v3 -mavxvnni.
// Threading: pure function. Tested by tests/backend/compute_peak_test.cc.
#include <immintrin.h>

#include "backend/cpu/compute_peak.h"
#include "backend/cpu/compute_peak_rounds.h"

namespace met::cpu::avxvnni {

int64_t mac_loop(MacKind kind, int64_t iterations) {
  if (kind != MacKind::kInt8Dot) return 0;
  const __m256i a = _mm256_set1_epi32(0x01020304), b = _mm256_set1_epi32(0x05060708);
  MET_MAC_ROUNDS(__m256i, _mm256_setzero_si256(), x = _mm256_dpbusd_avx_epi32(x, a, b));
  return iterations * 12 * 32;
}

}  // namespace met::cpu::avxvnni
