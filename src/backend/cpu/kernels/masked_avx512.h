// Masked AVX-512 loads and stores (met::cpu::masked) for kernels that
// unroll many of them, such as attention_avx512.cc. Outside AddressSanitizer
// builds each is the intrinsic itself, inlined: release code is unchanged.
// Under ASan, clang checks a masked access whose mask is not a compile-time
// constant lane by lane, a branch and a shadow test per lane at every call
// site; attention_avx512.cc's unrolled loads made 5.9 MB of code and about
// 250 s of compile time in CI's check build. Here a full mask takes a plain
// load or store (one range check) and a partial one goes through a single
// out-of-line copy of the intrinsic, so ASan still checks exactly the lanes
// the mask names, once per helper instead of once per call site (the file
// compiles in about 32 s).
// Include only from translation units built for AVX-512 (the helpers use
// its intrinsics). Threading: pure functions. Tested through the kernels
// that use them: tests/backend/attention_test.cc and attention_window_test.cc
// run both forms (the Release suite the intrinsics, CI's ASan build the
// out-of-line ones).
#pragma once

#include "core/avx512_intrinsics.h"

namespace met::cpu::masked {

// GCC says ASan with __SANITIZE_ADDRESS__, clang with __has_feature, which
// GCC 12 lacks (so it is tested only where it exists).
#if defined(__has_feature)
#define MET_MASKED_HAS_FEATURE(x) __has_feature(x)
#else
#define MET_MASKED_HAS_FEATURE(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || MET_MASKED_HAS_FEATURE(address_sanitizer)
inline constexpr bool kOutOfLine = true;
#else
inline constexpr bool kOutOfLine = false;
#endif
#undef MET_MASKED_HAS_FEATURE

// The out-of-line copies (emitted only where kOutOfLine calls them).
[[gnu::noinline]] inline __m512 maskz_loadu_ps_lanes(__mmask16 m, const void* p) {
  return _mm512_maskz_loadu_ps(m, p);
}
[[gnu::noinline]] inline __m256i maskz_loadu_epi16_lanes(__mmask16 m, const void* p) {
  return _mm256_maskz_loadu_epi16(m, p);
}
[[gnu::noinline]] inline void mask_storeu_ps_lanes(void* p, __mmask16 m, __m512 x) {
  _mm512_mask_storeu_ps(p, m, x);
}
[[gnu::noinline]] inline void mask_storeu_ps_lanes(void* p, __mmask8 m, __m256 x) {
  _mm256_mask_storeu_ps(p, m, x);
}
[[gnu::noinline]] inline void mask_storeu_ps_lanes(void* p, __mmask8 m, __m128 x) {
  _mm_mask_storeu_ps(p, m, x);
}

// Floats p[0..15], lanes outside m zero.
[[gnu::always_inline]] inline __m512 maskz_loadu_ps(__mmask16 m, const void* p) {
  if constexpr (kOutOfLine) {
    return m == 0xFFFF ? _mm512_loadu_ps(p) : maskz_loadu_ps_lanes(m, p);
  } else {
    return _mm512_maskz_loadu_ps(m, p);
  }
}

// 16-bit elements p[0..15], lanes outside m zero.
[[gnu::always_inline]] inline __m256i maskz_loadu_epi16(__mmask16 m, const void* p) {
  if constexpr (kOutOfLine) {
    return m == 0xFFFF ? _mm256_loadu_si256(static_cast<const __m256i*>(p)) : maskz_loadu_epi16_lanes(m, p);
  } else {
    return _mm256_maskz_loadu_epi16(m, p);
  }
}

// Lanes of x named by m to p[0..15] (p[0..7], p[0..3] for the narrower forms).
[[gnu::always_inline]] inline void mask_storeu_ps(void* p, __mmask16 m, __m512 x) {
  if constexpr (kOutOfLine) {
    if (m == 0xFFFF) {
      _mm512_storeu_ps(p, x);
    } else {
      mask_storeu_ps_lanes(p, m, x);
    }
  } else {
    _mm512_mask_storeu_ps(p, m, x);
  }
}
[[gnu::always_inline]] inline void mask_storeu_ps(void* p, __mmask8 m, __m256 x) {
  if constexpr (kOutOfLine) {
    if (m == 0xFF) {
      _mm256_storeu_ps(static_cast<float*>(p), x);
    } else {
      mask_storeu_ps_lanes(p, m, x);
    }
  } else {
    _mm256_mask_storeu_ps(p, m, x);
  }
}
[[gnu::always_inline]] inline void mask_storeu_ps(void* p, __mmask8 m, __m128 x) {
  if constexpr (kOutOfLine) {
    if ((m & 0x0F) == 0x0F) {
      _mm_storeu_ps(static_cast<float*>(p), x);
    } else {
      mask_storeu_ps_lanes(p, m, x);
    }
  } else {
    _mm_mask_storeu_ps(p, m, x);
  }
}

}  // namespace met::cpu::masked
