// Reference row kernels (see kernels_ref.h). RoPE follows llama.cpp's
// rope_yarn: per pair i the extrapolated angle pos * base^(-2i/dims) and the
// interpolated one (times freq_scale) are mixed by a ramp between the YaRN
// correction dims of beta_fast and beta_slow over original_context, and with
// YaRN on, cos and sin are scaled by attn_factor * (1 + 0.1 ln(1/freq_scale)).
// Angles are computed in double (llama.cpp's float running product drifts
// by a few ulps per pair); the rotation is plain float without contraction.
// Threading: pure functions. Tested by tests/backend/ops_test.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "core/check.h"

namespace met::cpu::ref {
namespace {

// The pair index where the rotation at `beta` turns per original context.
float yarn_corr_dim(int32_t dims, int32_t original_context, float beta, float base) {
  return static_cast<float>(dims) *
         std::log(static_cast<float>(original_context) / (beta * 2.0f * std::numbers::pi_v<float>)) /
         (2.0f * std::log(base));
}

// 1 below `low`, 0 above `high`, linear between.
float yarn_ramp(float low, float high, int32_t pair) {
  const float y = (static_cast<float>(pair) - low) / std::max(0.001f, high - low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  double sum_squares = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_squares += static_cast<double>(x[i]) * x[i];
  const auto mean = static_cast<float>(sum_squares / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out) {
  double sum_squares = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_squares += static_cast<double>(x[i]) * x[i];
  const auto mean = static_cast<float>(sum_squares / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) {
    const float gate = z[i] / (1.0f + std::exp(-z[i]));
    out[i] = x[i] * scale * weight[i] * gate;
  }
}

void l2_norm(float* x, int64_t n, float eps) {
  double sum_squares = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_squares += static_cast<double>(x[i]) * x[i];
  const float scale = 1.0f / std::max(static_cast<float>(std::sqrt(sum_squares)), eps);
  for (int64_t i = 0; i < n; ++i) x[i] *= scale;
}

void rope_cache(int32_t pos, const RopeParams& p, float* cos_sin) {
  MET_DCHECK(p.rope_dims > 0 && p.rope_dims % 2 == 0 && p.rope_dims <= p.head_dim);
  const bool yarn = p.ext_factor != 0.0f;
  float low = 0.0f, high = 0.0f, mscale = p.attn_factor;
  if (yarn) {
    MET_DCHECK(p.original_context > 0, "YaRN needs the original context");
    low = std::max(0.0f, std::floor(yarn_corr_dim(p.rope_dims, p.original_context, p.beta_fast,
                                                  p.freq_base)));
    high = std::min(static_cast<float>(p.rope_dims - 1),
                    std::ceil(yarn_corr_dim(p.rope_dims, p.original_context, p.beta_slow,
                                            p.freq_base)));
    mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  }
  for (int32_t i = 0; i < p.rope_dims / 2; ++i) {
    const double exponent = -2.0 * i / p.rope_dims;
    auto extrapolated = static_cast<float>(pos * std::pow(static_cast<double>(p.freq_base), exponent));
    if (p.freq_factors != nullptr) extrapolated /= p.freq_factors[i];
    const float interpolated = p.freq_scale * extrapolated;
    float theta = interpolated;
    if (yarn) {
      const float mix = yarn_ramp(low, high, i) * p.ext_factor;
      theta = interpolated * (1.0f - mix) + extrapolated * mix;
    }
    cos_sin[2 * i] = std::cos(theta) * mscale;
    cos_sin[2 * i + 1] = std::sin(theta) * mscale;
  }
}

void rope_rotate(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                 const float* cos_sin) {
  const int32_t half = rope_dims / 2;
  for (int32_t h = 0; h < num_heads; ++h) {
    float* head = x + static_cast<int64_t>(h) * head_dim;
    for (int32_t i = 0; i < half; ++i) {
      float* first = neox ? head + i : head + 2 * i;
      float* second = neox ? head + i + half : head + 2 * i + 1;
      const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
      const float x0 = *first, x1 = *second;
      *first = x0 * c - x1 * s;
      *second = x0 * s + x1 * c;
    }
  }
}

void rope(float* x, int32_t num_heads, int32_t pos, const RopeParams& p) {
  float cos_sin[kMaxRopeDims];
  MET_CHECK(p.rope_dims <= kMaxRopeDims, "rope: {} rotated dims, at most {}", p.rope_dims,
            kMaxRopeDims);
  rope_cache(pos, p, cos_sin);
  rope_rotate(x, num_heads, p.head_dim, p.rope_dims, p.layout == RopeLayout::kNeox, cos_sin);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void swiglu_oai(const float* gate, const float* up, int64_t n, float* out) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kLimit);
    const float u = std::clamp(up[i], -kLimit, kLimit);
    out[i] = g / (1.0f + std::exp(-kAlpha * g)) * (u + 1.0f);
  }
}

void add(const float* a, const float* b, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void softmax(float* x, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const auto inverse = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inverse;
}

int64_t argmax(const float* x, int64_t n) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) continue;
    if (best < 0 || x[i] > x[best]) best = i;
  }
  return best < 0 ? 0 : best;
}

}  // namespace met::cpu::ref
