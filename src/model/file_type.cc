// LLAMA_FTYPE codes. Tested by tests/model/file_type_test.cc.
#include "model/file_type.h"

#include <utility>

namespace met {
namespace {

struct FileTypeEntry {
  uint32_t code;
  std::string_view name;
  std::optional<GgmlType> mostly;
};

constexpr FileTypeEntry kFileTypes[] = {
    {0, "ALL_F32", GgmlType::kF32},       {1, "MOSTLY_F16", GgmlType::kF16},
    {2, "MOSTLY_Q4_0", GgmlType::kQ4_0},  {3, "MOSTLY_Q4_1", GgmlType::kQ4_1},
    {7, "MOSTLY_Q8_0", GgmlType::kQ8_0},  {8, "MOSTLY_Q5_0", GgmlType::kQ5_0},
    {9, "MOSTLY_Q5_1", GgmlType::kQ5_1},  {10, "MOSTLY_Q2_K", GgmlType::kQ2_K},
    {11, "MOSTLY_Q3_K_S", GgmlType::kQ3_K}, {12, "MOSTLY_Q3_K_M", std::nullopt},
    {13, "MOSTLY_Q3_K_L", std::nullopt},  {14, "MOSTLY_Q4_K_S", GgmlType::kQ4_K},
    {15, "MOSTLY_Q4_K_M", std::nullopt},  {16, "MOSTLY_Q5_K_S", GgmlType::kQ5_K},
    {17, "MOSTLY_Q5_K_M", std::nullopt},  {18, "MOSTLY_Q6_K", GgmlType::kQ6_K},
    {25, "MOSTLY_IQ4_NL", GgmlType::kIQ4_NL}, {30, "MOSTLY_IQ4_XS", GgmlType::kIQ4_XS},
    {32, "MOSTLY_BF16", GgmlType::kBF16}, {38, "MOSTLY_MXFP4_MOE", GgmlType::kMXFP4},
};

}  // namespace

std::optional<uint32_t> llama_file_type(GgmlType mostly) {
  for (const auto& e : kFileTypes) {
    if (e.mostly == mostly) return e.code;
  }
  return std::nullopt;
}

std::optional<std::string_view> llama_file_type_name(uint32_t file_type) {
  for (const auto& e : kFileTypes) {
    if (e.code == file_type) return e.name;
  }
  return std::nullopt;
}

GgmlType file_type_matrix_type(GgmlType mostly, std::span<const uint64_t> shape) {
  if (mostly != GgmlType::kMXFP4) return mostly;
  return shape.size() >= 3 && shape[2] > 1 ? GgmlType::kMXFP4 : GgmlType::kQ8_0;
}

}  // namespace met
