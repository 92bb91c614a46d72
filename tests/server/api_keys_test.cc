// Tests for ApiKeys: the bearer and x-api-key checks, constant-time equality, the key file.
#include "server/api_keys.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace met {
namespace {

TEST(ConstantTimeEqual, IsEqualityWhateverTheLengths) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("sk-abc", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("sk-abd", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("sk-ab", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("sk-abcd", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("", "sk-abc"));
  EXPECT_FALSE(constant_time_equal(std::string_view("sk-abc\0", 7), "sk-abc"));
}

TEST(ApiKeys, WithNoKeysEveryRequestIsAuthorized) {
  const ApiKeys keys;
  EXPECT_FALSE(keys.required());
  EXPECT_TRUE(keys.authorizes(""));
  EXPECT_TRUE(keys.authorizes("Bearer anything"));
}

TEST(ApiKeys, OnlyABearerHeaderWithOneOfTheKeysIsAuthorized) {
  Result<ApiKeys> keys = ApiKeys::create({"sk-one", "sk-two"}, "");
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_TRUE(keys->required());
  EXPECT_TRUE(keys->authorizes("Bearer sk-one"));
  EXPECT_TRUE(keys->authorizes("Bearer sk-two"));
  EXPECT_TRUE(keys->authorizes("bearer sk-two"));
  EXPECT_FALSE(keys->authorizes(""));
  EXPECT_FALSE(keys->authorizes("sk-one"));
  EXPECT_FALSE(keys->authorizes("Basic sk-one"));
  EXPECT_FALSE(keys->authorizes("Bearer sk-on"));
  EXPECT_FALSE(keys->authorizes("Bearer SK-ONE"));
  EXPECT_FALSE(keys->authorizes("Bearer "));
}

TEST(ApiKeys, AnXApiKeyHeaderIsCheckedAgainstTheSameKeys) {
  Result<ApiKeys> keys = ApiKeys::create({"sk-one"}, "");
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_TRUE(keys->authorizes_key("sk-one"));
  EXPECT_FALSE(keys->authorizes_key(""));
  EXPECT_FALSE(keys->authorizes_key("Bearer sk-one"));
  EXPECT_FALSE(keys->authorizes_key("sk-on"));
  EXPECT_TRUE(ApiKeys().authorizes_key(""));
}

TEST(ApiKeys, AKeyFileGivesOneKeyPerLineSkippingBlanksAndComments) {
  testing::TempDir dir;
  const std::string path = dir.file("keys");
  std::ofstream(path) << "# team keys\n  sk-file-1  \r\n\nsk-file-2\n";
  Result<ApiKeys> keys = ApiKeys::create({"sk-flag"}, path);
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(keys->size(), 3u);
  EXPECT_TRUE(keys->authorizes("Bearer sk-file-1"));
  EXPECT_TRUE(keys->authorizes("Bearer sk-file-2"));
  EXPECT_TRUE(keys->authorizes("Bearer sk-flag"));
}

TEST(ApiKeys, AKeyFileLineMayNameTheKeysTenant) {
  testing::TempDir dir;
  const std::string path = dir.file("keys");
  std::ofstream(path) << "sk-a   team-a\nsk-b\tteam.b@corp\nsk-plain\n";
  Result<ApiKeys> keys = ApiKeys::create({"sk-flag"}, path);
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_TRUE(keys->authorizes("Bearer sk-a"));
  EXPECT_FALSE(keys->authorizes("Bearer sk-a   team-a")) << "the tenant is not part of the key";
  EXPECT_EQ(keys->tenant_of("Bearer sk-a", ""), "team-a");
  EXPECT_EQ(keys->tenant_of("", "sk-b"), "team.b@corp");
  EXPECT_EQ(keys->tenant_of("Bearer sk-plain", ""), "");
  EXPECT_EQ(keys->tenant_of("Bearer sk-flag", ""), "");
  EXPECT_EQ(keys->tenant_of("Bearer sk-unknown", ""), "");
}

TEST(ApiKeys, ATenantWithOddCharactersIsRefusedNamingTheLine) {
  testing::TempDir dir;
  const std::string path = dir.file("keys");
  std::ofstream(path) << "sk-a team-a\nsk-b two words\n";
  const Result<ApiKeys> keys = ApiKeys::create({}, path);
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("line 2"), std::string::npos) << keys.status().message();
  EXPECT_NE(keys.status().message().find("tenant"), std::string::npos) << keys.status().message();
}

TEST(ApiKeys, ErrorsNameTheFlagTheKeysCameFrom) {
  const Result<ApiKeys> keys = ApiKeys::create({""}, "", "--admin-key");
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("--admin-key"), std::string::npos) << keys.status().message();
}

TEST(ApiKeys, AnEmptyKeyAMissingFileOrAFileWithoutKeysIsRefused) {
  testing::TempDir dir;
  EXPECT_FALSE(ApiKeys::create({""}, "").ok());
  EXPECT_FALSE(ApiKeys::create({"sk one"}, "").ok());
  EXPECT_FALSE(ApiKeys::create({}, dir.file("absent")).ok());
  const std::string empty = dir.file("empty");
  std::ofstream(empty) << "# nothing\n\n";
  const Result<ApiKeys> none = ApiKeys::create({}, empty);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("holds no key"), std::string::npos) << none.status().message();
}

}  // namespace
}  // namespace met
