// Reference matmul kernels and activation preparation (see kernels_ref.h).
// Activations are quantized with src/tensor's reference quantizers, which its
// fast versions match bit for bit, so the prepared bytes are one definition.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include <cstring>
#include <type_traits>

#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/mxfp4.h"
#include "tensor/reference/k_scales.h"
#include "tensor/reference/reference_kernels.h"

namespace met::cpu::ref {
namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Runs `dot(weight_row, act_row)` over every output of the task.
template <typename RowDot>
void for_each_output(const MatmulTask& t, RowDot dot) {
  for (int64_t i = 0; i < t.m; ++i) {
    const uint8_t* act = t.act + static_cast<size_t>(i) * t.act_row_bytes;
    for (int64_t n = t.n_begin; n < t.n_end; ++n) {
      const uint8_t* w = t.weights + static_cast<size_t>(n) * t.weight_row_bytes;
      t.y[i * t.y_stride + n] = static_cast<float>(dot(w, act, t.cols));
    }
  }
}

int dot_q8(const int8_t* a, const int8_t* b, int n) {
  int sum = 0;
  for (int j = 0; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

double dot_q8_0(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const BlockQ8_0*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_0*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQk; ++b) {
    const int isum = dot_q8(wb[b].qs, ab[b].qs, kQk);
    const float scale = fp16_to_f32(wb[b].d) * fp16_to_f32(ab[b].d);
    sum += static_cast<double>(scale * static_cast<float>(isum));
  }
  return sum;
}

// The 4-bit code of element j of a 32-element block (elements 0..15 in the
// low nibbles of qs, 16..31 in the high ones).
template <class Block>
int nibble(const Block& block, int j) {
  return j < kQk / 2 ? block.qs[j] & 0x0F : block.qs[j - kQk / 2] >> 4;
}

// The 5-bit code of element j of a Q5_0 / Q5_1 block (bit 4: bit j of qh).
template <class Block>
int q5_code(const Block& block, int j) {
  uint32_t qh;
  std::memcpy(&qh, block.qh, sizeof(qh));
  return nibble(block, j) | static_cast<int>(((qh >> j) & 1u) << 4);
}

// Each type's value of element j (its code, offset or looked up) and its
// block scale.
int q4_0_value(const BlockQ4_0& b, int j) { return nibble(b, j) - 8; }
int q5_0_value(const BlockQ5_0& b, int j) { return q5_code(b, j) - 16; }
int mxfp4_value(const BlockMxfp4& b, int j) { return kMxfp4Values[nibble(b, j)]; }
int iq4_nl_value(const BlockIq4Nl& b, int j) { return kIq4Values[nibble(b, j)]; }
template <class Block>
float fp16_scale(const Block& b) {
  return fp16_to_f32(b.d);
}
// 2^(e-128): with MXFP4's doubled E2M1 values, as ggml's
// ggml_vec_dot_mxfp4_q8_0 (the doubled values against the halved scale).
float mxfp4_scale(const BlockMxfp4& b) { return e8m0_to_f32_half(b.e); }

// Per block: (scale_w * d_a) * sum_j value_j a_j (Q4_0, Q5_0, MXFP4, IQ4_NL).
template <class Block, int (*kValue)(const Block&, int), float (*kScale)(const Block&)>
double dot_q8_0_blocks(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const Block*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_0*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQk; ++b) {
    int isum = 0;
    for (int j = 0; j < kQk; ++j) isum += kValue(wb[b], j) * ab[b].qs[j];
    const float scale = kScale(wb[b]) * fp16_to_f32(ab[b].d);
    sum += static_cast<double>(scale * static_cast<float>(isum));
  }
  return sum;
}

// Per block: (d_w * d_a) * sum_j q_j a_j + (m_w * d_a) * sum_j a_j (Q4_1, Q5_1).
template <class Block, int (*kCode)(const Block&, int)>
double dot_with_min(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const Block*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_0*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQk; ++b) {
    int isum = 0, asum = 0;
    for (int j = 0; j < kQk; ++j) {
      isum += kCode(wb[b], j) * ab[b].qs[j];
      asum += ab[b].qs[j];
    }
    const float da = fp16_to_f32(ab[b].d);
    const float scale = fp16_to_f32(wb[b].d) * da, min_scale = fp16_to_f32(wb[b].m) * da;
    sum += static_cast<double>(scale * static_cast<float>(isum) + min_scale * static_cast<float>(asum));
  }
  return sum;
}

// Per super-block: d_a * d_w * sum_g (ls_g - 32) * sum_{e in g} kIq4Values[q_e] a_e.
double dot_iq4_xs(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const BlockIq4Xs*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_K*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQkK; ++b) {
    const BlockIq4Xs& wk = wb[b];
    int isum = 0;
    for (int g = 0; g < 8; ++g) {
      const int ls = (((wk.scales_l[g / 2] >> (4 * (g % 2))) & 0x0F) | (((wk.scales_h >> (2 * g)) & 3) << 4)) - 32;
      const uint8_t* qs = wk.qs + 16 * g;
      const int8_t* a = ab[b].qs + 32 * g;
      int dot = 0;
      for (int j = 0; j < 16; ++j) dot += kIq4Values[qs[j] & 0x0F] * a[j] + kIq4Values[qs[j] >> 4] * a[j + 16];
      isum += ls * dot;
    }
    const float d = ab[b].d * fp16_to_f32(wk.d);
    sum += static_cast<double>(d * static_cast<float>(isum));
  }
  return sum;
}

// The code of element 32 sub + l of a Q4_K block (its nibble), or of a
// Q5_K block (bit 4 of element 64p + l is bit 2p of qh[l], of element
// 64p + 32 + l bit 2p + 1, i.e. bit `sub` of qh[l]).
template <class Block>
int k4_code(const Block& block, int sub, int l) {
  const int code = (block.qs[32 * (sub / 2) + l] >> (4 * (sub % 2))) & 0x0F;
  if constexpr (std::is_same_v<Block, BlockQ5_K>) return code | (((block.qh[l] >> sub) & 1) << 4);
  return code;
}

// Per super-block: d_a * (d * sum_j sc_j dot_j - dmin * sum_j m_j sum_j(a)) (Q4_K, Q5_K).
template <class Block>
double dot_scale_min_k(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const Block*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_K*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQkK; ++b) {
    const Block& wk = wb[b];
    const BlockQ8_K& ak = ab[b];
    int scaled = 0;
    int mins = 0;
    for (int sub = 0; sub < 8; ++sub) {
      const met::ref::ScaleMin sm = met::ref::unpack_k4_scale_min(wk.scales, sub);
      int dot = 0;
      for (int l = 0; l < 32; ++l) dot += k4_code(wk, sub, l) * ak.qs[32 * sub + l];
      scaled += sm.scale * dot;
      mins += sm.min * (ak.bsums[2 * sub] + ak.bsums[2 * sub + 1]);
    }
    const float d = ak.d * fp16_to_f32(wk.d);
    const float dmin = ak.d * fp16_to_f32(wk.dmin);
    sum += static_cast<double>(d * static_cast<float>(scaled) - dmin * static_cast<float>(mins));
  }
  return sum;
}

// The 2-bit code (0..3) of element e of a Q2_K block, or the low bits of a
// Q3_K code: bits 2s of byte 32h + l for element 128h + 32s + l.
template <class Block>
int low2_code(const Block& block, int e) {
  return (block.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Per super-block: d_a * (d * sum_g sc_g dot_g - dmin * sum_g m_g sum_g(a)),
// sc_g and m_g the low and high nibbles of scales[g] (Q2_K).
double dot_q2_k(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const BlockQ2_K*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_K*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQkK; ++b) {
    int scaled = 0;
    int mins = 0;
    for (int g = 0; g < 16; ++g) {
      int dot = 0;
      for (int e = 16 * g; e < 16 * g + 16; ++e) dot += low2_code(wb[b], e) * ab[b].qs[e];
      scaled += (wb[b].scales[g] & 0x0F) * dot;
      mins += (wb[b].scales[g] >> 4) * ab[b].bsums[g];
    }
    const float d = ab[b].d * fp16_to_f32(wb[b].d);
    const float dmin = ab[b].d * fp16_to_f32(wb[b].dmin);
    sum += static_cast<double>(d * static_cast<float>(scaled) - dmin * static_cast<float>(mins));
  }
  return sum;
}

// Per super-block: d_a * d * sum_g sc_g * sum_{e in g} q_e a_e, q_e the low
// two bits plus 4 times the hmask bit, minus 4 (Q3_K).
double dot_q3_k(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const BlockQ3_K*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_K*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQkK; ++b) {
    int isum = 0;
    for (int g = 0; g < 16; ++g) {
      int dot = 0;
      for (int e = 16 * g; e < 16 * g + 16; ++e) {
        const int high = (wb[b].hmask[e % 32] >> (e / 32)) & 1;
        dot += (low2_code(wb[b], e) + 4 * high - 4) * ab[b].qs[e];
      }
      isum += met::ref::unpack_q3_k_scale(wb[b].scales, g) * dot;
    }
    const float d = ab[b].d * fp16_to_f32(wb[b].d);
    sum += static_cast<double>(d * static_cast<float>(isum));
  }
  return sum;
}

// The 6-bit code (0..63) of element e of a Q6_K block, as the decoder reads it.
int q6_k_code(const BlockQ6_K& block, int e) {
  const int half = e / 128, l = e % 32, k = (e % 128) / 32;
  const int nibble = (block.ql[64 * half + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
  return nibble | (((block.qh[32 * half + l] >> (2 * k)) & 3) << 4);
}

// Per super-block: d_a * d * sum_g sc_g * sum_{e in g} (q_e - 32) a_e.
double dot_q6_k(const uint8_t* w, const uint8_t* act, int64_t cols) {
  const auto* wb = reinterpret_cast<const BlockQ6_K*>(w);
  const auto* ab = reinterpret_cast<const BlockQ8_K*>(act);
  double sum = 0.0;
  for (int64_t b = 0; b < cols / kQkK; ++b) {
    int isum = 0;
    for (int g = 0; g < 16; ++g) {
      int dot = 0;
      for (int e = 16 * g; e < 16 * g + 16; ++e) dot += (q6_k_code(wb[b], e) - 32) * ab[b].qs[e];
      isum += wb[b].scales[g] * dot;
    }
    const float d = ab[b].d * fp16_to_f32(wb[b].d);
    sum += static_cast<double>(d * static_cast<float>(isum));
  }
  return sum;
}

}  // namespace

void prepare_f32(const float* x, int64_t cols, uint8_t* out) {
  std::memcpy(out, x, static_cast<size_t>(cols) * sizeof(float));
}

void prepare_bf16(const float* x, int64_t cols, uint8_t* out) {
  met::ref::quantize_row_bf16(x, out, cols);
}

void prepare_q8_0(const float* x, int64_t cols, uint8_t* out) {
  MET_DCHECK(cols % kQk == 0);
  met::ref::quantize_row_q8_0(x, out, cols);
  const int64_t num_blocks = cols / kQk;
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(out);
  auto* sums = out + num_blocks * sizeof(BlockQ8_0);
  uint8_t* tails = sums + num_blocks * (kQk / 4) * sizeof(int16_t);
  for (int64_t b = 0; b < num_blocks; ++b) {
    int32_t block_sum = 0;
    for (int lane = 0; lane < kQk / 4; ++lane) {
      const int8_t* q = blocks[b].qs + 4 * lane;
      const auto s16 = static_cast<int16_t>(q[0] + q[1] + q[2] + q[3]);
      std::memcpy(sums + 2 * (8 * b + lane), &s16, sizeof(s16));
      block_sum += s16;
    }
    const ActQ8_0Tail tail{-128 * block_sum, fp16_to_f32(blocks[b].d)};
    std::memcpy(tails + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), &tail, sizeof(tail));
  }
}

void prepare_q8_k(const float* x, int64_t cols, uint8_t* out) {
  met::ref::quantize_row_q8_k(x, out, cols);
}

void matmul_f32(const MatmulTask& task) {
  for_each_output(task, [](const uint8_t* w, const uint8_t* act, int64_t cols) {
    double sum = 0.0;
    for (int64_t k = 0; k < cols; ++k) {
      float wk, ak;
      std::memcpy(&wk, w + 4 * k, 4);
      std::memcpy(&ak, act + 4 * k, 4);
      sum += static_cast<double>(wk) * static_cast<double>(ak);
    }
    return sum;
  });
}

void matmul_f16(const MatmulTask& task) {
  for_each_output(task, [](const uint8_t* w, const uint8_t* act, int64_t cols) {
    double sum = 0.0;
    for (int64_t k = 0; k < cols; ++k) {
      float ak;
      std::memcpy(&ak, act + 4 * k, 4);
      sum += static_cast<double>(fp16_to_f32(load_u16(w + 2 * k))) * static_cast<double>(ak);
    }
    return sum;
  });
}

void matmul_bf16(const MatmulTask& task) {
  for_each_output(task, [](const uint8_t* w, const uint8_t* act, int64_t cols) {
    double sum = 0.0;
    for (int64_t k = 0; k < cols; ++k) {
      const float product = bf16_to_f32(load_u16(w + 2 * k)) * bf16_to_f32(load_u16(act + 2 * k));
      sum += static_cast<double>(product);  // exact: 8-bit by 8-bit significands
    }
    return sum;
  });
}

void matmul_q8_0(const MatmulTask& task) { for_each_output(task, dot_q8_0); }
void matmul_q4_0(const MatmulTask& task) {
  for_each_output(task, dot_q8_0_blocks<BlockQ4_0, q4_0_value, fp16_scale<BlockQ4_0>>);
}
void matmul_mxfp4(const MatmulTask& task) {
  for_each_output(task, dot_q8_0_blocks<BlockMxfp4, mxfp4_value, mxfp4_scale>);
}
void matmul_q4_k(const MatmulTask& task) { for_each_output(task, dot_scale_min_k<BlockQ4_K>); }
void matmul_q5_k(const MatmulTask& task) { for_each_output(task, dot_scale_min_k<BlockQ5_K>); }
void matmul_q2_k(const MatmulTask& task) { for_each_output(task, dot_q2_k); }
void matmul_q3_k(const MatmulTask& task) { for_each_output(task, dot_q3_k); }
void matmul_q5_0(const MatmulTask& task) {
  for_each_output(task, dot_q8_0_blocks<BlockQ5_0, q5_0_value, fp16_scale<BlockQ5_0>>);
}
void matmul_q4_1(const MatmulTask& task) { for_each_output(task, dot_with_min<BlockQ4_1, nibble<BlockQ4_1>>); }
void matmul_q5_1(const MatmulTask& task) { for_each_output(task, dot_with_min<BlockQ5_1, q5_code<BlockQ5_1>>); }
void matmul_iq4_nl(const MatmulTask& task) {
  for_each_output(task, dot_q8_0_blocks<BlockIq4Nl, iq4_nl_value, fp16_scale<BlockIq4Nl>>);
}
void matmul_iq4_xs(const MatmulTask& task) { for_each_output(task, dot_iq4_xs); }
void matmul_q6_k(const MatmulTask& task) { for_each_output(task, dot_q6_k); }

}  // namespace met::cpu::ref
