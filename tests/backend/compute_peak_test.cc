// Tests for compute_peak.h: each tier the CPU has measures a positive rate
// for each kind (how fast is the host's business, not the test's), the
// scalar tier none, and each weight type maps to the arithmetic its kernels
// run.
#include "backend/cpu/compute_peak.h"

#include <gtest/gtest.h>

namespace met::cpu {
namespace {

TEST(ComputePeak, EachTierTheCpuHasMeasuresEveryKind) {
  for (const Isa isa : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512}) {
    if (!isa_supported(detect_cpu_features(), isa)) {
      GTEST_LOG_(INFO) << "this CPU lacks " << isa_name(isa) << "; not measured";
      continue;
    }
    for (const MacKind kind : {MacKind::kInt8Dot, MacKind::kBf16Dot, MacKind::kFp32Fma}) {
      EXPECT_GT(measure_mac_rate(kind, isa, 1, 1), 1e8) << isa_name(isa) << " " << mac_instruction(kind, isa);
      EXPECT_GT(measure_mac_rate(kind, isa, 2, 1), 1e8) << isa_name(isa) << " " << mac_instruction(kind, isa);
    }
  }
  EXPECT_EQ(measure_mac_rate(MacKind::kFp32Fma, Isa::kScalar, 2), 0.0);
}

TEST(ComputePeak, WeightTypesMapToTheirKernelsArithmetic) {
  EXPECT_EQ(mac_kind_of(GgmlType::kQ8_0, Isa::kAvx512), MacKind::kInt8Dot);
  EXPECT_EQ(mac_kind_of(GgmlType::kQ4_K, Isa::kAvx2), MacKind::kInt8Dot);
  EXPECT_EQ(mac_kind_of(GgmlType::kF16, Isa::kAvx512), MacKind::kFp32Fma);
  EXPECT_EQ(mac_kind_of(GgmlType::kBF16, Isa::kAvx512), MacKind::kBf16Dot);
  EXPECT_EQ(mac_kind_of(GgmlType::kBF16, Isa::kAvx2), MacKind::kFp32Fma);
  EXPECT_EQ(mac_instruction(MacKind::kInt8Dot, Isa::kAmx), "vpdpbusd");
  EXPECT_EQ(mac_instruction(MacKind::kInt8Dot, Isa::kAvx2), "vpmaddubsw");
  EXPECT_EQ(mac_instruction(MacKind::kInt8Dot, Isa::kAvxVnni), "vpdpbusd");
  EXPECT_EQ(mac_kind_of(GgmlType::kBF16, Isa::kAvxVnni), MacKind::kFp32Fma);
}

}  // namespace
}  // namespace met::cpu
