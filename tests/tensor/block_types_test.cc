// Tests for tensor/block_types.h: every block struct has the size and element
// count that gguf/ggml_type.h's traits table gives its type.
#include "tensor/block_types.h"

#include <gtest/gtest.h>

#include <cstddef>

#include "gguf/ggml_type.h"

namespace met {
namespace {

struct Layout {
  GgmlType type;
  size_t block_bytes;
  int block_elements;
};

TEST(BlockLayouts, MatchTheGgmlTypeTraits) {
  const Layout layouts[] = {
      {GgmlType::kQ4_0, sizeof(BlockQ4_0), kQk},  {GgmlType::kQ4_1, sizeof(BlockQ4_1), kQk},
      {GgmlType::kQ5_0, sizeof(BlockQ5_0), kQk},  {GgmlType::kQ5_1, sizeof(BlockQ5_1), kQk},
      {GgmlType::kQ8_0, sizeof(BlockQ8_0), kQk},  {GgmlType::kQ2_K, sizeof(BlockQ2_K), kQkK},
      {GgmlType::kQ3_K, sizeof(BlockQ3_K), kQkK}, {GgmlType::kQ4_K, sizeof(BlockQ4_K), kQkK},
      {GgmlType::kQ5_K, sizeof(BlockQ5_K), kQkK}, {GgmlType::kQ6_K, sizeof(BlockQ6_K), kQkK},
      {GgmlType::kQ8_K, sizeof(BlockQ8_K), kQkK}, {GgmlType::kMXFP4, sizeof(BlockMxfp4), kQk},
  };
  for (const Layout& layout : layouts) {
    const GgmlTypeTraits& traits = ggml_type_traits(layout.type);
    EXPECT_EQ(traits.type_size, layout.block_bytes) << traits.name;
    EXPECT_EQ(traits.block_size, static_cast<uint32_t>(layout.block_elements)) << traits.name;
  }
}

TEST(BlockLayouts, PlaceFieldsAtGgmlsOffsets) {
  EXPECT_EQ(offsetof(BlockQ5_0, qs), 6u);
  EXPECT_EQ(offsetof(BlockQ5_1, qh), 4u);
  EXPECT_EQ(offsetof(BlockQ2_K, d), 80u);
  EXPECT_EQ(offsetof(BlockQ3_K, scales), 96u);
  EXPECT_EQ(offsetof(BlockQ3_K, d), 108u);
  EXPECT_EQ(offsetof(BlockQ4_K, qs), 16u);
  EXPECT_EQ(offsetof(BlockQ5_K, qh), 16u);
  EXPECT_EQ(offsetof(BlockQ5_K, qs), 48u);
  EXPECT_EQ(offsetof(BlockQ6_K, scales), 192u);
  EXPECT_EQ(offsetof(BlockQ6_K, d), 208u);
  EXPECT_EQ(offsetof(BlockQ8_K, bsums), 260u);
  EXPECT_EQ(offsetof(BlockMxfp4, qs), 1u);
}

}  // namespace
}  // namespace met
