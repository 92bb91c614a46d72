// Tests for llama.cpp file type codes (src/model/file_type.h).
#include "model/file_type.h"

#include <gtest/gtest.h>

#include <vector>

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
  EXPECT_EQ(llama_file_type(GgmlType::kMXFP4), 38u);
  EXPECT_EQ(llama_file_type(GgmlType::kQ8_K), std::nullopt);
}

TEST(LlamaFileType, NamesCodes) {
  EXPECT_EQ(llama_file_type_name(15), "MOSTLY_Q4_K_M");
  EXPECT_EQ(llama_file_type_name(4), std::nullopt);
  EXPECT_EQ(llama_file_type_name(38), "MOSTLY_MXFP4_MOE");
}

TEST(FileTypeMatrixType, Mxfp4MoePutsOnlyExpertTensorsInMxfp4AndTheRestInQ8_0) {
  const std::vector<uint64_t> experts{256, 128, 8}, one_expert{256, 128, 1}, matrix{256, 128};
  EXPECT_EQ(file_type_matrix_type(GgmlType::kMXFP4, experts), GgmlType::kMXFP4);
  EXPECT_EQ(file_type_matrix_type(GgmlType::kMXFP4, one_expert), GgmlType::kQ8_0);
  EXPECT_EQ(file_type_matrix_type(GgmlType::kMXFP4, matrix), GgmlType::kQ8_0);
  EXPECT_EQ(file_type_matrix_type(GgmlType::kQ4_K, experts), GgmlType::kQ4_K);
  EXPECT_EQ(file_type_matrix_type(GgmlType::kQ4_K, matrix), GgmlType::kQ4_K);
}

}  // namespace
}  // namespace met
