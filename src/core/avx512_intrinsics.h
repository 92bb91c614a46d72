// <immintrin.h> for the AVX-512 translation units. GCC 12's AVX-512 headers
// raise -W(maybe-)uninitialized on their own _mm512_undefined_* placeholders
// (GCC bug 105593, fixed in 13); the warnings are silenced for the header
// alone, so the kernels that include this keep every warning. Plain
// declarations only: safe in a TU built for another ISA.
// Threading: declarations only.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
