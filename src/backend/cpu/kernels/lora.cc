// lora.h's entry points: check the contracts and run the selected tier's
// kernels (lora_kernels.h).
// Threading: pure functions; the kernels are chosen once (function-local
// static). Tested by tests/backend/lora_kernels_test.cc.
#include "backend/cpu/kernels/lora.h"

#include "backend/cpu/kernels/lora_kernels.h"
#include "core/check.h"

namespace met::cpu {

LoraKernels lora_kernels_for_isa(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return {ref::lora_shrink, ref::lora_expand};
    case Isa::kAvx2: return {avx2::lora_shrink, avx2::lora_expand};
    case Isa::kAvxVnni: return {};  // AVX2's serve
    case Isa::kAvx512: return {avx512::lora_shrink, avx512::lora_expand};
    case Isa::kAmx: return {};  // AVX-512's serve
  }
  return {};
}

const LoraKernels& selected_lora_kernels() {
  static const LoraKernels kernels = [] {
    LoraKernels out = lora_kernels_for_isa(Isa::kScalar);
    for (Isa tier : {Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
      if (tier > selected_isa()) break;
      const LoraKernels k = lora_kernels_for_isa(tier);
      if (k.shrink != nullptr) out.shrink = k.shrink;
      if (k.expand != nullptr) out.expand = k.expand;
    }
    return out;
  }();
  return kernels;
}

void lora_shrink(const void* a, bool f16, int32_t rank, int64_t cols, const float* x, int64_t x_stride,
                 std::span<const int32_t> rows, float* t, int64_t t_stride) {
  MET_CHECK(rank >= 1 && cols >= 0, "lora_shrink: rank {}, cols {}", rank, cols);
  if (rows.empty()) return;
  selected_lora_kernels().shrink(a, f16, rank, cols, x, x_stride, rows.data(), static_cast<int64_t>(rows.size()), t,
                                 t_stride);
}

void lora_expand(const void* bp, bool f16, int32_t rank, int64_t out_cols, float scale, const float* t, int64_t t_stride,
                 std::span<const int32_t> rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end) {
  MET_CHECK(rank >= 1 && 0 <= o_begin && o_begin <= o_end && o_end <= out_cols,
            "lora_expand: rank {}, outputs [{}, {}) of {}", rank, o_begin, o_end, out_cols);
  if (rows.empty() || o_begin == o_end) return;
  selected_lora_kernels().expand(bp, f16, rank, out_cols, scale, t, t_stride, rows.data(),
                                 static_cast<int64_t>(rows.size()), y, y_stride, o_begin, o_end);
}

}  // namespace met::cpu
