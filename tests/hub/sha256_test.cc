// Tests of Sha256 (src/hub/sha256.h) against FIPS 180-2's test vectors, and
// of hashing files whole and in part.
#include "hub/sha256.h"

#include <fstream>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace met {
namespace {

TEST(Sha256, MatchesTheStandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalUpdatesAndResetAgree) {
  Sha256 h;
  h.update("garbage");
  h.reset();
  h.update("a");
  h.update("");
  h.update("bc");
  EXPECT_EQ(h.finish_hex(), sha256_hex("abc"));
}

TEST(Sha256, HashesFilesWholeAndInPart) {
  testing::TempDir dir;
  const std::string path = dir.file("f.bin");
  std::string content(3 << 20, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 3);
  std::ofstream(path, std::ios::binary) << content;
  Result<std::string> whole = sha256_file(path);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ(*whole, sha256_hex(content));
  Sha256 part;
  ASSERT_TRUE(sha256_update_from_file(part, path, 1000).ok());
  part.update(std::string_view(content).substr(1000));
  EXPECT_EQ(part.finish_hex(), *whole);
  Sha256 past_end;
  EXPECT_FALSE(sha256_update_from_file(past_end, path, content.size() + 1).ok());
  EXPECT_FALSE(sha256_file(dir.file("missing")).ok());
}

}  // namespace
}  // namespace met
