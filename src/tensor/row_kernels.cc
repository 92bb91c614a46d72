// RowKernels tables: one list per tier of the types it has kernels for.
// Threading: the selected table is built once (function-local static) and
// read-only after. Tested by tests/tensor/isa_kernels_test.cc.
#include "tensor/row_kernels.h"

#include <array>
#include <span>

#include "core/isa_table.h"
#include "tensor/isa_kernels.h"

namespace met {
namespace {

struct Entry {
  GgmlType type;
  RowKernels kernels;
};

constexpr Entry kReference[] = {
    {GgmlType::kF32, {ref::dequantize_row_f32, ref::quantize_row_f32}},
    {GgmlType::kF16, {ref::dequantize_row_f16, ref::quantize_row_f16}},
    {GgmlType::kBF16, {ref::dequantize_row_bf16, ref::quantize_row_bf16}},
    {GgmlType::kQ4_0, {ref::dequantize_row_q4_0, ref::quantize_row_q4_0}},
    {GgmlType::kQ4_1, {ref::dequantize_row_q4_1, ref::quantize_row_q4_1}},
    {GgmlType::kQ5_0, {ref::dequantize_row_q5_0, ref::quantize_row_q5_0}},
    {GgmlType::kQ5_1, {ref::dequantize_row_q5_1, ref::quantize_row_q5_1}},
    {GgmlType::kQ8_0, {ref::dequantize_row_q8_0, ref::quantize_row_q8_0}},
    {GgmlType::kQ2_K, {ref::dequantize_row_q2_k, ref::quantize_row_q2_k}},
    {GgmlType::kQ3_K, {ref::dequantize_row_q3_k, ref::quantize_row_q3_k}},
    {GgmlType::kQ4_K, {ref::dequantize_row_q4_k, ref::quantize_row_q4_k}},
    {GgmlType::kQ5_K, {ref::dequantize_row_q5_k, ref::quantize_row_q5_k}},
    {GgmlType::kQ6_K, {ref::dequantize_row_q6_k, ref::quantize_row_q6_k}},
    {GgmlType::kQ8_K, {ref::dequantize_row_q8_k, ref::quantize_row_q8_k}},
    {GgmlType::kMXFP4, {ref::dequantize_row_mxfp4, ref::quantize_row_mxfp4}},
    {GgmlType::kIQ4_NL, {ref::dequantize_row_iq4_nl, ref::quantize_row_iq4_nl}},
    {GgmlType::kIQ4_XS, {ref::dequantize_row_iq4_xs, ref::quantize_row_iq4_xs}},
};

constexpr Entry kAvx2[] = {
    {GgmlType::kF16, {avx2::dequantize_row_f16, avx2::quantize_row_f16}},
    {GgmlType::kBF16, {avx2::dequantize_row_bf16, avx2::quantize_row_bf16}},
    {GgmlType::kQ8_0, {avx2::dequantize_row_q8_0, avx2::quantize_row_q8_0}},
    {GgmlType::kQ2_K, {nullptr, avx2::quantize_row_q2_k}},
    {GgmlType::kQ3_K, {nullptr, avx2::quantize_row_q3_k}},
    {GgmlType::kQ4_K, {nullptr, avx2::quantize_row_q4_k}},
    {GgmlType::kQ5_K, {nullptr, avx2::quantize_row_q5_k}},
    {GgmlType::kQ6_K, {nullptr, avx2::quantize_row_q6_k}},
};

constexpr Entry kAvx512[] = {
    {GgmlType::kF16, {avx512::dequantize_row_f16, avx512::quantize_row_f16}},
    {GgmlType::kBF16, {avx512::dequantize_row_bf16, avx512::quantize_row_bf16}},
    {GgmlType::kQ8_0, {avx512::dequantize_row_q8_0, avx512::quantize_row_q8_0}},
};

std::span<const Entry> tier_entries(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return kReference;
    case Isa::kAvx2:
      return kAvx2;
    case Isa::kAvxVnni:
      return {};  // no conversion kernels of its own: AVX2's serve
    case Isa::kAvx512:
      return kAvx512;
    case Isa::kAmx:
      return {};  // no conversion kernels of its own: AVX-512's serve
  }
  return {};
}

constexpr size_t kMaxTypeId = 64;  // above every GgmlType id
using Table = std::array<RowKernels, kMaxTypeId>;

Table build_selected_table(Isa selected) {
  return overlay_isa_tiers<RowKernels, kMaxTypeId>(detect_cpu_features(), selected, tier_entries,
                                                   [](RowKernels& slot, const RowKernels& tier) {
    if (tier.dequantize != nullptr) slot.dequantize = tier.dequantize;
    if (tier.quantize != nullptr) slot.quantize = tier.quantize;
  });
}

}  // namespace

RowKernels row_kernels_for_isa(GgmlType type, Isa isa) {
  for (const Entry& entry : tier_entries(isa)) {
    if (entry.type == type) return entry.kernels;
  }
  return {};
}

const RowKernels& selected_row_kernels(GgmlType type) {
  static const Table table = build_selected_table(selected_isa());
  static const RowKernels kNone{};
  const auto id = static_cast<size_t>(type);
  return id < kMaxTypeId ? table[id] : kNone;
}

}  // namespace met
