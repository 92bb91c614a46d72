// Tests for tensor/quantize.h, the public row conversion API: which types it
// handles, that it runs the selected kernels, and the errors for wrong sizes
// and unsupported types (which name the type and the sizes, and write
// nothing).
#include "tensor/quantize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(CanDequantize, CoversEveryTypeWithAReferenceDecoder) {
  for (const GgmlType type :
       {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ4_0, GgmlType::kQ4_1,
        GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0, GgmlType::kQ2_K, GgmlType::kQ3_K,
        GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ8_K, GgmlType::kMXFP4,
        GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    EXPECT_TRUE(can_dequantize(type)) << ggml_type_name(type);
  }
  EXPECT_FALSE(can_dequantize(GgmlType::kIQ2_XXS));
  EXPECT_FALSE(can_dequantize(GgmlType::kQ8_1));
}

TEST(CanQuantize, CoversTheTypesMetWrites) {
  for (const GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                              GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K,
                              GgmlType::kQ8_K, GgmlType::kMXFP4, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS, GgmlType::kQ5_0,
                              GgmlType::kQ4_1, GgmlType::kQ5_1, GgmlType::kQ2_K, GgmlType::kQ3_K}) {
    EXPECT_TRUE(can_quantize(type)) << ggml_type_name(type);
  }
  for (const GgmlType type : {GgmlType::kIQ2_XXS, GgmlType::kIQ3_S, GgmlType::kTQ2_0}) {
    EXPECT_FALSE(can_quantize(type)) << ggml_type_name(type);
  }
}

TEST(QuantizeRow, MatchesTheReferenceAndRoundTrips) {
  const std::vector<float> x = testing::gaussian(kQkK * 3, 21);
  for (const GgmlType type :
       {GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K}) {
    std::vector<uint8_t> bytes(testing::row_bytes(type, x.size()));
    ASSERT_TRUE(quantize_row(type, x, bytes).ok()) << ggml_type_name(type);
    std::vector<float> y(x.size());
    ASSERT_TRUE(dequantize_row(type, bytes, y).ok()) << ggml_type_name(type);
    EXPECT_LT(testing::relative_rms_error(x, y), 0.1) << ggml_type_name(type);
  }
  std::vector<uint8_t> bytes(testing::row_bytes(GgmlType::kQ8_0, x.size()));
  ASSERT_TRUE(quantize_row(GgmlType::kQ8_0, x, bytes).ok());
  EXPECT_EQ(bytes, testing::encode(ref::quantize_row_q8_0, GgmlType::kQ8_0, x));
}

TEST(QuantizeRow, RejectsAnUnsupportedTypeNamingIt) {
  const std::vector<float> x(256, 1.0f);
  std::vector<uint8_t> bytes(testing::row_bytes(GgmlType::kIQ2_XXS, x.size()), 0xAB);
  const std::vector<uint8_t> before = bytes;
  const Status status = quantize_row(GgmlType::kIQ2_XXS, x, bytes);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("iq2_xxs"));
  EXPECT_EQ(bytes, before);
}

TEST(QuantizeRow, RejectsARowThatIsNotWholeBlocks) {
  const std::vector<float> x(100, 1.0f);
  std::vector<uint8_t> bytes(1000, 0xAB);
  const Status status = quantize_row(GgmlType::kQ4_K, x, bytes);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("q4_k"), HasSubstr("100 elements"), HasSubstr("256")));
  EXPECT_EQ(bytes, std::vector<uint8_t>(1000, 0xAB));
}

TEST(QuantizeRow, RejectsADestinationOfTheWrongSize) {
  const std::vector<float> x(64, 1.0f);
  for (const size_t size : {67u, 69u, 0u}) {
    std::vector<uint8_t> bytes(size, 0xAB);
    const Status status = quantize_row(GgmlType::kQ8_0, x, bytes);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("q8_0"), HasSubstr("64 elements"), HasSubstr("needs 68 bytes"),
                      HasSubstr(fmt::format("got {}", size))));
    EXPECT_EQ(bytes, std::vector<uint8_t>(size, 0xAB));
  }
}

TEST(DequantizeRow, RejectsASourceOfTheWrongSize) {
  const std::vector<uint8_t> bytes(143);
  std::vector<float> y(256, 7.0f);
  const Status status = dequantize_row(GgmlType::kQ4_K, bytes, y);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("q4_k"), HasSubstr("needs 144 bytes"), HasSubstr("got 143")));
  EXPECT_EQ(y, std::vector<float>(256, 7.0f));
}

TEST(DequantizeRow, RejectsARowThatIsNotWholeBlocks) {
  const std::vector<uint8_t> bytes(34);
  std::vector<float> y(33);
  const Status status = dequantize_row(GgmlType::kQ8_0, bytes, y);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("q8_0"), HasSubstr("33 elements"), HasSubstr("block size 32")));
}

TEST(DequantizeRow, RejectsATypeItCannotDecodeNamingIt) {
  const std::vector<uint8_t> bytes(66);
  std::vector<float> y(256);
  const Status status = dequantize_row(GgmlType::kIQ2_XXS, bytes, y);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("iq2_xxs"));
}

TEST(DequantizeRow, RejectsAnIdOutsideTheEnumWithoutCrashing) {
  const std::vector<uint8_t> bytes(4);
  std::vector<float> y(1);
  const Status status = dequantize_row(static_cast<GgmlType>(5), bytes, y);  // a removed id
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("type id 5"));
}

TEST(DequantizeRow, AcceptsAnEmptyRow) {
  EXPECT_TRUE(dequantize_row(GgmlType::kQ4_K, {}, {}).ok());
  EXPECT_TRUE(quantize_row(GgmlType::kQ8_0, {}, {}).ok());
}

TEST(DequantizeRow, ReadsBlocksAtAnyAlignment) {
  const std::vector<float> x = testing::gaussian(kQkK, 4);
  const std::vector<uint8_t> q = testing::encode(ref::quantize_row_q6_k, GgmlType::kQ6_K, x);
  std::vector<uint8_t> shifted(q.size() + 1);
  std::copy(q.begin(), q.end(), shifted.begin() + 1);
  std::vector<float> aligned(kQkK);
  std::vector<float> unaligned(kQkK);
  ASSERT_TRUE(dequantize_row(GgmlType::kQ6_K, q, aligned).ok());
  ASSERT_TRUE(
      dequantize_row(GgmlType::kQ6_K, std::span<const uint8_t>(shifted).subspan(1), unaligned)
          .ok());
  EXPECT_EQ(aligned, unaligned);
}

}  // namespace
}  // namespace met
