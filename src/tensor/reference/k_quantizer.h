// The Q2_K, Q3_K, Q4_K, Q5_K and Q6_K encoders, written once as templates over a pair of level
// kernels (the only loops worth vectorizing): reference/quantize_k_ref.cc
// instantiates them with scalar kernels, kernels_avx2_k.cc with AVX2 ones. Both translation units
// build with the same flags and -ffp-contract=off, so the shared code computes the same bits in
// both, and the level kernels must match each other bit for bit (fixed 8-lane reduction order,
// explicit FMAs, round half to even).
//
// Scale search (after ggml's make_qkx2_quants / make_qx_quants): for each
// group, try a ladder of inverse scales around the obvious one; for each, snap
// every value to a code, then solve the weighted least-squares scale (and, for
// Q2_K/Q4_K/Q5_K, offset) for those codes and keep the candidate with the
// smallest weighted error. Q4_K/Q5_K weights are rms(group) + |x|, Q2_K's
// |x| (groups of 16, as ggml's quantize_row_q2_K_ref); Q3_K/Q6_K weights are x^2.
// Invariants: fitted mins are >= 0 (x ~ scale * q - min); codes always
// lie in the format's range, whatever the input.
// Threading: pure functions. Tested by tests/tensor/quantize_ref_test.cc and
// isa_kernels_test.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/k_scales.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor/reference/rounding.h"

namespace met::ref {

// Internal linkage on purpose: the two includers (quantize_k_ref.cc and
// kernels_avx2_k.cc, same flags) each get their own copy, so the linker never
// merges copies built with different floating-point flags (tests and other
// code must not include this header).
namespace {

// Weighted sums over a group for one candidate set of codes l.
struct LevelSums {
  float w_l;   // sum w * l
  float w_l2;  // sum w * l * l
  float wx_l;  // sum (w * x) * l
};

// Level kernels: a struct with two static functions,
//   LevelSums level_sums(xs, w, wx, iscale, lo, hi, n): for
//     l_i = round_code(iscale * xs[i], lo, hi), the sums above
//     (REQUIRES: n % 8 == 0);
//   void quantize_levels(x, add, d, lo, hi, n, out):
//     out[i] = round_code((x[i] + add) / d, lo, hi) - lo.
// Every implementation gives the same bits: lane k (k < 8) accumulates the
// terms i = k, k + 8, ... in order with fma (w * l, (w * l) * l, wx * l), and
// the lanes combine as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).

constexpr float kGroupMaxEps = 1e-15f;  // a group below this is all zeros

// Weighted error sum w (s*l + m - x)^2 from the sums, m being the additive
// offset (<= 0).
double weighted_error(double s, double m, const LevelSums& l, double sum_w, double sum_wx,
                      double sum_wx2) {
  return s * s * l.w_l2 + m * m * sum_w + sum_wx2 + 2.0 * s * m * l.w_l - 2.0 * s * l.wx_l -
         2.0 * m * sum_wx;
}

// A group of 16 or 32 prepared for the scale-and-min search: weights, and
// values shifted so the smallest (or 0, if all are positive) is 0.
struct ScaleMinGroup {
  static constexpr int kMaxSize = 32;
  float w[kMaxSize];
  float wx[kMaxSize];
  float xs[kMaxSize];  // x - lo
  double sum_w = 0.0;
  double sum_wx = 0.0;
  double sum_wx2 = 0.0;
  float lo = 0.0f;  // min(x, 0)
  float range = 0.0f;
};

// Returns false for a group that is constant (or NaN), whose fit is
// {0, -lo} with lo = min(x[0], 0). Weights |x|, plus rms(x) when `add_rms`.
bool prepare_scale_min_group(const float* x, int n, bool add_rms, ScaleMinGroup& g) {
  float sum_x2 = 0.0f;
  float lo = x[0];
  float hi = x[0];
  for (int i = 0; i < n; ++i) {
    sum_x2 = std::fma(x[i], x[i], sum_x2);
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  g.lo = lo > 0.0f ? 0.0f : lo;
  if (!(hi > g.lo)) return false;
  g.range = hi - g.lo;
  const float rms = add_rms ? std::sqrt(sum_x2 / static_cast<float>(n)) : 0.0f;
  for (int i = 0; i < n; ++i) {
    g.w[i] = rms + std::fabs(x[i]);
    g.wx[i] = g.w[i] * x[i];
    g.xs[i] = x[i] - g.lo;
    g.sum_w += g.w[i];
    g.sum_wx += g.wx[i];
    g.sum_wx2 += static_cast<double>(g.wx[i]) * x[i];
  }
  return true;
}

// The scale-and-min search of one group (Q2_K, Q4_K, Q5_K): codes 0..max_code,
// inverse scales (max_code + ladder_start + 0.1 step) / range for step 0..steps
// (ggml's make_qkx2_quants(size, max_code, …, rmin = ladder_start, 0.1, steps)).
struct ScaleMinSearch {
  float max_code;
  float ladder_start;
  int steps;
  int group_size;
  bool rms_weights;  // weights rms + |x| (else |x|)
};
inline constexpr ScaleMinSearch kQ2KSearch{3.0f, -0.5f, 15, 16, false};
inline constexpr ScaleMinSearch kQ4KSearch{15.0f, -1.0f, 20, 32, true};
inline constexpr ScaleMinSearch kQ5KSearch{31.0f, -0.5f, 15, 32, true};

// One group: x ~ scale * q - min with q in 0..search.max_code.
template <class Kernels>
ScaleMinFit search_scale_min_group(const float* x, const ScaleMinSearch& search) {
  const float max_code = search.max_code;
  const int n = search.group_size;
  ScaleMinGroup g;
  if (!prepare_scale_min_group(x, n, search.rms_weights, g)) return {0.0f, -g.lo};
  float iscale = max_code / g.range;
  LevelSums sums = Kernels::level_sums(g.xs, g.w, g.wx, iscale, 0.0f, max_code, n);
  double best_scale = 1.0f / iscale;
  double best_offset = g.lo;
  double best_error = weighted_error(best_scale, best_offset, sums, g.sum_w, g.sum_wx, g.sum_wx2);
  for (int step = 0; step <= search.steps; ++step) {
    iscale = (max_code + search.ladder_start + 0.1f * static_cast<float>(step)) / g.range;
    sums = Kernels::level_sums(g.xs, g.w, g.wx, iscale, 0.0f, max_code, n);
    const double det = g.sum_w * sums.w_l2 - static_cast<double>(sums.w_l) * sums.w_l;
    if (!(det > 0.0)) continue;
    double scale = (g.sum_w * sums.wx_l - g.sum_wx * sums.w_l) / det;
    double offset = (sums.w_l2 * g.sum_wx - static_cast<double>(sums.w_l) * sums.wx_l) / det;
    if (offset > 0.0) {  // the offset must not be positive: refit the scale alone
      offset = 0.0;
      scale = static_cast<double>(sums.wx_l) / sums.w_l2;
    }
    const double error = weighted_error(scale, offset, sums, g.sum_w, g.sum_wx, g.sum_wx2);
    if (error < best_error) {
      best_error = error;
      best_scale = scale;
      best_offset = offset;
    }
  }
  return {static_cast<float>(best_scale), static_cast<float>(-best_offset)};
}

// One Q4_K group of 32: x ~ scale * q - min with q in 0..15.
template <class Kernels>
ScaleMinFit search_q4_k_group(const float* x) {
  return search_scale_min_group<Kernels>(x, kQ4KSearch);
}

// A symmetric search over a group of 16 (Q3_K, Q6_K): x ~ scale * q with q in
// -levels..levels-1 (scale may be negative), weights x^2, inverse scales
// -(levels + 0.1 step) / extreme for step -9..9.
template <class Kernels>
float search_symmetric_group(const float* x, float levels) {
  constexpr int n = 16;
  const float extreme = signed_extreme(x, n);
  if (!(std::fabs(extreme) >= kGroupMaxEps)) return 0.0f;
  float w[n], wx[n];
  for (int i = 0; i < n; ++i) {
    w[i] = x[i] * x[i];
    wx[i] = w[i] * x[i];
  }
  // Maximizing (sum w x l)^2 / (sum w l^2) over candidates is minimizing the
  // weighted error at each candidate's best scale.
  LevelSums sums = Kernels::level_sums(x, w, wx, -levels / extreme, -levels, levels - 1.0f, n);
  double scale = sums.w_l2 > 0.0f ? static_cast<double>(sums.wx_l) / sums.w_l2 : 0.0;
  double best = scale * sums.wx_l;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    const float iscale = -(levels + 0.1f * static_cast<float>(step)) / extreme;
    sums = Kernels::level_sums(x, w, wx, iscale, -levels, levels - 1.0f, n);
    const double xl = sums.wx_l;
    if (sums.w_l2 > 0.0f && xl * xl > best * sums.w_l2) {
      scale = xl / sums.w_l2;
      best = scale * xl;
    }
  }
  return static_cast<float>(scale);
}

// One Q6_K group of 16: x ~ scale * q with q in -32..31.
template <class Kernels>
float search_q6_k_group(const float* x) {
  return search_symmetric_group<Kernels>(x, 32.0f);
}

// The super-block scale fields shared by Q4_K and Q5_K: each group's fit
// (search), the 6-bit scales and mins packed against fp16 d and dmin, and
// the codes 0..search.max_code of the 256 elements in order.
struct ScaleMinFields {
  uint16_t d = 0;
  uint16_t dmin = 0;
  uint8_t scales[kKScaleBytes] = {};
};

template <class Kernels>
ScaleMinFields quantize_scale_min_block(const float* x, const ScaleMinSearch& search, uint8_t* codes) {
  ScaleMinFields fields;
  ScaleMinFit fits[8];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int g = 0; g < 8; ++g) {
    fits[g] = search_scale_min_group<Kernels>(x + 32 * g, search);
    max_scale = fits[g].scale > max_scale ? fits[g].scale : max_scale;
    max_min = fits[g].min > max_min ? fits[g].min : max_min;
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  uint8_t scales[8], mins[8];
  for (int g = 0; g < 8; ++g) {
    scales[g] = static_cast<uint8_t>(round_code(inv_scale * fits[g].scale, 0.0f, 63.0f));
    mins[g] = static_cast<uint8_t>(round_code(inv_min * fits[g].min, 0.0f, 63.0f));
  }
  pack_k4_scale_mins(scales, mins, fields.scales);
  fields.d = f32_to_fp16(max_scale / 63.0f);
  fields.dmin = f32_to_fp16(max_min / 63.0f);
  const float d = fp16_to_f32(fields.d);
  const float dmin = fp16_to_f32(fields.dmin);
  for (int g = 0; g < 8; ++g) {
    const float dg = d * static_cast<float>(scales[g]);
    if (dg == 0.0f) {
      std::memset(codes + 32 * g, 0, 32);
      continue;
    }
    const float mg = dmin * static_cast<float>(mins[g]);
    Kernels::quantize_levels(x + 32 * g, mg, dg, 0.0f, search.max_code, 32, codes + 32 * g);
  }
  return fields;
}

template <class Block>
void store_scale_min_fields(const ScaleMinFields& fields, Block& block) {
  block.d = fields.d;
  block.dmin = fields.dmin;
  std::memcpy(block.scales, fields.scales, kKScaleBytes);
}

template <class Kernels>
void quantize_block_q4_k(const float* x, BlockQ4_K& block) {
  uint8_t codes[kQkK];
  store_scale_min_fields(quantize_scale_min_block<Kernels>(x, kQ4KSearch, codes), block);
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (int l = 0; l < 32; ++l) {
      block.qs[32 * chunk + l] =
          static_cast<uint8_t>(codes[64 * chunk + l] | (codes[64 * chunk + 32 + l] << 4));
    }
  }
}

// Q4_K's nibbles of the low 4 bits; bit 4 of element 64p + l in bit 2p of
// qh[l], of element 64p + 32 + l in bit 2p + 1 (BlockQ5_K).
template <class Kernels>
void quantize_block_q5_k(const float* x, BlockQ5_K& block) {
  uint8_t codes[kQkK];
  store_scale_min_fields(quantize_scale_min_block<Kernels>(x, kQ5KSearch, codes), block);
  std::memset(block.qh, 0, sizeof(block.qh));
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = codes[64 * chunk + l], hi = codes[64 * chunk + 32 + l];
      block.qs[32 * chunk + l] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
      block.qh[l] =
          static_cast<uint8_t>(block.qh[l] | ((lo >> 4) << (2 * chunk)) | ((hi >> 4) << (2 * chunk + 1)));
    }
  }
}

// 2-bit codes 0..3 of a super-block into 64 bytes (Q2_K, Q3_K's low bits):
// element 128h + 32s + l at bits 2s of byte 32h + l.
void pack_2bit_codes(const uint8_t* codes, uint8_t* qs) {
  for (int half = 0; half < 2; ++half) {
    const uint8_t* c = codes + 128 * half;
    for (int l = 0; l < 32; ++l) {
      qs[32 * half + l] = static_cast<uint8_t>(c[l] | (c[l + 32] << 2) | (c[l + 64] << 4) | (c[l + 96] << 6));
    }
  }
}

// Codes are stored +32 (0..63); see BlockQ6_K for the ql/qh interleaving.
void pack_q6_k_codes(const uint8_t* codes, BlockQ6_K& block) {
  for (int half = 0; half < 2; ++half) {
    const uint8_t* c = codes + 128 * half;
    for (int l = 0; l < 32; ++l) {
      block.ql[64 * half + l] = static_cast<uint8_t>((c[l] & 0x0F) | ((c[l + 64] & 0x0F) << 4));
      block.ql[64 * half + l + 32] =
          static_cast<uint8_t>((c[l + 32] & 0x0F) | ((c[l + 96] & 0x0F) << 4));
      block.qh[32 * half + l] =
          static_cast<uint8_t>((c[l] >> 4) | ((c[l + 32] >> 4) << 2) | ((c[l + 64] >> 4) << 4) |
                               ((c[l + 96] >> 4) << 6));
    }
  }
}

template <class Kernels>
void quantize_block_q6_k(const float* x, BlockQ6_K& block) {
  float scales[16];
  for (int g = 0; g < 16; ++g) scales[g] = search_q6_k_group<Kernels>(x + 16 * g);
  const float max_scale = signed_extreme(scales, 16);
  if (!(std::fabs(max_scale) >= kGroupMaxEps)) {
    std::memset(&block, 0, sizeof(block));
    return;
  }
  const float iscale = -128.0f / max_scale;
  block.d = f32_to_fp16(1.0f / iscale);
  const float d = fp16_to_f32(block.d);
  uint8_t codes[kQkK];
  for (int g = 0; g < 16; ++g) {
    block.scales[g] = static_cast<int8_t>(round_code(iscale * scales[g], -128.0f, 127.0f));
    const float dg = d * static_cast<float>(block.scales[g]);
    if (dg == 0.0f) {
      std::memset(codes + 16 * g, 32, 16);
      continue;
    }
    Kernels::quantize_levels(x + 16 * g, 0.0f, dg, -32.0f, 31.0f, 16, codes + 16 * g);
  }
  pack_q6_k_codes(codes, block);
}

// Q2_K: 16 groups of 16, x ~ d sc_g q - dmin m_g with 4-bit sc_g and m_g
// (one byte per group, scale in the low nibble) and q in 0..3; the codes of
// each 128-element half in 32 bytes, element 32s + l at bits 2s of byte l.
template <class Kernels>
void quantize_block_q2_k(const float* x, BlockQ2_K& block) {
  ScaleMinFit fits[16];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int g = 0; g < 16; ++g) {
    fits[g] = search_scale_min_group<Kernels>(x + 16 * g, kQ2KSearch);
    max_scale = fits[g].scale > max_scale ? fits[g].scale : max_scale;
    max_min = fits[g].min > max_min ? fits[g].min : max_min;
  }
  const float inv_scale = max_scale > 0.0f ? 15.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 15.0f / max_min : 0.0f;
  block.d = f32_to_fp16(max_scale / 15.0f);
  block.dmin = f32_to_fp16(max_min / 15.0f);
  const float d = fp16_to_f32(block.d);
  const float dmin = fp16_to_f32(block.dmin);
  uint8_t codes[kQkK];
  for (int g = 0; g < 16; ++g) {
    const auto scale = static_cast<uint8_t>(round_code(inv_scale * fits[g].scale, 0.0f, 15.0f));
    const auto min = static_cast<uint8_t>(round_code(inv_min * fits[g].min, 0.0f, 15.0f));
    block.scales[g] = static_cast<uint8_t>(scale | (min << 4));
    const float dg = d * static_cast<float>(scale);
    if (dg == 0.0f) {
      std::memset(codes + 16 * g, 0, 16);
      continue;
    }
    Kernels::quantize_levels(x + 16 * g, dmin * static_cast<float>(min), dg, 0.0f, 3.0f, 16, codes + 16 * g);
  }
  pack_2bit_codes(codes, block.qs);
}

// Q3_K: 16 groups of 16, x ~ d (sc_g - 32) (q - 4) with 6-bit sc_g
// (k_scales.h) and q in 0..7: its low two bits as Q2_K's codes, bit 2 in
// hmask (bit s of byte l for element 32s + l).
template <class Kernels>
void quantize_block_q3_k(const float* x, BlockQ3_K& block) {
  float scales[16];
  for (int g = 0; g < 16; ++g) scales[g] = search_symmetric_group<Kernels>(x + 16 * g, 4.0f);
  const float max_scale = signed_extreme(scales, 16);
  std::memset(&block, 0, sizeof(block));
  uint8_t codes[kQkK];
  std::memset(codes, 4, sizeof(codes));
  if (std::fabs(max_scale) >= kGroupMaxEps) {
    const float iscale = -32.0f / max_scale;
    block.d = f32_to_fp16(1.0f / iscale);
    const float d = fp16_to_f32(block.d);
    uint8_t stored[16];
    for (int g = 0; g < 16; ++g) {
      const float code = round_code(iscale * scales[g], -32.0f, 31.0f);
      stored[g] = static_cast<uint8_t>(code + 32.0f);
      const float dg = d * code;
      if (dg != 0.0f) Kernels::quantize_levels(x + 16 * g, 0.0f, dg, -4.0f, 3.0f, 16, codes + 16 * g);
    }
    pack_q3_k_scales(stored, block.scales);
  }
  for (int e = 0; e < kQkK; ++e) {
    if (codes[e] > 3) block.hmask[e % 32] = static_cast<uint8_t>(block.hmask[e % 32] | (1 << (e / 32)));
    codes[e] &= 3;
  }
  pack_2bit_codes(codes, block.qs);
}

template <class Kernels>
void quantize_row_q2_k_with(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ2_K*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) quantize_block_q2_k<Kernels>(src + b * kQkK, blocks[b]);
}

template <class Kernels>
void quantize_row_q3_k_with(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ3_K*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) quantize_block_q3_k<Kernels>(src + b * kQkK, blocks[b]);
}

template <class Kernels>
void quantize_row_q4_k_with(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ4_K*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    quantize_block_q4_k<Kernels>(src + b * kQkK, blocks[b]);
  }
}

template <class Kernels>
void quantize_row_q5_k_with(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ5_K*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    quantize_block_q5_k<Kernels>(src + b * kQkK, blocks[b]);
  }
}

template <class Kernels>
void quantize_row_q6_k_with(const float* src, uint8_t* dst, int64_t num_elements) {
  auto* blocks = reinterpret_cast<BlockQ6_K*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    quantize_block_q6_k<Kernels>(src + b * kQkK, blocks[b]);
  }
}

}  // namespace
}  // namespace met::ref
