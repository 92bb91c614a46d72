// ops.h's entry points: each runs the selected tier's kernel (ops_kernels.h);
// embedding_row decodes with src/tensor's selected row kernels.
// Threading: pure functions; the selected table is built once (function-local
// static). Tested by tests/backend/ops_test.cc.
#include "backend/cpu/kernels/ops.h"

#include <cmath>

#include "backend/cpu/kernels/ops_kernels.h"
#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "core/check.h"
#include "tensor/row_kernels.h"

namespace met::cpu {
namespace {

constexpr OpsKernels kOpsReference{ref::rms_norm, ref::rope_rotate, ref::swiglu,         ref::add,
                                   ref::softmax,  ref::argmax,      ref::rms_norm_gated, ref::l2_norm,
                                   ref::swiglu_oai};
constexpr OpsKernels kOpsAvx2{avx2::rms_norm, avx2::rope_rotate, avx2::swiglu,         avx2::add,
                              avx2::softmax,  avx2::argmax,      avx2::rms_norm_gated, avx2::l2_norm,
                              avx2::swiglu_oai};
constexpr OpsKernels kOpsAvx512{avx512::rms_norm, avx512::rope_rotate, avx512::swiglu,         avx512::add,
                                avx512::softmax,  avx512::argmax,      avx512::rms_norm_gated, avx512::l2_norm,
                                avx512::swiglu_oai};

// Each member from the highest tier at or below `selected` that has one.
OpsKernels build_selected(Isa selected) {
  OpsKernels out = kOpsReference;
  for (Isa tier : {Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    if (tier > selected) break;
    const OpsKernels k = ops_kernels_for_isa(tier);
    if (k.rms_norm != nullptr) out.rms_norm = k.rms_norm;
    if (k.rope_rotate != nullptr) out.rope_rotate = k.rope_rotate;
    if (k.swiglu != nullptr) out.swiglu = k.swiglu;
    if (k.add != nullptr) out.add = k.add;
    if (k.softmax != nullptr) out.softmax = k.softmax;
    if (k.argmax != nullptr) out.argmax = k.argmax;
    if (k.rms_norm_gated != nullptr) out.rms_norm_gated = k.rms_norm_gated;
    if (k.l2_norm != nullptr) out.l2_norm = k.l2_norm;
    if (k.swiglu_oai != nullptr) out.swiglu_oai = k.swiglu_oai;
  }
  return out;
}

}  // namespace

OpsKernels ops_kernels_for_isa(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return kOpsReference;
    case Isa::kAvx2:
      return kOpsAvx2;
    case Isa::kAvxVnni:
      return {};  // AVX2's serve
    case Isa::kAvx512:
      return kOpsAvx512;
    case Isa::kAmx:
      return {};  // AVX-512's serve
  }
  return {};
}

const OpsKernels& selected_ops_kernels() {
  static const OpsKernels kernels = build_selected(selected_isa());
  return kernels;
}

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  selected_ops_kernels().rms_norm(x, weight, n, eps, out);
}

void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out) {
  selected_ops_kernels().rms_norm_gated(x, weight, z, n, eps, out);
}

void l2_norm(float* x, int64_t n, float eps) { selected_ops_kernels().l2_norm(x, n, eps); }

void rope(float* x, int32_t num_heads, int32_t pos, const RopeParams& p) {
  MET_CHECK(p.rope_dims <= kMaxRopeDims, "rope: {} rotated dims, at most {}", p.rope_dims,
            kMaxRopeDims);
  alignas(64) float cos_sin[kMaxRopeDims];
  rope_table(pos, p, cos_sin);
  rope_from(x, num_heads, p, cos_sin);
}

void rope_table(int32_t pos, const RopeParams& p, float* cos_sin) { ref::rope_cache(pos, p, cos_sin); }

void rope_from(float* x, int32_t num_heads, const RopeParams& p, const float* cos_sin) {
  selected_ops_kernels().rope_rotate(x, num_heads, p.head_dim, p.rope_dims, p.layout == RopeLayout::kNeox, cos_sin);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  selected_ops_kernels().swiglu(gate, up, n, out);
}

void geglu(const float* gate, const float* up, int64_t n, float* out) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCubic = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + kCubic * g * g))) * up[i];
  }
}

void gelu(const float* x, int64_t n, float* out) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCubic = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = x[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + kCubic * g * g)));
  }
}

void layer_norm(const float* x, const float* weight, const float* bias, int64_t n, float eps, float* out) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  double var = 0.0;
  for (int64_t i = 0; i < n; ++i) var += static_cast<double>(x[i] - mean) * (x[i] - mean);
  const auto scale = static_cast<float>(1.0 / std::sqrt(var / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - mean) * scale * weight[i] + bias[i];
}

void swiglu_oai(const float* gate, const float* up, int64_t n, float* out) {
  selected_ops_kernels().swiglu_oai(gate, up, n, out);
}

void add(const float* a, const float* b, int64_t n, float* out) {
  selected_ops_kernels().add(a, b, n, out);
}

void softmax(float* x, int64_t n) { selected_ops_kernels().softmax(x, n); }

int64_t argmax(const float* x, int64_t n) { return selected_ops_kernels().argmax(x, n); }

void embedding_row(GgmlType type, const uint8_t* table, int64_t cols, TokenId id, float* out) {
  const met::ref::DequantizeRowFn dequantize = selected_row_kernels(type).dequantize;
  MET_CHECK(dequantize != nullptr, "embedding_row: cannot decode {}", ggml_type_name(type));
  const auto row_bytes = ggml_row_bytes(type, static_cast<uint64_t>(cols));
  MET_CHECK(row_bytes.has_value(), "embedding_row: {} columns of {}", cols, ggml_type_name(type));
  MET_DCHECK(id >= 0);
  dequantize(table + static_cast<size_t>(id) * *row_bytes, out, cols);
}

}  // namespace met::cpu
