// Tests for GgufWriter (src/gguf/gguf_writer.h): files round-trip through
// GgufFile byte for byte (metadata of every type, nested arrays, tensors of
// several types and shapes, alignments 32 and 64), write_buffer equals
// write_file, and bad tensors, bad values and failing fills are refused
// without leaving a file behind.
#include "gguf/gguf_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf/gguf_file.h"
#include "gguf_test_util.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

Status fill_zeros(std::span<uint8_t> out) {
  std::fill(out.begin(), out.end(), 0);
  return Status();
}

void expect_round_trip(uint64_t alignment) {
  SCOPED_TRACE(alignment);
  const GgufWriter writer = testing::sample_writer(alignment);
  Result<std::vector<uint8_t>> bytes = writer.write_buffer();
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  Result<GgufFile> file = GgufFile::parse(*bytes, "written");
  ASSERT_TRUE(file.ok()) << file.status().to_string();

  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), alignment);
  EXPECT_EQ(file->data_offset() % alignment, 0u);
  EXPECT_EQ(file->file_size() % alignment, 0u);

  GgufMetadata expected = testing::sample_metadata();
  if (alignment != 32) expected.set("general.alignment", static_cast<uint32_t>(alignment));
  EXPECT_EQ(file->metadata().entries(), expected.entries());

  ASSERT_EQ(file->tensors().size(), 7u);
  for (const GgufTensorInfo& info : file->tensors()) {
    SCOPED_TRACE(info.name);
    EXPECT_EQ(info.offset % alignment, 0u);
    const std::span<const uint8_t> data = file->tensor_data(info);
    const std::vector<uint8_t> want = testing::sample_tensor_bytes(info.name, info.num_bytes);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), want.begin(), want.end()));
  }
  const GgufTensorInfo* q4k = file->find_tensor("blk.0.ffn_up.weight");
  ASSERT_NE(q4k, nullptr);
  EXPECT_EQ(q4k->type, GgmlType::kQ4_K);
  EXPECT_EQ(q4k->shape, (std::vector<uint64_t>{256, 2, 1}));
  EXPECT_EQ(q4k->num_bytes, 2u * 144u);
  const GgufTensorInfo* q4 = file->find_tensor("blk.0.ffn_down.weight");
  ASSERT_NE(q4, nullptr);
  EXPECT_EQ(q4->shape, (std::vector<uint64_t>{32, 1, 2, 2}));
  EXPECT_EQ(q4->num_bytes, 4u * 18u);
}

TEST(GgufWriter, RoundTripsEveryValueTypeAndTensorAtAlignment32) { expect_round_trip(32); }

TEST(GgufWriter, RoundTripsEveryValueTypeAndTensorAtAlignment64) { expect_round_trip(64); }

TEST(GgufWriter, WritesTheAlignmentKeyOnlyWhenItIsNot32) {
  GgufWriter writer32(32);
  Result<GgufFile> file32 = GgufFile::parse(*writer32.write_buffer(), "");
  ASSERT_TRUE(file32.ok());
  EXPECT_FALSE(file32->metadata().contains("general.alignment"));

  GgufWriter writer8(8);
  const std::vector<uint8_t> bytes8 = *writer8.write_buffer();
  Result<GgufFile> file8 = GgufFile::parse(bytes8, "");
  ASSERT_TRUE(file8.ok());
  EXPECT_EQ(*file8->metadata().find("general.alignment"), GgufValue(uint32_t{8}));
}

TEST(GgufWriter, ReplacesACallerSetAlignmentWithTheConstructorsValue) {
  GgufWriter writer(64);
  writer.set("general.alignment", uint64_t{16});
  Result<GgufFile> file = GgufFile::parse(*writer.write_buffer(), "");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->alignment(), 64u);
  EXPECT_EQ(*file->metadata().find("general.alignment"), GgufValue(uint32_t{64}));
  EXPECT_EQ(file->metadata().size(), 1u);
}

TEST(GgufWriter, WriteBufferEqualsWriteFileBytes) {
  testing::TempDir dir;
  for (uint64_t alignment : {32u, 64u}) {
    const GgufWriter writer = testing::sample_writer(alignment);
    const std::string path = dir.file("model.gguf");
    ASSERT_TRUE(writer.write_file(path).ok());
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    EXPECT_EQ(read_all(path), *writer.write_buffer());

    Result<GgufFile> file = GgufFile::open(path);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    EXPECT_EQ(file->tensors().size(), 7u);
  }
}

TEST(GgufWriter, AnEmptyWriterWritesAValidFile) {
  const std::vector<uint8_t> bytes = *GgufWriter().write_buffer();
  EXPECT_EQ(bytes.size(), 32u);  // 24-byte header padded to 32
  Result<GgufFile> file = GgufFile::parse(bytes, "");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->metadata().size(), 0u);
  EXPECT_TRUE(file->tensors().empty());
}

TEST(GgufWriter, FillReceivesExactlyTheTensorsBytes) {
  GgufWriter writer;
  size_t seen_bytes = 0;
  ASSERT_TRUE(writer
                  .add_tensor("w", {64, 3}, GgmlType::kQ8_0,
                              [&](std::span<uint8_t> out) {
                                seen_bytes = out.size();
                                return fill_zeros(out);
                              })
                  .ok());
  ASSERT_TRUE(writer.write_buffer().ok());
  EXPECT_EQ(seen_bytes, 3u * 2u * 34u);  // 3 rows of 2 blocks
}

TEST(GgufWriter, RefusesBadTensors) {
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor("a", {4}, GgmlType::kF32, fill_zeros).ok());
  const auto message = [&](std::string name, std::vector<uint64_t> shape, GgmlType type) {
    Status status = writer.add_tensor(std::move(name), std::move(shape), type, fill_zeros);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    return status.message();
  };
  EXPECT_THAT(message("a", {4}, GgmlType::kF32), HasSubstr("duplicate tensor name 'a'"));
  EXPECT_THAT(message("b", {}, GgmlType::kF32), HasSubstr("0 dimensions"));
  EXPECT_THAT(message("b", {1, 1, 1, 1, 1}, GgmlType::kF32), HasSubstr("5 dimensions"));
  EXPECT_THAT(message("b", {4, 0}, GgmlType::kF32), HasSubstr("dimension 1 is 0"));
  EXPECT_THAT(message("b", {48}, GgmlType::kQ8_0),
              HasSubstr("first dimension 48 is not a multiple of q8_0's block size 32"));
  EXPECT_THAT(message("b", {uint64_t{1} << 40, uint64_t{1} << 40}, GgmlType::kF32),
              HasSubstr("more elements than int64"));
  EXPECT_THAT(message(std::string(64, 'n'), {4}, GgmlType::kF32), HasSubstr("64 bytes"));
  EXPECT_EQ(writer.add_tensor("c", {4}, GgmlType::kF32, nullptr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_THAT(writer.add_tensor_bytes("d", {4}, GgmlType::kF32, std::vector<uint8_t>(15)).message(),
              HasSubstr("needs 16 bytes of f32 data, got 15"));
  EXPECT_TRUE(writer.add_tensor_bytes("d", {4}, GgmlType::kF32, std::vector<uint8_t>(16)).ok());
}

TEST(GgufWriter, RefusesAnArrayWhoseItemsDoNotMatchItsElementType) {
  GgufWriter writer;
  writer.set("bad", GgufValue(GgufArray{GgufType::kString, std::vector<uint8_t>{1}}));
  Result<std::vector<uint8_t>> bytes = writer.write_buffer();
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bytes.status().message(),
              HasSubstr("'bad': array elem_type is string but holds uint8"));
}

TEST(GgufWriter, RefusesArraysNestedDeeperThanTheReaderAllows) {
  GgufArray nested{GgufType::kInt32, std::vector<int32_t>{1}};
  for (int depth = 1; depth < kGgufMaxArrayDepth; ++depth) {
    nested = GgufArray{GgufType::kArray, std::vector<GgufArray>{nested}};
  }
  GgufWriter writer;
  writer.set("deepest", GgufValue(nested));
  ASSERT_TRUE(writer.write_buffer().ok());
  writer.set("too_deep", GgufValue::array(std::vector<GgufArray>{nested}));
  Result<std::vector<uint8_t>> bytes = writer.write_buffer();
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("'too_deep': arrays nested deeper than"));
}

TEST(GgufWriter, AFailingFillFailsTheWriteAndLeavesNoFile) {
  testing::TempDir dir;
  const std::string path = dir.file("model.gguf");
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor("ok", {4}, GgmlType::kF32, fill_zeros).ok());
  ASSERT_TRUE(writer
                  .add_tensor("broken", {4}, GgmlType::kF32,
                              [](std::span<uint8_t>) {
                                return Status(StatusCode::kIo, "source read failed");
                              })
                  .ok());
  const Status status = writer.write_file(path);
  EXPECT_EQ(status.code(), StatusCode::kIo);
  EXPECT_EQ(status.message(), "gguf writer: tensor 'broken': source read failed");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(writer.write_buffer().status().code(), StatusCode::kIo);
}

TEST(GgufWriter, AFailedWriteKeepsThePreviousFile) {
  testing::TempDir dir;
  const std::string path = dir.file("model.gguf");
  const GgufWriter good = testing::sample_writer(32);
  ASSERT_TRUE(good.write_file(path).ok());
  GgufWriter bad;
  ASSERT_TRUE(
      bad.add_tensor("x", {1}, GgmlType::kF32,
                     [](std::span<uint8_t>) { return Status(StatusCode::kInternal, "boom"); })
          .ok());
  EXPECT_FALSE(bad.write_file(path).ok());
  EXPECT_EQ(read_all(path), *good.write_buffer());
}

TEST(GgufWriter, WritingIntoAMissingDirectoryFailsNamingThePath) {
  const Status status = GgufWriter().write_file("/nonexistent/dir/model.gguf");
  EXPECT_EQ(status.code(), StatusCode::kIo);
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/dir/model.gguf.tmp"));
}

}  // namespace
}  // namespace met
