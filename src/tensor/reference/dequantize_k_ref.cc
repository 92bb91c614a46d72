// Reference decoders for the k-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K):
// 256-element super-blocks with per-group scales, decoded as ggml defines
// them, with the same float operations in the same order (so bit-identical to
// ggml's scalar decoders). Bit layouts are documented on the structs in
// tensor/block_types.h and the scale packing in k_scales.h.
// Threading: pure functions. Tested by tests/tensor/dequantize_k_ref_test.cc.
#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/k_scales.h"
#include "tensor/reference/reference_kernels.h"

namespace met::ref {

void dequantize_row_q2_k(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockQ2_K*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    const BlockQ2_K& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    const float dmin = fp16_to_f32(block.dmin);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* qs = block.qs + 32 * half;
      for (int shift_index = 0; shift_index < 4; ++shift_index) {
        const int shift = 2 * shift_index;
        for (int sub = 0; sub < 2; ++sub) {  // two groups of 16 per bit pair
          const uint8_t packed = block.scales[8 * half + 2 * shift_index + sub];
          const float dl = d * static_cast<float>(packed & 0x0F);
          const float ml = dmin * static_cast<float>(packed >> 4);
          for (int l = 0; l < 16; ++l) {
            const int q = (qs[16 * sub + l] >> shift) & 3;
            *dst++ = dl * static_cast<float>(q) - ml;
          }
        }
      }
    }
  }
}

void dequantize_row_q3_k(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockQ3_K*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    const BlockQ3_K& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* qs = block.qs + 32 * half;
      for (int shift_index = 0; shift_index < 4; ++shift_index) {
        const int shift = 2 * shift_index;
        const int high_bit = 4 * half + shift_index;  // hmask bit for these 32 elements
        for (int sub = 0; sub < 2; ++sub) {
          const int group = 8 * half + 2 * shift_index + sub;
          const float dl = d * static_cast<float>(unpack_q3_k_scale(block.scales, group));
          for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
            const int low = (qs[l] >> shift) & 3;
            const int offset = ((block.hmask[l] >> high_bit) & 1) != 0 ? 0 : 4;
            *dst++ = dl * static_cast<float>(low - offset);
          }
        }
      }
    }
  }
}

void dequantize_row_q4_k(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockQ4_K*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    const BlockQ4_K& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    const float dmin = fp16_to_f32(block.dmin);
    for (int chunk = 0; chunk < 4; ++chunk) {  // 64 elements: two groups of 32
      const uint8_t* qs = block.qs + 32 * chunk;
      const ScaleMin low = unpack_k4_scale_min(block.scales, 2 * chunk);
      const ScaleMin high = unpack_k4_scale_min(block.scales, 2 * chunk + 1);
      const float d1 = d * static_cast<float>(low.scale);
      const float m1 = dmin * static_cast<float>(low.min);
      const float d2 = d * static_cast<float>(high.scale);
      const float m2 = dmin * static_cast<float>(high.min);
      for (int l = 0; l < 32; ++l) *dst++ = d1 * static_cast<float>(qs[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * static_cast<float>(qs[l] >> 4) - m2;
    }
  }
}

void dequantize_row_q5_k(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockQ5_K*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    const BlockQ5_K& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    const float dmin = fp16_to_f32(block.dmin);
    for (int chunk = 0; chunk < 4; ++chunk) {
      const uint8_t* qs = block.qs + 32 * chunk;
      const ScaleMin low = unpack_k4_scale_min(block.scales, 2 * chunk);
      const ScaleMin high = unpack_k4_scale_min(block.scales, 2 * chunk + 1);
      const float d1 = d * static_cast<float>(low.scale);
      const float m1 = dmin * static_cast<float>(low.min);
      const float d2 = d * static_cast<float>(high.scale);
      const float m2 = dmin * static_cast<float>(high.min);
      const int low_bit = 2 * chunk;
      for (int l = 0; l < 32; ++l) {
        const int q = (qs[l] & 0x0F) | (((block.qh[l] >> low_bit) & 1) << 4);
        *dst++ = d1 * static_cast<float>(q) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int q = (qs[l] >> 4) | (((block.qh[l] >> (low_bit + 1)) & 1) << 4);
        *dst++ = d2 * static_cast<float>(q) - m2;
      }
    }
  }
}

void dequantize_row_q6_k(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockQ6_K*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b, dst += kQkK) {
    const BlockQ6_K& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = block.ql + 64 * half;
      const uint8_t* qh = block.qh + 32 * half;
      const int8_t* scales = block.scales + 8 * half;
      float* y = dst + 128 * half;
      for (int l = 0; l < 32; ++l) {
        // Element l + 32k takes ql's nibble k / 2 of byte l + 32 * (k % 2)
        // and bits 2k, 2k + 1 of qh[l].
        for (int k = 0; k < 4; ++k) {
          const int nibble = (ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
          const int q = (nibble | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
          y[l + 32 * k] = d * static_cast<float>(scales[l / 16 + 2 * k]) * static_cast<float>(q);
        }
      }
    }
  }
}

void dequantize_row_q8_k(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockQ8_K*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    const BlockQ8_K& block = blocks[b];
    const float d = block.d;
    for (int j = 0; j < kQkK; ++j) *dst++ = d * static_cast<float>(block.qs[j]);
  }
}

}  // namespace met::ref
