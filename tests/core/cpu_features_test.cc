// Tests for ISA selection (src/core/cpu_features.h).
#include "core/cpu_features.h"

#include <gtest/gtest.h>

namespace met {
namespace {

CpuFeatures avx2_only() {
  CpuFeatures f;
  f.avx2 = f.fma = f.f16c = f.bmi2 = true;
  return f;
}

// Alder Lake and later Intel client cores: AVX2 with the VEX-encoded VNNI,
// no AVX-512.
CpuFeatures alder_lake() {
  CpuFeatures f = avx2_only();
  f.avxvnni = true;
  return f;
}

// AVX-512 with its own VNNI and BF16 but not the VEX-encoded VNNI.
CpuFeatures zen4() {
  CpuFeatures f = avx2_only();
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512cd = true;
  f.avx512vnni = f.avx512bf16 = true;
  f.os_avx512 = true;
  return f;
}

CpuFeatures sapphire_rapids() {
  CpuFeatures f = avx2_only();
  f.avxvnni = true;
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512cd = true;
  f.avx512vnni = f.avx512bf16 = f.avx512fp16 = true;
  f.amx_tile = f.amx_int8 = f.amx_bf16 = true;
  f.os_avx512 = f.os_amx = true;
  return f;
}

TEST(BestIsa, NoAvx2MeansScalar) { EXPECT_EQ(best_isa(CpuFeatures{}), Isa::kScalar); }

TEST(BestIsa, Avx2WithFmaAndF16cIsTheBaseline) { EXPECT_EQ(best_isa(avx2_only()), Isa::kAvx2); }

TEST(BestIsa, Avx512NeedsVnniAndBf16) {
  CpuFeatures f = sapphire_rapids();
  f.amx_tile = false;
  EXPECT_EQ(best_isa(f), Isa::kAvx512);
  f.avx512bf16 = false;
  EXPECT_EQ(best_isa(f), Isa::kAvxVnni);
  f.avxvnni = false;
  EXPECT_EQ(best_isa(f), Isa::kAvx2);
}

TEST(BestIsa, AvxVnniNeedsTheVexVnniInstructions) {
  EXPECT_EQ(best_isa(alder_lake()), Isa::kAvxVnni);
  EXPECT_EQ(best_isa(alder_lake(), Isa::kAvx2), Isa::kAvx2);
  EXPECT_EQ(best_isa(alder_lake(), Isa::kAvx512), Isa::kAvxVnni);
}

TEST(BestIsa, Avx512DoesNotNeedAvxVnni) {
  EXPECT_EQ(best_isa(zen4()), Isa::kAvx512);
  // A cap at the tier this CPU lacks falls to the highest one below it that
  // it has, never to the tier itself.
  EXPECT_EQ(best_isa(zen4(), Isa::kAvxVnni), Isa::kAvx2);
}

TEST(IsaSupported, NamesExactlyTheTiersTheCpuRuns) {
  EXPECT_TRUE(isa_supported(CpuFeatures{}, Isa::kScalar));
  EXPECT_FALSE(isa_supported(CpuFeatures{}, Isa::kAvx2));
  EXPECT_TRUE(isa_supported(alder_lake(), Isa::kAvxVnni));
  EXPECT_FALSE(isa_supported(alder_lake(), Isa::kAvx512));
  EXPECT_FALSE(isa_supported(zen4(), Isa::kAvxVnni));
  EXPECT_TRUE(isa_supported(zen4(), Isa::kAvx512));
  EXPECT_FALSE(isa_supported(zen4(), Isa::kAmx));
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx}) {
    EXPECT_TRUE(isa_supported(sapphire_rapids(), isa)) << isa_name(isa);
  }
}

TEST(BestIsa, AmxNeedsTheKernelsPermission) {
  CpuFeatures f = sapphire_rapids();
  EXPECT_EQ(best_isa(f), Isa::kAmx);
  f.os_amx = false;
  EXPECT_EQ(best_isa(f), Isa::kAvx512);
}

TEST(BestIsa, CapLowersButNeverRaisesTheTier) {
  EXPECT_EQ(best_isa(sapphire_rapids(), Isa::kAvx2), Isa::kAvx2);
  EXPECT_EQ(best_isa(avx2_only(), Isa::kAmx), Isa::kAvx2);
}

TEST(IsaName, RoundTripsThroughParse) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx}) {
    EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  }
  EXPECT_EQ(parse_isa("sse2"), std::nullopt);
}

TEST(DetectCpuFeatures, ThisMachineRunsTheBaseline) {
  // The test binary itself is built for x86-64-v3, so reaching here means AVX2.
  const CpuFeatures& f = detect_cpu_features();
  EXPECT_TRUE(f.avx2);
  EXPECT_NE(best_isa(f), Isa::kScalar);
  EXPECT_TRUE(isa_supported(f, best_isa(f)));
  EXPECT_FALSE(cpu_feature_summary(f).empty());
}

}  // namespace
}  // namespace met
