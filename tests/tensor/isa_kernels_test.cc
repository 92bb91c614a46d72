// Tests for isa_kernels.h and row_kernels.h: every kernel of every ISA tier
// the running CPU supports gives the same bits as its scalar reference, on
// random data, odd lengths and block counts, extremes, rounding ties and
// inf/NaN. Tiers the CPU lacks are skipped with a message.
#include "tensor/isa_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "gguf/ggml_type.h"
#include "tensor/row_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using testing::decode;
using testing::encode;
using testing::float_bits;

constexpr GgmlType kTypes[] = {
    GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ4_0, GgmlType::kQ4_1,
    GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0, GgmlType::kQ2_K, GgmlType::kQ3_K,
    GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ8_K, GgmlType::kMXFP4,
};

// Row lengths: odd counts for the element-wise types, odd block counts for
// the block types.
std::vector<size_t> lengths_for(GgmlType type) {
  const uint32_t block = ggml_type_traits(type).block_size;
  if (block == 1) return {1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1001};
  return {block, 3 * block, (block == 32 ? 17 : 5) * block};
}

float float_from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

// Inputs that stress the quantizers, each of length n.
std::vector<std::vector<float>> quantizer_inputs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> inputs;
  inputs.push_back(testing::gaussian(n, seed));
  std::vector<float> scaled = testing::gaussian(n, seed + 1);  // magnitudes 2^-40 .. 2^40 by block
  for (size_t i = 0; i < n; ++i)
    scaled[i] *= std::ldexp(1.0f, static_cast<int>((i / 32) % 9) * 10 - 40);
  inputs.push_back(scaled);
  inputs.push_back(std::vector<float>(n, 0.0f));
  inputs.push_back(std::vector<float>(n, -1.25f));
  std::vector<float> ties(n);  // x * (1 / d) lands on .5 with d = 1 for Q8_0
  for (size_t i = 0; i < n; ++i)
    ties[i] = i % 32 == 0 ? 127.0f : static_cast<float>(static_cast<int>(i % 64) - 32) + 0.5f;
  inputs.push_back(ties);
  std::vector<float> any_bits(n);  // NaN, inf, subnormals, huge and tiny values
  std::uniform_int_distribution<uint32_t> bits;
  for (float& v : any_bits) v = float_from_bits(bits(rng));
  inputs.push_back(any_bits);
  std::vector<float> specials = testing::gaussian(n, seed + 2);
  const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            65504.0f,
                            65520.0f,
                            -1e-30f,
                            std::ldexp(1.0f, -25),
                            std::numeric_limits<float>::denorm_min()};
  for (size_t i = 0; i < n; i += 5) specials[i] = kSpecial[(i / 5) % 8];
  inputs.push_back(specials);
  return inputs;
}

class IsaKernels : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam())
                   << "; its kernels are not checked here";
    }
  }
};

TEST_P(IsaKernels, QuantizersMatchTheReferenceBitForBit) {
  int num_checked = 0;
  for (const GgmlType type : kTypes) {
    const ref::QuantizeRowFn fast = row_kernels_for_isa(type, GetParam()).quantize;
    if (fast == nullptr) continue;
    const ref::QuantizeRowFn reference = row_kernels_for_isa(type, Isa::kScalar).quantize;
    ASSERT_NE(reference, nullptr) << ggml_type_name(type);
    for (const size_t n : lengths_for(type)) {
      int case_index = 0;
      for (const std::vector<float>& x : quantizer_inputs(n, static_cast<uint32_t>(n))) {
        ASSERT_EQ(encode(fast, type, x), encode(reference, type, x))
            << ggml_type_name(type) << ", " << n << " elements, input " << case_index;
        ++case_index;
      }
    }
    ++num_checked;
  }
  EXPECT_GT(num_checked, 0) << isa_name(GetParam()) << " has no quantizer of its own";
}

TEST_P(IsaKernels, DequantizersMatchTheReferenceBitForBit) {
  int num_checked = 0;
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const GgmlType type : kTypes) {
    const ref::DequantizeRowFn fast = row_kernels_for_isa(type, GetParam()).dequantize;
    if (fast == nullptr) continue;
    const ref::DequantizeRowFn reference = row_kernels_for_isa(type, Isa::kScalar).dequantize;
    for (const size_t n : lengths_for(type)) {
      // Random bytes: every code, and scales that are NaN, inf or subnormal.
      std::vector<uint8_t> src(testing::row_bytes(type, n));
      for (uint8_t& b : src) b = static_cast<uint8_t>(byte(rng));
      ASSERT_EQ(float_bits(decode(fast, src, n)), float_bits(decode(reference, src, n)))
          << ggml_type_name(type) << ", " << n << " elements";
    }
    ++num_checked;
  }
  EXPECT_GT(num_checked, 0) << isa_name(GetParam()) << " has no dequantizer of its own";
}

TEST_P(IsaKernels, ConvertEveryHalfBitPatternLikeTheReference) {
  std::vector<uint8_t> src(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    src[2 * h] = static_cast<uint8_t>(h & 0xFF);
    src[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  for (const GgmlType type : {GgmlType::kF16, GgmlType::kBF16}) {
    const RowKernels fast = row_kernels_for_isa(type, GetParam());
    const RowKernels reference = row_kernels_for_isa(type, Isa::kScalar);
    ASSERT_NE(fast.dequantize, nullptr);
    ASSERT_NE(fast.quantize, nullptr);
    const std::vector<float> decoded = decode(fast.dequantize, src, 65536);
    EXPECT_EQ(float_bits(decoded), float_bits(decode(reference.dequantize, src, 65536)))
        << ggml_type_name(type);
    EXPECT_EQ(encode(fast.quantize, type, decoded), encode(reference.quantize, type, decoded))
        << ggml_type_name(type);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, IsaKernels, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

// Groups for the k-quant scale searches: Gaussian at many scales, one-signed,
// sparse with outliers, constant, tiny, and with a NaN.
std::vector<std::vector<float>> search_groups(int size) {
  std::vector<std::vector<float>> groups;
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    std::vector<float> x =
        testing::gaussian(size, seed, std::ldexp(1.0f, static_cast<int>(seed % 41) - 20));
    switch (seed % 8) {
      case 0:
        for (float& v : x) v = std::fabs(v);
        break;
      case 1:
        for (float& v : x) v = -std::fabs(v) - 1.0f;
        break;
      case 2:
        for (size_t i = 0; i < x.size(); ++i) x[i] = i % 7 == 3 ? x[i] * 50.0f : 0.0f;
        break;
      case 3:
        std::fill(x.begin(), x.end(), x[0]);
        break;
      case 4:
        x[seed % x.size()] = std::numeric_limits<float>::quiet_NaN();
        break;
      default:
        break;
    }
    groups.push_back(x);
  }
  return groups;
}

TEST(Avx2ScaleSearch, FindsTheSameQ4KScalesAndMinsAsTheReference) {
  if (!isa_supported(detect_cpu_features(), Isa::kAvx2)) GTEST_SKIP() << "this CPU lacks avx2";
  for (const std::vector<float>& x : search_groups(32)) {
    const ref::ScaleMinFit expected = ref::fit_q4_k_group(x.data());
    const ref::ScaleMinFit actual = avx2::fit_q4_k_group(x.data());
    ASSERT_EQ(std::bit_cast<uint32_t>(actual.scale), std::bit_cast<uint32_t>(expected.scale))
        << x[0];
    ASSERT_EQ(std::bit_cast<uint32_t>(actual.min), std::bit_cast<uint32_t>(expected.min)) << x[0];
  }
}

TEST(Avx2ScaleSearch, FindsTheSameQ6KScalesAsTheReference) {
  if (!isa_supported(detect_cpu_features(), Isa::kAvx2)) GTEST_SKIP() << "this CPU lacks avx2";
  for (const std::vector<float>& x : search_groups(16)) {
    ASSERT_EQ(std::bit_cast<uint32_t>(avx2::fit_q6_k_group(x.data())),
              std::bit_cast<uint32_t>(ref::fit_q6_k_group(x.data())))
        << x[0];
  }
}

TEST(SelectedRowKernels, UseTheBestTierTheCpuHasForEachDirection) {
  const Isa best = best_isa(detect_cpu_features());
  ASSERT_EQ(selected_isa(), best) << "tests run without an ISA cap";
  for (const GgmlType type : kTypes) {
    RowKernels expected = row_kernels_for_isa(type, Isa::kScalar);
    for (const Isa tier : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx}) {
      if (tier > best) break;
      if (!isa_supported(detect_cpu_features(), tier)) continue;
      const RowKernels own = row_kernels_for_isa(type, tier);
      if (own.dequantize != nullptr) expected.dequantize = own.dequantize;
      if (own.quantize != nullptr) expected.quantize = own.quantize;
    }
    EXPECT_EQ(selected_row_kernels(type).dequantize, expected.dequantize) << ggml_type_name(type);
    EXPECT_EQ(selected_row_kernels(type).quantize, expected.quantize) << ggml_type_name(type);
  }
}

TEST(SelectedRowKernels, HaveNothingForTypesMetCannotConvert) {
  for (const GgmlType type :
       {GgmlType::kIQ2_XXS, GgmlType::kQ8_1, GgmlType::kI32, GgmlType::kIQ3_S}) {
    EXPECT_EQ(selected_row_kernels(type).dequantize, nullptr) << ggml_type_name(type);
    EXPECT_EQ(selected_row_kernels(type).quantize, nullptr) << ggml_type_name(type);
  }
}

}  // namespace
}  // namespace met
