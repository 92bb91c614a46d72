// AVX-512 row kernels: F16 and BF16 <-> F32 and Q8_0 both ways, 16 floats
// per vector, masked loads and stores for tails. Bit-exact with the
// references for the same reasons as kernels_avx2.cc.
// Built with -march=x86-64-v4: it must include no header with inline
// functions or templates that baseline code also instantiates (the linker
// could keep this TU's AVX-512 copy for everyone), hence only intrinsics,
// plain data (block_types.h) and declarations here.
// Threading: pure functions. Tested by tests/tensor/isa_kernels_test.cc.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
#include "core/avx512_intrinsics.h"

#include "tensor/block_types.h"
#include "tensor/isa_kernels.h"

namespace met::avx512 {
namespace {

__mmask16 tail_mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1);
}

// 16 floats -> 16 bf16 (round to nearest even, NaN kept and quieted).
__m256i round_to_bf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i bias = _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  const __m512i quiet_nan = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(is_nan, rounded, quiet_nan));
}

}  // namespace

void dequantize_row_f16(const uint8_t* src, float* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; i += 16) {
    const __mmask16 mask = tail_mask(num_elements - i);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, src + 2 * i);
    _mm512_mask_storeu_ps(dst + i, mask, _mm512_cvtph_ps(h));
  }
}

void quantize_row_f16(const float* src, uint8_t* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; i += 16) {
    const __mmask16 mask = tail_mask(num_elements - i);
    const __m512 v = _mm512_maskz_loadu_ps(mask, src + i);
    _mm256_mask_storeu_epi16(dst + 2 * i, mask, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
}

void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; i += 16) {
    const __mmask16 mask = tail_mask(num_elements - i);
    const __m256i b = _mm256_maskz_loadu_epi16(mask, src + 2 * i);
    const __m512i bits = _mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16);
    _mm512_mask_storeu_ps(dst + i, mask, _mm512_castsi512_ps(bits));
  }
}

void quantize_row_bf16(const float* src, uint8_t* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; i += 16) {
    const __mmask16 mask = tail_mask(num_elements - i);
    const __m512 v = _mm512_maskz_loadu_ps(mask, src + i);
    _mm256_mask_storeu_epi16(dst + 2 * i, mask, round_to_bf16(v));
  }
}

void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t num_elements) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const __m512 d = _mm512_set1_ps(_cvtsh_ss(blocks[b].d));
    const int8_t* qs = blocks[b].qs;
    for (int j = 0; j < kQk; j += 16) {
      const __m128i q8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + j));
      const __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8));
      _mm512_storeu_ps(dst + j, _mm512_mul_ps(q, d));
    }
  }
}

void quantize_row_q8_0(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ8_0*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    const __m512 v0 = _mm512_loadu_ps(src);
    const __m512 v1 = _mm512_loadu_ps(src + 16);
    // max(|x|, acc) keeps acc where |x| is NaN, as the reference does.
    __m512 amax = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_setzero_ps());
    amax = _mm512_max_ps(_mm512_abs_ps(v1), amax);
    const float d = _mm512_reduce_max_ps(amax) / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    const __m512 scale = _mm512_set1_ps(inverse);
    const __m512 low = _mm512_set1_ps(-127.0f);
    const __m512 high = _mm512_set1_ps(127.0f);
    const __m512 x0 = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v0, scale), low), high);
    const __m512 x1 = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v1, scale), low), high);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[b].qs),
                     _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(x0)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[b].qs + 16),
                     _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(x1)));
  }
}

}  // namespace met::avx512
