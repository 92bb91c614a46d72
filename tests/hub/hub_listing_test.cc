// Tests of the hub's listing parsers (src/hub/hub_listing.h) on answers
// shaped as the hub's tree and model APIs give them.
#include "hub/hub_listing.h"

#include <gtest/gtest.h>

namespace met {
namespace {

constexpr const char* kSha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

TEST(HubListing, ReadsFilesWithTheirLfsSha256AndSkipsFolders) {
  const std::string tree = std::string(R"([
    {"type":"file","oid":"aaaa","size":1519,"path":".gitattributes"},
    {"type":"directory","oid":"dddd","size":0,"path":"Q4_K_M"},
    {"type":"file","oid":"bbbb","size":7000000000,"path":"Q4_K_M/m-Q4_K_M.gguf",
     "lfs":{"oid":")") + "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08" +
                           R"(","size":7000000000,"pointerSize":135}}])";
  Result<std::vector<HubFile>> files = parse_tree_listing(tree);
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, ".gitattributes");
  EXPECT_EQ((*files)[0].size, 1519u);
  EXPECT_EQ((*files)[0].sha256, "") << "a non-LFS file has no sha256 from the hub";
  EXPECT_EQ((*files)[1].path, "Q4_K_M/m-Q4_K_M.gguf");
  EXPECT_EQ((*files)[1].size, 7000000000u);
  EXPECT_EQ((*files)[1].sha256, kSha) << "lower-cased";
}

TEST(HubListing, RefusesAnswersThatAreNotListings) {
  for (const char* bad : {"", "not json", "{}", "[1]", R"([{"type":"file"}])", R"([{"path":"x"}])"}) {
    Result<std::vector<HubFile>> files = parse_tree_listing(bad);
    EXPECT_FALSE(files.ok()) << bad;
    EXPECT_EQ(files.status().code(), StatusCode::kDataLoss) << bad;
  }
}

TEST(HubListing, IgnoresAMalformedLfsOid) {
  Result<std::vector<HubFile>> files = parse_tree_listing(R"([{"type":"file","path":"a.gguf","lfs":{"oid":"xyz"}}])");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ((*files)[0].sha256, "");
  EXPECT_FALSE((*files)[0].size.has_value());
}

TEST(HubListing, ReadsTheModelApisSiblings) {
  Result<std::vector<HubFile>> files =
      parse_model_siblings(R"({"id":"org/repo","siblings":[{"rfilename":"README.md"},{"rfilename":"m-Q8_0.gguf"}]})");
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[1].path, "m-Q8_0.gguf");
  EXPECT_FALSE(parse_model_siblings(R"({"id":"x"})").ok());
  EXPECT_FALSE(parse_model_siblings(R"({"siblings":[{"name":"x"}]})").ok());
}

TEST(HubListing, ReadsASha256FromAnEtag) {
  EXPECT_EQ(sha256_from_etag(std::string("\"") + kSha + "\""), kSha);
  EXPECT_EQ(sha256_from_etag(std::string("W/\"") + kSha + "\""), kSha);
  EXPECT_EQ(sha256_from_etag(kSha), kSha);
  EXPECT_EQ(sha256_from_etag("\"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\""), "") << "a git sha1 is no sha256";
  EXPECT_EQ(sha256_from_etag("\"d41d8cd98f00b204e9800998ecf8427e\""), "") << "an md5 storage ETag";
  EXPECT_EQ(sha256_from_etag(""), "");
}

}  // namespace
}  // namespace met
