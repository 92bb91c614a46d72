// Tests for MappedFile (src/core/mapped_file.h).
#include "core/mapped_file.h"

#include <fstream>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace met {
namespace {

TEST(MappedFile, MapsTheWholeFile) {
  testing::TempDir dir;
  {
    std::ofstream out(dir.file("a.bin"), std::ios::binary);
    out << "hello";
  }
  auto f = MappedFile::open(dir.file("a.bin"));
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_EQ(f->size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data()), 5), "hello");
}

TEST(MappedFile, EmptyFileMapsToNoBytes) {
  testing::TempDir dir;
  { std::ofstream out(dir.file("empty")); }
  auto f = MappedFile::open(dir.file("empty"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->size(), 0u);
}

TEST(MappedFile, MissingFileIsAnIoErrorNamingThePath) {
  auto f = MappedFile::open("/nonexistent/met/model.gguf");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kIo);
  EXPECT_NE(f.status().message().find("/nonexistent/met/model.gguf"), std::string::npos);
}

TEST(MappedFile, DirectoryIsRefused) {
  testing::TempDir dir;
  auto f = MappedFile::open(dir.path());
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("not a regular file"), std::string::npos);
}

TEST(MappedFile, MoveTransfersTheMapping) {
  testing::TempDir dir;
  { std::ofstream(dir.file("m")) << "xyz"; }
  auto f = MappedFile::open(dir.file("m"));
  ASSERT_TRUE(f.ok());
  MappedFile moved = std::move(f).value();
  EXPECT_EQ(moved.size(), 3u);
  EXPECT_EQ(moved.data()[2], 'z');
}

}  // namespace
}  // namespace met
