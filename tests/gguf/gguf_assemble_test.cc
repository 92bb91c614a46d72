// Tests for GgufFile::assemble (src/gguf/gguf_file.h): a file made in memory
// from metadata and per-tensor spans, and the tensors it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "gguf/gguf_file.h"

namespace met {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> float_bytes(std::vector<float> values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(GgufAssemble, TensorsReadBackFromTheirOwnBuffers) {
  GgufBacking backing;
  backing.buffers.push_back(float_bytes({1, 2, 3, 4, 5, 6}));
  backing.buffers.push_back(float_bytes({7, 8, 9}));
  std::vector<GgufTensorSource> tensors;
  tensors.push_back({{.name = "a", .shape = {3, 2}, .type = GgmlType::kF32}, backing.buffers[0]});
  tensors.push_back({{.name = "b", .shape = {3}, .type = GgmlType::kF32}, backing.buffers[1]});
  const uint8_t* a_data = backing.buffers[0].data();
  GgufMetadata md;
  md.set("general.architecture", "llama");

  Result<GgufFile> file = GgufFile::assemble("in memory", md, std::move(tensors), std::move(backing));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_FALSE(file->is_mapped_file());
  ASSERT_EQ(file->tensors().size(), 2u);
  const GgufTensorInfo* a = file->find_tensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->num_elements, 6u);
  EXPECT_EQ(a->num_bytes, 24u);
  EXPECT_EQ(file->tensor_data(*a).data(), a_data);  // no copy
  const GgufTensorInfo b_copy = *file->find_tensor("b");
  std::vector<float> b(3);
  std::memcpy(b.data(), file->tensor_data(b_copy).data(), 12);
  EXPECT_EQ(b, (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(file->find_tensor("b")->offset % file->alignment(), 0u);
  EXPECT_EQ(file->file_size(), file->find_tensor("b")->offset + 12);
  EXPECT_EQ(*file->metadata().get_string("general.architecture"), "llama");
}

TEST(GgufAssemble, RefusesBadTensorsNamingThem) {
  std::vector<uint8_t> bytes = float_bytes({1, 2, 3, 4});
  auto refuse = [&](GgufTensorInfo info, size_t num_bytes, const char* expected) {
    std::vector<GgufTensorSource> tensors = {{info, std::span<const uint8_t>(bytes).first(num_bytes)}};
    if (info.name == "twice") tensors.push_back(tensors[0]);
    Result<GgufFile> file = GgufFile::assemble("x", {}, std::move(tensors), {});
    ASSERT_FALSE(file.ok()) << info.name;
    EXPECT_THAT(file.status().message(), HasSubstr(expected));
  };
  refuse({.name = "short", .shape = {4}, .type = GgmlType::kF32}, 12, "tensor 'short': 12 bytes");
  refuse({.name = "zero", .shape = {4, 0}, .type = GgmlType::kF32}, 16, "tensor 'zero' has shape");
  refuse({.name = "flat", .shape = {}, .type = GgmlType::kF32}, 16, "tensor 'flat' has 0 dimensions");
  refuse({.name = "twice", .shape = {4}, .type = GgmlType::kF32}, 16, "tensor 'twice' appears twice");
  refuse({.name = "block", .shape = {16}, .type = GgmlType::kQ8_0}, 16, "not a multiple");
}

}  // namespace
}  // namespace met
