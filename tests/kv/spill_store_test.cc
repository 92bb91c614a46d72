// Tests for SpillStore (src/kv/spill_store.h).
#include "kv/spill_store.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace met {
namespace {

using ::testing::HasSubstr;

// f16, 2 layers, 2 kv heads, head_dim 4: 16 tokens x K and V = 512 bytes a layer.
const KvShape kShape{.dtype = GgmlType::kF16, .num_layers = 2, .num_kv_heads = 2, .head_dim = 4,
                     .block_bytes = 2 * 2 * 2 * 4 * 16 * 2};

SpillImage make_image(int32_t num_blocks, uint8_t seed = 1) {
  SpillImage image{.shape = kShape, .num_blocks = num_blocks, .bytes = {}};
  image.bytes.resize(static_cast<size_t>(num_blocks * kShape.block_bytes));
  for (size_t i = 0; i < image.bytes.size(); ++i) image.bytes[i] = static_cast<uint8_t>(i * 31 + seed);
  return image;
}

std::unique_ptr<SpillStore> create_store(const std::filesystem::path& dir) {
  Result<std::unique_ptr<SpillStore>> store = SpillStore::create(dir);
  EXPECT_TRUE(store.ok()) << store.status().to_string();
  return store.ok() ? std::move(store).value() : nullptr;
}

void flip_byte(const std::filesystem::path& path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << path;
  f.seekg(offset);
  const int c = f.get();
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x01));
  ASSERT_TRUE(f) << path;
}

size_t num_files(const std::filesystem::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(SpillStore, RoundTripPreservesTheBytes) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  const SpillImage image = make_image(3);
  ASSERT_TRUE(store->save(SpillId(7), image).ok());
  SpillImage out;
  const Status s = store->open(SpillId(7), kShape, out);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(out.shape, kShape);
  EXPECT_EQ(out.num_blocks, 3);
  EXPECT_EQ(out.bytes, image.bytes);
}

// A recurrent model's image: its blocks, then the sequence's state slot.
TEST(SpillStore, AnImageWithRecurrentStateRoundTripsAndAnotherStateSizeIsRefused) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  KvShape shape = kShape;
  shape.state_bytes = 100;
  SpillImage image{.shape = shape, .num_blocks = 2, .bytes = {}};
  image.bytes.resize(static_cast<size_t>(2 * shape.block_bytes + shape.state_bytes));
  for (size_t i = 0; i < image.bytes.size(); ++i) image.bytes[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_TRUE(store->save(SpillId(3), image).ok());
  SpillImage out;
  ASSERT_TRUE(store->open(SpillId(3), shape, out).ok());
  EXPECT_EQ(out.bytes, image.bytes);
  EXPECT_EQ(out.shape, shape);
  const Status s = store->open(SpillId(3), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("100 of state"));
  image.bytes.pop_back();  // one byte of state short
  EXPECT_EQ(store->save(SpillId(4), image).code(), StatusCode::kInvalidArgument);
}

TEST(SpillStore, OpenReusesTheOutputBufferAcrossImages) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(1), make_image(4, 1)).ok());
  ASSERT_TRUE(store->save(SpillId(2), make_image(2, 2)).ok());
  SpillImage out;
  ASSERT_TRUE(store->open(SpillId(1), kShape, out).ok());
  const uint8_t* buffer = out.bytes.data();
  ASSERT_TRUE(store->open(SpillId(2), kShape, out).ok());
  EXPECT_EQ(out.bytes.data(), buffer);
  EXPECT_EQ(out.num_blocks, 2);
  EXPECT_EQ(out.bytes, make_image(2, 2).bytes);
}

TEST(SpillStore, RoundTripOfAnImageWithNoBlocks) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(1), make_image(0)).ok());
  SpillImage out = make_image(2);
  ASSERT_TRUE(store->open(SpillId(1), kShape, out).ok());
  EXPECT_EQ(out.num_blocks, 0);
  EXPECT_TRUE(out.bytes.empty());
}

TEST(SpillStore, SaveWritesOneFileNamedAfterThePidAndTheId) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(42), make_image(1)).ok());
  const std::filesystem::path expected =
      std::filesystem::path(dir.path()) / ("met-spill-" + std::to_string(getpid()) + "-42.kv");
  EXPECT_EQ(store->path_of(SpillId(42)), expected);
  EXPECT_TRUE(std::filesystem::exists(expected));
  EXPECT_EQ(std::filesystem::file_size(expected),
            static_cast<uintmax_t>(kSpillHeaderBytes + kShape.block_bytes));
  EXPECT_EQ(num_files(dir.path()), 1u);  // no temporary file left behind
}

TEST(SpillStore, SaveReplacesAnEarlierImageOfTheSameId) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(1), make_image(3, 1)).ok());
  ASSERT_TRUE(store->save(SpillId(1), make_image(1, 9)).ok());
  SpillImage out;
  ASSERT_TRUE(store->open(SpillId(1), kShape, out).ok());
  EXPECT_EQ(out.bytes, make_image(1, 9).bytes);
}

TEST(SpillStore, SaveRejectsAnImageWhoseBytesDoNotFillItsBlocks) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  SpillImage image = make_image(2);
  image.bytes.pop_back();
  const Status s = store->save(SpillId(1), image);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(store->path_of(SpillId(1))));
}

TEST(SpillStore, SaveIntoAVanishedDirectoryIsAnIoErrorNamingTheFile) {
  testing::TempDir dir;
  const std::filesystem::path spill_dir = std::filesystem::path(dir.path()) / "spill";
  auto store = create_store(spill_dir);
  std::filesystem::remove_all(spill_dir);
  const Status s = store->save(SpillId(3), make_image(1));
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_THAT(s.message(), HasSubstr(store->path_of(SpillId(3)).string()));
}

TEST(SpillStore, TruncatedFileIsAnErrorNamingTheFileAndBothSizes) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(5), make_image(2)).ok());
  const auto path = store->path_of(SpillId(5));
  const int64_t full = kSpillHeaderBytes + 2 * kShape.block_bytes;
  std::filesystem::resize_file(path, static_cast<uintmax_t>(full - 100));
  SpillImage out;
  const Status s = store->open(SpillId(5), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(path.string()));
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
  EXPECT_THAT(s.message(), HasSubstr("expected " + std::to_string(full) + " bytes, found " +
                                     std::to_string(full - 100)));
}

TEST(SpillStore, FileShorterThanItsHeaderIsTruncated) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(5), make_image(1)).ok());
  const auto path = store->path_of(SpillId(5));
  std::filesystem::resize_file(path, 10);
  SpillImage out;
  const Status s = store->open(SpillId(5), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(path.string()));
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
}

TEST(SpillStore, FileLongerThanItsImageIsAnError) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(5), make_image(1)).ok());
  const auto path = store->path_of(SpillId(5));
  std::ofstream(path, std::ios::app | std::ios::binary) << "x";
  SpillImage out;
  const Status s = store->open(SpillId(5), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(path.string()));
}

TEST(SpillStore, FlippedPayloadByteIsAChecksumErrorNamingTheFile) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(8), make_image(2)).ok());
  const auto path = store->path_of(SpillId(8));
  flip_byte(path, kSpillHeaderBytes + kShape.block_bytes + 17);
  SpillImage out;
  const Status s = store->open(SpillId(8), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(path.string()));
  EXPECT_THAT(s.message(), HasSubstr("checksum"));
}

TEST(SpillStore, EveryFlippedHeaderByteIsAnErrorNamingTheFile) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  for (int64_t offset = 0; offset < kSpillHeaderBytes; ++offset) {
    ASSERT_TRUE(store->save(SpillId(9), make_image(2)).ok());
    const auto path = store->path_of(SpillId(9));
    flip_byte(path, offset);
    SpillImage out;
    const Status s = store->open(SpillId(9), kShape, out);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << "byte " << offset;
    EXPECT_THAT(s.message(), HasSubstr(path.string())) << "byte " << offset;
  }
}

TEST(SpillStore, FlippedChecksumByteIsAChecksumError) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(9), make_image(1)).ok());
  flip_byte(store->path_of(SpillId(9)), 48);  // the checksum's first byte
  SpillImage out;
  EXPECT_THAT(store->open(SpillId(9), kShape, out).message(), HasSubstr("checksum"));
}

TEST(SpillStore, WrongShapeIsAnErrorNamingTheFileAndBothShapes) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(2), make_image(1)).ok());
  KvShape other = kShape;
  other.num_layers = 3;
  SpillImage out;
  const Status s = store->open(SpillId(2), other, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(store->path_of(SpillId(2)).string()));
  EXPECT_THAT(s.message(), HasSubstr("f16 x 2 layers"));
  EXPECT_THAT(s.message(), HasSubstr("f16 x 3 layers"));
}

TEST(SpillStore, WrongDtypeIsAnError) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(2), make_image(1)).ok());
  KvShape other = kShape;
  other.dtype = GgmlType::kBF16;
  SpillImage out;
  EXPECT_THAT(store->open(SpillId(2), other, out).message(), HasSubstr("bf16"));
}

TEST(SpillStore, WrongMagicIsAnErrorNamingTheFile) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(4), make_image(1)).ok());
  const auto path = store->path_of(SpillId(4));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.write("NOTSPILL", 8);
  }
  SpillImage out;
  const Status s = store->open(SpillId(4), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(path.string()));
  EXPECT_THAT(s.message(), HasSubstr("magic"));
}

TEST(SpillStore, WrongVersionIsAnErrorNamingTheVersion) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(4), make_image(1)).ok());
  flip_byte(store->path_of(SpillId(4)), 9);  // version 2 becomes 258
  SpillImage out;
  const Status s = store->open(SpillId(4), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("version 258"));
}

TEST(SpillStore, OpenOfAMissingIdIsNotFoundNamingTheFile) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  SpillImage out;
  const Status s = store->open(SpillId(11), kShape, out);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr(store->path_of(SpillId(11)).string()));
}

TEST(SpillStore, RemoveDeletesTheImage) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(1), make_image(1)).ok());
  ASSERT_TRUE(store->remove(SpillId(1)).ok());
  EXPECT_FALSE(std::filesystem::exists(store->path_of(SpillId(1))));
  SpillImage out;
  EXPECT_EQ(store->open(SpillId(1), kShape, out).code(), StatusCode::kNotFound);
}

TEST(SpillStore, RemoveOfAMissingIdIsNotFoundNamingTheFile) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  const Status s = store->remove(SpillId(12));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr(store->path_of(SpillId(12)).string()));
}

TEST(SpillStore, DestructorRemovesImagesStillThere) {
  testing::TempDir dir;
  auto store = create_store(dir.path());
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(store->save(SpillId(id), make_image(1)).ok());
  ASSERT_TRUE(store->remove(SpillId(2)).ok());
  store.reset();
  EXPECT_EQ(num_files(dir.path()), 0u);
}

TEST(SpillStore, DestructorLeavesOtherFilesAlone) {
  testing::TempDir dir;
  std::ofstream(dir.file("keep.txt")) << "not a spill image";
  auto store = create_store(dir.path());
  ASSERT_TRUE(store->save(SpillId(1), make_image(1)).ok());
  store.reset();
  EXPECT_TRUE(std::filesystem::exists(dir.file("keep.txt")));
  EXPECT_EQ(num_files(dir.path()), 1u);
}

TEST(SpillStore, CreateMakesAMissingDirectoryAndLeavesNoProbeFile) {
  testing::TempDir dir;
  const std::filesystem::path nested = std::filesystem::path(dir.path()) / "a" / "b";
  auto store = create_store(nested);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(std::filesystem::is_directory(nested));
  EXPECT_EQ(num_files(nested), 0u);
}

TEST(SpillStore, CreateFailsClearlyOnAPathUnderARegularFile) {
  testing::TempDir dir;
  std::ofstream(dir.file("plain")) << "x";
  const std::filesystem::path bad = std::filesystem::path(dir.file("plain")) / "spill";
  Result<std::unique_ptr<SpillStore>> store = SpillStore::create(bad);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_THAT(store.status().message(), HasSubstr(bad.string()));
}

TEST(SpillStore, CreateFailsClearlyWhenThePathIsARegularFile) {
  testing::TempDir dir;
  std::ofstream(dir.file("plain")) << "x";
  Result<std::unique_ptr<SpillStore>> store = SpillStore::create(dir.file("plain"));
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(dir.file("plain")));
}

TEST(SpillStore, CreateFailsClearlyOnAReadOnlyDirectory) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes to read-only directories";
  testing::TempDir dir;
  const std::filesystem::path ro = std::filesystem::path(dir.path()) / "ro";
  std::filesystem::create_directory(ro);
  std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  Result<std::unique_ptr<SpillStore>> store = SpillStore::create(ro);
  std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("not writable"));
  EXPECT_THAT(store.status().message(), HasSubstr(ro.string()));
}

}  // namespace
}  // namespace met
