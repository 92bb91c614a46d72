// Tests for GgufFile (src/gguf/gguf_file.h): hand-built files with every value
// type and tensor layout, and every real GGUF under ../shared (skipped with a
// message when ../shared is absent).
#include "gguf/gguf_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf_test_util.h"
#include "raw_gguf.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using ::testing::HasSubstr;
using testing::RawGguf;
using ::testing::StartsWith;

TEST(GgufFile, ReadsEveryMetadataValueType) {
  using namespace testing;  // value type ids
  RawGguf raw;
  raw.header(3, 0, 14);
  raw.key("u8", kU8).u8(200);
  raw.key("i8", kI8).put<int8_t>(-100);
  raw.key("u16", kU16).put<uint16_t>(60000);
  raw.key("i16", kI16).put<int16_t>(-30000);
  raw.key("u32", kU32).u32(4000000000u);
  raw.key("i32", kI32).put<int32_t>(-2000000000);
  raw.key("f32", kF32).put<float>(1.5f);
  raw.key("bool", kBool).u8(1);
  raw.key("string", kString).str(std::string_view("h\xc3\xa9llo\0!", 8));
  raw.key("u64", kU64).u64(~uint64_t{0});
  raw.key("i64", kI64).put<int64_t>(-1);
  raw.key("f64", kF64).put<double>(0.25);
  raw.key("strings", kArray).u32(kString).u64(3).str("a").str("").str("ccc");
  raw.key("nested", kArray).u32(kArray).u64(2);
  raw.u32(kI16).u64(2).put<int16_t>(1).put<int16_t>(-2);
  raw.u32(kBool).u64(1).u8(0);

  Result<GgufFile> file = GgufFile::parse(raw.span(), "hand-built");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const GgufMetadata& m = file->metadata();
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(m.size(), 14u);
  EXPECT_EQ(*m.find("u8"), GgufValue(uint8_t{200}));
  EXPECT_EQ(*m.find("i8"), GgufValue(int8_t{-100}));
  EXPECT_EQ(*m.find("u16"), GgufValue(uint16_t{60000}));
  EXPECT_EQ(*m.find("i16"), GgufValue(int16_t{-30000}));
  EXPECT_EQ(*m.find("u32"), GgufValue(uint32_t{4000000000u}));
  EXPECT_EQ(*m.find("i32"), GgufValue(int32_t{-2000000000}));
  EXPECT_EQ(*m.find("f32"), GgufValue(1.5f));
  EXPECT_EQ(*m.find("bool"), GgufValue(true));
  EXPECT_EQ(*m.find("string"), GgufValue(std::string("h\xc3\xa9llo\0!", 8)));
  EXPECT_EQ(*m.find("u64"), GgufValue(~uint64_t{0}));
  EXPECT_EQ(*m.find("i64"), GgufValue(int64_t{-1}));
  EXPECT_EQ(*m.find("f64"), GgufValue(0.25));
  EXPECT_EQ(*m.get_string_array("strings"), (std::vector<std::string>{"a", "", "ccc"}));
  const GgufArray expected_nested{
      GgufType::kArray,
      std::vector<GgufArray>{GgufArray{GgufType::kInt16, std::vector<int16_t>{1, -2}},
                             GgufArray{GgufType::kBool, std::vector<bool>{false}}}};
  EXPECT_EQ(*m.find("nested"), GgufValue(expected_nested));
  EXPECT_EQ(m.entries()[0].first, "u8");
  EXPECT_EQ(m.entries()[13].first, "nested");
  EXPECT_TRUE(file->tensors().empty());
}

TEST(GgufFile, ReadsTheTensorTableAndPlacesDataAfterAlignedPadding) {
  RawGguf raw;
  raw.header(3, 2, 1);
  raw.key("general.alignment", testing::kU32).u32(64);
  raw.tensor("a", {4, 2}, 0 /* f32 */, 0);
  raw.tensor("b", {64}, 8 /* q8_0 */, 64);
  raw.pad_to(64);
  const size_t data_offset = raw.size();
  for (int i = 0; i < 32; ++i) raw.u8(static_cast<uint8_t>(i));
  raw.zeros(32 + 68);

  Result<GgufFile> file = GgufFile::parse(raw.span(), "");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->alignment(), 64u);
  EXPECT_EQ(file->data_offset(), data_offset);
  EXPECT_EQ(file->data_offset() % 64, 0u);
  ASSERT_EQ(file->tensors().size(), 2u);
  const GgufTensorInfo* a = file->find_tensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{4, 2}));
  EXPECT_EQ(a->type, GgmlType::kF32);
  EXPECT_EQ(a->num_elements, 8u);
  EXPECT_EQ(a->num_bytes, 32u);
  const std::span<const uint8_t> a_data = file->tensor_data(*a);
  ASSERT_EQ(a_data.size(), 32u);
  EXPECT_EQ(a_data[0], 0);
  EXPECT_EQ(a_data[31], 31);
  const GgufTensorInfo* b = file->find_tensor("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, GgmlType::kQ8_0);
  EXPECT_EQ(b->num_bytes, 68u);
  EXPECT_EQ(b->offset, 64u);
  EXPECT_EQ(file->find_tensor("c"), nullptr);
}

TEST(GgufFile, AcceptsVersionTwo) {
  RawGguf raw;
  raw.header(2, 0, 1).key("general.architecture", testing::kString).str("llama");
  Result<GgufFile> file = GgufFile::parse(raw.span(), "");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->version(), 2u);
  EXPECT_EQ(*file->metadata().architecture(), "llama");
}

TEST(GgufFile, AcceptsAnAlignmentOfAnyIntegerType) {
  RawGguf raw;
  raw.header(3, 0, 1).key("general.alignment", testing::kU64).u64(16);
  Result<GgufFile> file = GgufFile::parse(raw.span(), "");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->alignment(), 16u);
}

TEST(GgufFile, AFileWithoutTensorsMayEndBeforeThePadding) {
  RawGguf raw;
  raw.header(3, 0, 1).key("k", testing::kU8).u8(1);  // 37 bytes, not padded to 32
  Result<GgufFile> file = GgufFile::parse(raw.span(), "");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->data_offset(), raw.size());
}

TEST(GgufFile, OpenPrefixesErrorsWithThePath) {
  const std::string path = "/nonexistent/dir/model.gguf";
  Result<GgufFile> missing = GgufFile::open(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(path));

  RawGguf raw;
  raw.header(3, 0, 1).key("k", testing::kU32);  // value missing
  Result<GgufFile> parsed = GgufFile::parse(raw.span(), "some/model.gguf");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), StartsWith("some/model.gguf: gguf: metadata key #0 'k'"));
}

// --- Real files under ../shared -------------------------------------------

TEST(GgufFile, ReadsEverySharedModelAndVocabFile) {
  const std::optional<std::string> shared = met::testing::shared_dir();
  if (!shared) GTEST_SKIP() << "../shared is absent (set MET_SHARED_DIR to the shared/ folder)";
  const std::vector<std::string> paths = testing::shared_gguf_paths(*shared);
  ASSERT_FALSE(paths.empty());
  size_t num_read = 0;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    Result<GgufFile> file = GgufFile::open(path);
    if (path.ends_with("tinyllamas-stories-260k-f32.gguf")) {
      EXPECT_FALSE(file.ok());
      continue;
    }
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    EXPECT_EQ(file->version(), 3u);
    EXPECT_TRUE(file->metadata().architecture().ok());
    EXPECT_LE(file->data_offset(), file->file_size());
    for (const GgufTensorInfo& info : file->tensors()) {
      EXPECT_EQ(file->tensor_data(info).size(), info.num_bytes);
    }
    ++num_read;
  }
  EXPECT_GE(num_read, 3u);
}

TEST(GgufFile, Stories260KHasTheExpectedShape) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->source_name(), path);
  EXPECT_EQ(file->tensors().size(), 48u);
  const GgufMetadata& m = file->metadata();
  EXPECT_EQ(m.size(), 19u);
  EXPECT_EQ(*m.get_string("general.architecture"), "llama");
  EXPECT_EQ(*m.get_u32("llama.block_count"), 5u);
  EXPECT_EQ(*m.get_u32("llama.embedding_length"), 64u);
  EXPECT_EQ(*m.get_u32(*m.arch_key("feed_forward_length")), 172u);
  EXPECT_EQ(m.get_string_array("tokenizer.ggml.tokens")->size(), 512u);
  EXPECT_EQ(m.get_f32_array("tokenizer.ggml.scores")->size(), 512u);
  EXPECT_EQ(*m.get_u32("tokenizer.ggml.padding_token_id"), 4294967295u);
  uint64_t num_params = 0;
  for (const GgufTensorInfo& info : file->tensors()) {
    EXPECT_EQ(info.type, GgmlType::kF32) << info.name;
    num_params += info.num_elements;
  }
  EXPECT_EQ(num_params, 292800u);
  const GgufTensorInfo* embd = file->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->shape, (std::vector<uint64_t>{64, 512}));
  EXPECT_EQ(file->tensor_data(*embd).size(), 64u * 512u * 4u);
}

TEST(GgufFile, RefusesVersionOneNamingTheVersion) {
  MET_REQUIRE_SHARED(path, "models/tinyllamas-stories-260k-f32.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("version 1"));
  EXPECT_THAT(file.status().message(), StartsWith(path + ": gguf: "));
  EXPECT_EQ(file.status().message().find('\n'), std::string::npos);
}

TEST(GgufFile, LlamaTinyRandomHasF16Tensors) {
  MET_REQUIRE_SHARED(path, "models/llama-2-tiny-random.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  size_t num_f16 = 0;
  for (const GgufTensorInfo& info : file->tensors()) num_f16 += info.type == GgmlType::kF16;
  EXPECT_EQ(file->tensors().size(), 12u);
  EXPECT_EQ(num_f16, 9u);
  EXPECT_EQ(file->metadata().get_string_array("tokenizer.ggml.tokens")->size(), 32000u);
}

TEST(GgufFile, VocabOnlyFilesHaveNoTensors) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-spm.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_TRUE(file->tensors().empty());
  EXPECT_EQ(*file->metadata().get_string("tokenizer.ggml.model"), "llama");
}

}  // namespace
}  // namespace met
