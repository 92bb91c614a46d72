// Tests of pull_model (src/hub/hub_client.h) end to end against FakeHub on a
// real loopback socket: the tree listing, the file choice, the redirect to
// storage, the sha256 check, resuming, the cache (a second pull makes no
// request; a cached model needs no hub at all), and the errors a user sees.
#include "hub/hub_client.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hub/hub_test_support.h"
#include "hub/sha256.h"
#include "testing/fake_hub.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::FakeHub;
using testing::model_bytes;
using testing::read_file;
using testing::ref_of;

class HubClient : public ::testing::Test {
 protected:
  HubClient() {
    hub_.add_file("org/model", "README.md", "# a model\n", "none");
    hub_.add_file("org/model", "model-Q8_0.gguf", q8_);
    hub_.add_file("org/model", "model-Q4_K_M.gguf", q4_);
    hub_.add_file("org/model", "mmproj-model-Q4_K_M.gguf", model_bytes(500, 9));
    options_.endpoint = hub_.endpoint();
    options_.cache_dir = dir_.path();
    options_.max_attempts = 1;
  }
  std::string cached(const std::string& file) const { return dir_.path() + "/hub/org--model/main/" + file; }

  FakeHub hub_;
  testing::TempDir dir_;
  HubOptions options_;
  const std::string q8_ = model_bytes(70000, 2);
  const std::string q4_ = model_bytes(50000, 3);
};

TEST_F(HubClient, PullsTheDefaultQuantThroughTheListingAndTheRedirect) {
  std::vector<PullStart> starts;
  PullEvents events;
  events.on_start = [&](const PullStart& s) { starts.push_back(s); };
  Result<PullResult> r = pull_model(ref_of("org/model"), options_, events);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->path, cached("model-Q4_K_M.gguf"));
  EXPECT_FALSE(r->from_cache);
  EXPECT_TRUE(r->verified);
  EXPECT_EQ(read_file(r->path), q4_);
  EXPECT_FALSE(std::filesystem::exists(r->path + ".part"));
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].url, hub_.endpoint() + "/org/model/resolve/main/model-Q4_K_M.gguf");
  EXPECT_EQ(starts[0].size, 50000u);
  const auto requests = hub_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].target, "/api/models/org/model/tree/main?recursive=true");
  EXPECT_EQ(requests[1].target, "/org/model/resolve/main/model-Q4_K_M.gguf");
  EXPECT_EQ(requests[2].target, "/storage/org/model/main/model-Q4_K_M.gguf");
}

TEST_F(HubClient, ASecondPullMakesNoRequestAndACachedModelNeedsNoHub) {
  ASSERT_TRUE(pull_model(ref_of("org/model"), options_).ok());
  ASSERT_TRUE(pull_model(ref_of("org/model:Q8_0"), options_).ok());
  ASSERT_TRUE(pull_model(ref_of("org/model:model-Q8_0.gguf"), options_).ok());
  const size_t before = hub_.requests().size();
  for (const char* text : {"org/model", "org/model:q8_0", "org/model:model-Q8_0.gguf", "org/model:Q4_K_M"}) {
    Result<PullResult> r = pull_model(ref_of(text), options_);
    ASSERT_TRUE(r.ok()) << text << ": " << r.status().to_string();
    EXPECT_TRUE(r->from_cache) << text;
  }
  // Q4_K_M by tag was never recorded: the listing is read, the file is found cached, not downloaded.
  EXPECT_EQ(hub_.requests().size(), before + 1);
  EXPECT_EQ(hub_.count_requests("/storage/"), 2);
  options_.endpoint = "http://127.0.0.1:" + std::to_string(testing::closed_port());  // offline
  Result<PullResult> offline = pull_model(ref_of("org/model"), options_);
  ASSERT_TRUE(offline.ok()) << offline.status().to_string();
  EXPECT_EQ(read_file(offline->path), q4_);
}

TEST_F(HubClient, ACorruptedBodyFailsAndLeavesNoFile) {
  hub_.corrupt_bodies(true);
  Result<PullResult> r = pull_model(ref_of("org/model:Q8_0"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("expected " + sha256_hex(q8_)), std::string::npos) << r.status().message();
  EXPECT_FALSE(std::filesystem::exists(cached("model-Q8_0.gguf")));
  EXPECT_FALSE(std::filesystem::exists(cached("model-Q8_0.gguf.part")));
  hub_.corrupt_bodies(false);
  Result<PullResult> again = pull_model(ref_of("org/model:Q8_0"), options_);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(read_file(again->path), q8_);
}

TEST_F(HubClient, TheListingsSha256IsChecked) {
  hub_.add_file("org/model", "model-F16.gguf", model_bytes(1000, 4), sha256_hex("not these bytes"));
  Result<PullResult> r = pull_model(ref_of("org/model:F16"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected " + sha256_hex("not these bytes")), std::string::npos)
      << r.status().message();
}

TEST_F(HubClient, ResumesWhatAnInterruptedPullLeft) {
  hub_.cut_transfers(1, 20000);
  Result<PullResult> first = pull_model(ref_of("org/model:Q8_0"), options_);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(std::filesystem::file_size(cached("model-Q8_0.gguf.part")), 20000u);
  uint64_t part_bytes = 0;
  PullEvents events;
  events.on_start = [&](const PullStart& s) { part_bytes = s.part_bytes; };
  Result<PullResult> second = pull_model(ref_of("org/model:Q8_0"), options_, events);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(part_bytes, 20000u);
  EXPECT_EQ(read_file(second->path), q8_);
  EXPECT_EQ(hub_.requests().back().range, "bytes=20000-");
}

TEST_F(HubClient, AnUnknownRepoIsNotFoundNamingTheUrl) {
  Result<PullResult> r = pull_model(ref_of("org/absent"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(hub_.endpoint() + "/api/models/org/absent/tree/main"), std::string::npos)
      << r.status().message();
  HubRef other_revision = ref_of("org/model");
  other_revision.revision = "v9";
  EXPECT_EQ(pull_model(other_revision, options_).status().code(), StatusCode::kNotFound);
}

TEST_F(HubClient, AnUnknownFileOrTagListsTheRepoGgufs) {
  for (const char* text : {"org/model:model-F32.gguf", "org/model:Q2_K"}) {
    Result<PullResult> r = pull_model(ref_of(text), options_);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << text;
    EXPECT_NE(r.status().message().find("model-Q4_K_M.gguf, model-Q8_0.gguf"), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(hub_.count_requests("/storage/"), 0);
}

TEST_F(HubClient, AGatedRepoAsksForHfTokenAndWorksWithIt) {
  hub_.require_token("hf_secret");
  Result<PullResult> r = pull_model(ref_of("org/model"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("HTTP 401"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("set HF_TOKEN"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(hub_.endpoint() + "/api/models/org/model/tree/main"), std::string::npos);
  options_.token = "hf_secret";
  Result<PullResult> ok = pull_model(ref_of("org/model"), options_);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(hub_.requests().back().authorization, "Bearer hf_secret");
}

TEST_F(HubClient, AnUnreachableHubSaysOffline) {
  options_.endpoint = "http://127.0.0.1:" + std::to_string(testing::closed_port());
  Result<PullResult> r = pull_model(ref_of("org/model"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIo);
  EXPECT_NE(r.status().message().find("cannot reach " + options_.endpoint), std::string::npos) << r.status().message();
}

TEST(HubUrls, HaveTheHubsShapes) {
  HubRef ref = ref_of("org/model");
  EXPECT_EQ(hub_resolve_url("https://huggingface.co/", ref, "Q4_K_M/m a.gguf"),
            "https://huggingface.co/org/model/resolve/main/Q4_K_M/m%20a.gguf");
  ref.revision = "refs/pr/1";
  EXPECT_EQ(hub_tree_url("https://hf-mirror.com", ref),
            "https://hf-mirror.com/api/models/org/model/tree/refs%2Fpr%2F1?recursive=true");
}

}  // namespace
}  // namespace met
