// Tests of HubCache (src/hub/hub_cache.h): its layout, and finding cached
// files with no network.
#include "hub/hub_cache.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hub/hub_test_support.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::ref_of;

void touch(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << "x";
}

TEST(HubCache, KeepsFilesUnderOrgDashDashRepoAndRevision) {
  const HubCache cache("/c");
  HubRef ref = ref_of("meta-llama/Llama-3-GGUF:Q8_0/m.gguf");
  EXPECT_EQ(cache.revision_dir(ref), "/c/hub/meta-llama--Llama-3-GGUF/main");
  EXPECT_EQ(cache.file_path(ref, ref.file), "/c/hub/meta-llama--Llama-3-GGUF/main/Q8_0/m.gguf");
  EXPECT_EQ(cache.part_path(ref, ref.file), "/c/hub/meta-llama--Llama-3-GGUF/main/Q8_0/m.gguf.part");
  ref.revision = "refs/pr/1";
  EXPECT_EQ(cache.revision_dir(ref), "/c/hub/meta-llama--Llama-3-GGUF/refs%2Fpr%2F1");
}

TEST(HubCache, FindsANamedFileOnlyWhenComplete) {
  testing::TempDir dir;
  const HubCache cache(dir.path());
  const HubRef ref = ref_of("org/repo:m-Q8_0.gguf");
  EXPECT_FALSE(cache.find_cached(ref).has_value());
  touch(cache.part_path(ref, ref.file));
  EXPECT_FALSE(cache.find_cached(ref).has_value()) << "a part file is not a cached model";
  touch(cache.file_path(ref, ref.file));
  EXPECT_EQ(cache.find_cached(ref), cache.file_path(ref, ref.file));
}

TEST(HubCache, RemembersWhichFileATagChose) {
  testing::TempDir dir;
  const HubCache cache(dir.path());
  const HubRef tagged = ref_of("org/repo:q8_0");
  const HubRef plain = ref_of("org/repo");
  ASSERT_TRUE(cache.record_choice(tagged, "m-Q8_0.gguf").ok());
  EXPECT_FALSE(cache.find_cached(tagged).has_value()) << "recorded but not downloaded";
  touch(cache.file_path(tagged, "m-Q8_0.gguf"));
  EXPECT_EQ(cache.find_cached(ref_of("org/repo:Q8_0")), cache.file_path(tagged, "m-Q8_0.gguf")) << "any case";
  EXPECT_FALSE(cache.find_cached(plain).has_value()) << "the default choice is its own record";
  ASSERT_TRUE(cache.record_choice(plain, "m-Q8_0.gguf").ok());
  EXPECT_EQ(cache.find_cached(plain), cache.file_path(plain, "m-Q8_0.gguf"));
}

TEST(HubCache, IgnoresARecordThatWouldLeaveTheCache) {
  testing::TempDir dir;
  const HubCache cache(dir.path());
  const HubRef ref = ref_of("org/repo");
  ASSERT_TRUE(cache.record_choice(ref, "../../../etc/passwd.gguf").ok());
  EXPECT_FALSE(cache.find_cached(ref).has_value());
}

}  // namespace
}  // namespace met
