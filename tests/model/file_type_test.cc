// Tests for llama.cpp file type codes (src/model/file_type.h).
#include "model/file_type.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(LlamaFileType, MapsDtypesToLlamaCppCodes) {
  EXPECT_EQ(llama_file_type(GgmlType::kF32), 0u);
  EXPECT_EQ(llama_file_type(GgmlType::kF16), 1u);
  EXPECT_EQ(llama_file_type(GgmlType::kQ4_0), 2u);
  EXPECT_EQ(llama_file_type(GgmlType::kQ8_0), 7u);
  EXPECT_EQ(llama_file_type(GgmlType::kQ4_K), 14u);
  EXPECT_EQ(llama_file_type(GgmlType::kQ6_K), 18u);
  EXPECT_EQ(llama_file_type(GgmlType::kBF16), 32u);
  EXPECT_EQ(llama_file_type(GgmlType::kQ8_K), std::nullopt);
}

TEST(LlamaFileType, NamesCodes) {
  EXPECT_EQ(llama_file_type_name(15), "MOSTLY_Q4_K_M");
  EXPECT_EQ(llama_file_type_name(4), std::nullopt);
}

}  // namespace
}  // namespace met
