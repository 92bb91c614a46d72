// AVX2 + F16C row kernels: F16 and BF16 <-> F32 conversions and Q8_0 both
// ways, 8 floats per vector. Each reproduces its reference in
// reference/*_ref.cc bit for bit: vcvtps2ph rounds to nearest even and quiets
// NaN like f32_to_fp16; BF16 rounds with integer adds (not vcvtneps2bf16,
// which flushes subnormals); Q8_0 takes the max with _mm256_max_ps(|x|, acc)
// (NaN ignored, like the reference) and rounds with vcvtps2dq (ties to even).
// Built with the baseline flags (-march=x86-64-v3), so sharing inline code
// with baseline translation units is safe here.
// Threading: pure functions. Tested by tests/tensor/isa_kernels_test.cc.
#include <immintrin.h>

#include <cstring>

#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/isa_kernels.h"

namespace met::avx2 {
namespace {

// 8 floats -> 8 bf16 in the low 16 bits of each 32-bit lane.
__m256i round_to_bf16(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}

float horizontal_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

}  // namespace

void dequantize_row_f16(const uint8_t* src, float* dst, int64_t num_elements) {
  int64_t i = 0;
  for (; i + 8 <= num_elements; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < num_elements; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, sizeof(h));
    dst[i] = _cvtsh_ss(h);
  }
}

void quantize_row_f16(const float* src, uint8_t* dst, int64_t num_elements) {
  int64_t i = 0;
  for (; i + 8 <= num_elements; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), h);
  }
  for (; i < num_elements; ++i) {
    const uint16_t h = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
    std::memcpy(dst + 2 * i, &h, sizeof(h));
  }
}

void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t num_elements) {
  int64_t i = 0;
  for (; i + 8 <= num_elements; i += 8) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m256i bits = _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16);
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(bits));
  }
  for (; i < num_elements; ++i) {
    uint16_t b;
    std::memcpy(&b, src + 2 * i, sizeof(b));
    dst[i] = bf16_to_f32(b);
  }
}

void quantize_row_bf16(const float* src, uint8_t* dst, int64_t num_elements) {
  int64_t i = 0;
  for (; i + 16 <= num_elements; i += 16) {
    const __m256i a = round_to_bf16(_mm256_loadu_ps(src + i));
    const __m256i b = round_to_bf16(_mm256_loadu_ps(src + i + 8));
    // packus interleaves 128-bit halves: a0-3 b0-3 a4-7 b4-7; restore order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), packed);
  }
  for (; i < num_elements; ++i) {
    const uint16_t b = f32_to_bf16(src[i]);
    std::memcpy(dst + 2 * i, &b, sizeof(b));
  }
}

void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t num_elements) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(blocks[b].d));
    const int8_t* qs = blocks[b].qs;
    for (int j = 0; j < kQk; j += 8) {
      const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs + j));
      const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8));
      _mm256_storeu_ps(dst + j, _mm256_mul_ps(q, d));
    }
  }
}

void quantize_row_q8_0(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ8_0*>(dst);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(src + 8 * k);
      amax = _mm256_max_ps(_mm256_andnot_ps(sign, v[k]), amax);
    }
    const float d = horizontal_max(amax) / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    const __m256 scale = _mm256_set1_ps(inverse);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      __m256 x = _mm256_max_ps(_mm256_mul_ps(v[k], scale), _mm256_set1_ps(-127.0f));
      x = _mm256_min_ps(x, _mm256_set1_ps(127.0f));
      q[k] = _mm256_cvtps_epi32(x);
    }
    // packs work per 128-bit half; the permute puts the 4-byte groups back
    // in element order.
    const __m256i q16 =
        _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    const __m256i q8 = _mm256_permutevar8x32_epi32(q16, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(blocks[b].qs), q8);
  }
}

}  // namespace met::avx2
