// Tests for GgmlType traits (src/gguf/ggml_type.h): the on-disk ids, block
// geometry of every type, removed ids, names and row sizes.
#include "gguf/ggml_type.h"

#include <gtest/gtest.h>

namespace met {
namespace {

struct TypeCase {
  GgmlType type;
  uint32_t raw_id;
  std::string_view name;
  uint32_t block_size;
  uint32_t type_size;
};

// Sizes as ggml-common.h's static_asserts fix them.
constexpr TypeCase kCases[] = {
    {GgmlType::kF32, 0, "f32", 1, 4},
    {GgmlType::kF16, 1, "f16", 1, 2},
    {GgmlType::kQ4_0, 2, "q4_0", 32, 18},
    {GgmlType::kQ4_1, 3, "q4_1", 32, 20},
    {GgmlType::kQ5_0, 6, "q5_0", 32, 22},
    {GgmlType::kQ5_1, 7, "q5_1", 32, 24},
    {GgmlType::kQ8_0, 8, "q8_0", 32, 34},
    {GgmlType::kQ8_1, 9, "q8_1", 32, 36},
    {GgmlType::kQ2_K, 10, "q2_k", 256, 84},
    {GgmlType::kQ3_K, 11, "q3_k", 256, 110},
    {GgmlType::kQ4_K, 12, "q4_k", 256, 144},
    {GgmlType::kQ5_K, 13, "q5_k", 256, 176},
    {GgmlType::kQ6_K, 14, "q6_k", 256, 210},
    {GgmlType::kQ8_K, 15, "q8_k", 256, 292},
    {GgmlType::kIQ2_XXS, 16, "iq2_xxs", 256, 66},
    {GgmlType::kIQ2_XS, 17, "iq2_xs", 256, 74},
    {GgmlType::kIQ3_XXS, 18, "iq3_xxs", 256, 98},
    {GgmlType::kIQ1_S, 19, "iq1_s", 256, 50},
    {GgmlType::kIQ4_NL, 20, "iq4_nl", 32, 18},
    {GgmlType::kIQ3_S, 21, "iq3_s", 256, 110},
    {GgmlType::kIQ2_S, 22, "iq2_s", 256, 82},
    {GgmlType::kIQ4_XS, 23, "iq4_xs", 256, 136},
    {GgmlType::kI8, 24, "i8", 1, 1},
    {GgmlType::kI16, 25, "i16", 1, 2},
    {GgmlType::kI32, 26, "i32", 1, 4},
    {GgmlType::kI64, 27, "i64", 1, 8},
    {GgmlType::kF64, 28, "f64", 1, 8},
    {GgmlType::kIQ1_M, 29, "iq1_m", 256, 56},
    {GgmlType::kBF16, 30, "bf16", 1, 2},
    {GgmlType::kTQ1_0, 34, "tq1_0", 256, 54},
    {GgmlType::kTQ2_0, 35, "tq2_0", 256, 66},
    {GgmlType::kMXFP4, 39, "mxfp4", 32, 17},
};

TEST(GgmlType, EveryTypeHasTheOnDiskIdNameAndBlockGeometryOfGgml) {
  for (const TypeCase& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(static_cast<uint32_t>(c.type), c.raw_id);
    const std::optional<GgmlTypeTraits> traits = ggml_type_traits(c.raw_id);
    ASSERT_TRUE(traits.has_value());
    EXPECT_EQ(traits->type, c.type);
    EXPECT_EQ(traits->name, c.name);
    EXPECT_EQ(traits->block_size, c.block_size);
    EXPECT_EQ(traits->type_size, c.type_size);
    EXPECT_EQ(ggml_type_traits(c.type).type_size, c.type_size);
    EXPECT_EQ(ggml_type_name(c.type), c.name);
  }
}

TEST(GgmlType, RemovedAndUnknownIdsHaveNoTraits) {
  for (uint32_t raw : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u, 0xffffffffu}) {
    EXPECT_FALSE(ggml_type_traits(raw).has_value()) << raw;
  }
}

TEST(GgmlType, ParsesNamesInEitherCase) {
  EXPECT_EQ(parse_ggml_type("Q8_0"), GgmlType::kQ8_0);
  EXPECT_EQ(parse_ggml_type("q4_k"), GgmlType::kQ4_K);
  EXPECT_EQ(parse_ggml_type("Q4_K"), GgmlType::kQ4_K);
  EXPECT_EQ(parse_ggml_type("f16"), GgmlType::kF16);
  EXPECT_EQ(parse_ggml_type("BF16"), GgmlType::kBF16);
  for (const TypeCase& c : kCases) EXPECT_EQ(parse_ggml_type(c.name), c.type) << c.name;
}

TEST(GgmlType, RefusesUnknownNames) {
  EXPECT_FALSE(parse_ggml_type("").has_value());
  EXPECT_FALSE(parse_ggml_type("q4").has_value());
  EXPECT_FALSE(parse_ggml_type("q4_0 ").has_value());
  EXPECT_FALSE(parse_ggml_type("f32x").has_value());
}

TEST(GgmlType, RowBytesCountWholeBlocks) {
  EXPECT_EQ(ggml_row_bytes(GgmlType::kF32, 64), 256u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::kF16, 3), 6u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::kQ8_0, 64), 68u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::kQ4_K, 512), 288u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::kQ6_K, 256), 210u);
}

TEST(GgmlType, RowBytesRefusePartialBlocksAndOverflow) {
  EXPECT_FALSE(ggml_row_bytes(GgmlType::kQ8_0, 33).has_value());
  EXPECT_FALSE(ggml_row_bytes(GgmlType::kQ4_K, 32).has_value());
  EXPECT_FALSE(ggml_row_bytes(GgmlType::kF64, uint64_t{1} << 62).has_value());
}

}  // namespace
}  // namespace met
