// The element-wise and row kernels of a llama-family forward pass: RMSNorm,
// RoPE (normal and NeoX layouts; linear and YaRN scaling), SwiGLU, residual
// add, softmax, argmax and embedding-row gather; and the recurrent layers'
// gated RMSNorm and L2 norm. Each has a scalar reference
// in kernels/reference/ and a vectorized version chosen at run time.
// Threading: pure functions over the rows given; any thread.
// Tested by tests/backend/ops_test.cc.
#pragma once

#include <cstdint>

#include "core/ids.h"
#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met::cpu {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]. out may alias x.
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);

// Gated RMSNorm (Qwen3.5's linear-attention output norm):
// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i] * silu(z[i]). out may alias x or z.
void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out);

// In place: x[i] *= 1 / max(sqrt(sum(x^2)), eps) (ggml's l2_norm).
void l2_norm(float* x, int64_t n, float eps);

enum class RopeLayout {
  kNormal,  // rotate adjacent pairs (x[2i], x[2i+1]): llama, mistral
  kNeox,    // rotate halves (x[i], x[i + dims/2]): qwen2, qwen3
};

inline constexpr int32_t kMaxRopeDims = 1024;

struct RopeParams {
  int32_t head_dim = 0;
  int32_t rope_dims = 0;          // leading dims of each head that rotate (even, <= kMaxRopeDims)
  float freq_base = 10000.0f;
  RopeLayout layout = RopeLayout::kNormal;
  // Linear scaling: positions scaled by freq_scale (= 1 / factor).
  float freq_scale = 1.0f;
  // YaRN (llama.cpp's definition); ext_factor 0 disables it.
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  int32_t original_context = 0;
  // Per-pair frequency divisors (rope_dims / 2 of them; llama.cpp's
  // freq_factors, from a file's rope_freqs.weight: Llama 3.x's scaling), or
  // null: pair i's extrapolated angle is pos * base^(-2i/rope_dims) / f[i].
  const float* freq_factors = nullptr;
};

// Rotates each of `num_heads` heads of one row (head h at x + h*head_dim) for
// position `pos`, in place: rope_table then rope_from.
void rope(float* x, int32_t num_heads, int32_t pos, const RopeParams& p);
// The cos and sin of each rotated pair at position `pos` (p.rope_dims
// floats, pair i's at 2i and 2i + 1): what every row at `pos` rotates by.
void rope_table(int32_t pos, const RopeParams& p, float* cos_sin);
// rope() of a row whose position's rope_table is `cos_sin`.
void rope_from(float* x, int32_t num_heads, const RopeParams& p, const float* cos_sin);

// out[i] = silu(gate[i]) * up[i]. out may alias gate or up.
void swiglu(const float* gate, const float* up, int64_t n, float* out);

// gpt-oss's clamped SwiGLU (ggml's swiglu_oai, alpha 1.702, limit 7):
// g = min(gate[i], 7), u = clamp(up[i], -7, 7), out[i] = g * sigmoid(1.702 g) * (u + 1).
// out may alias gate or up.
void swiglu_oai(const float* gate, const float* up, int64_t n, float* out);

// out[i] = gelu(gate[i]) * up[i] with ggml's tanh approximation of gelu,
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) (gemma's GeGLU). out may
// alias gate or up.
void geglu(const float* gate, const float* up, int64_t n, float* out);

// out[i] = gelu(x[i]), the same tanh approximation (BERT's FFN). out may alias x.
void gelu(const float* x, int64_t n, float* out);

// LayerNorm (ggml's norm, then the weight and bias): out[i] = (x[i] - mean)
// / sqrt(var + eps) * weight[i] + bias[i], mean and var over the n values.
// Scalar only (a row per token, small beside the matmuls). out may alias x.
void layer_norm(const float* x, const float* weight, const float* bias, int64_t n, float eps, float* out);

// out[i] = a[i] + b[i]. out may alias a or b.
void add(const float* a, const float* b, int64_t n, float* out);

// In place: x = exp(x - max) / sum.
void softmax(float* x, int64_t n);

// Index of the largest element (the first on ties); NaN never wins.
int64_t argmax(const float* x, int64_t n);

// out = row `id` of an embedding table stored as `type` (cols per row).
void embedding_row(GgmlType type, const uint8_t* table, int64_t cols, TokenId id, float* out);

}  // namespace met::cpu
