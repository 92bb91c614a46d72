// Tests of parse_hub_ref and validate_revision (src/hub/hub_ref.h): a table
// of accepted and refused references.
#include "hub/hub_ref.h"

#include <gtest/gtest.h>

namespace met {
namespace {

struct Accepted {
  const char* text;
  const char* repo;
  const char* file;
  const char* tag;
};

TEST(HubRef, ParsesARepoAFileOrATag) {
  const Accepted cases[] = {
      {"Qwen/Qwen3-0.6B-GGUF", "Qwen/Qwen3-0.6B-GGUF", "", ""},
      {"org/repo:model-Q8_0.gguf", "org/repo", "model-Q8_0.gguf", ""},
      {"org/repo:Q4_K_M/model-Q4_K_M.gguf", "org/repo", "Q4_K_M/model-Q4_K_M.gguf", ""},
      {"org/repo:MODEL.GGUF", "org/repo", "MODEL.GGUF", ""},
      {"org/repo:q4_k_m", "org/repo", "", "q4_k_m"},
      {"unsloth/gpt-oss-20b-GGUF:UD-Q4_K_XL", "unsloth/gpt-oss-20b-GGUF", "", "UD-Q4_K_XL"},
      {"a_b.c/d.e_f", "a_b.c/d.e_f", "", ""},
  };
  for (const Accepted& c : cases) {
    Result<HubRef> ref = parse_hub_ref(c.text);
    ASSERT_TRUE(ref.ok()) << c.text << ": " << ref.status().to_string();
    EXPECT_EQ(ref->repo, c.repo) << c.text;
    EXPECT_EQ(ref->file, c.file) << c.text;
    EXPECT_EQ(ref->tag, c.tag) << c.text;
    EXPECT_EQ(ref->revision, "main") << c.text;
    EXPECT_EQ(to_string(*ref), c.text);
  }
}

TEST(HubRef, RefusesMalformedReferencesSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"justarepo", "expected ORG/REPO"},
      {"/repo", "organization name is empty"},
      {"org/", "repo name is empty"},
      {"org/repo/extra", "one '/'"},
      {"org/repo:", "nothing after ':'"},
      {"org/re po", "may hold only"},
      {"org--x/repo", "may not contain '--'"},
      {"org/re..po", "may not contain '--' or '..'"},
      {"-org/repo", "may not begin or end"},
      {"org/repo:../../etc/x.gguf", "may not contain '..'"},
      {"org/repo:/abs.gguf", "relative path"},
      {"org/repo:a//b.gguf", "relative path"},
      {"org/repo:Q4 K", "neither a .gguf file nor a quant tag"},
      {"org/repo:model.bin", "neither a .gguf file nor a quant tag"},
  };
  for (const auto& [text, why] : cases) {
    Result<HubRef> ref = parse_hub_ref(text);
    ASSERT_FALSE(ref.ok()) << text;
    EXPECT_EQ(ref.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(ref.status().message().find(why), std::string::npos) << text << ": " << ref.status().message();
    EXPECT_NE(ref.status().message().find(text), std::string::npos) << "the message names the text: " << text;
  }
}

TEST(HubRef, RefusesAnOverlongName) {
  EXPECT_FALSE(parse_hub_ref("org/" + std::string(97, 'a')).ok());
  EXPECT_TRUE(parse_hub_ref("org/" + std::string(96, 'a')).ok());
}

TEST(HubRef, ValidatesRevisions) {
  for (const char* good : {"main", "v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567"}) {
    EXPECT_TRUE(validate_revision(good).ok()) << good;
  }
  for (const char* bad : {"", "../x", "a b", "/main", "main/", "a..b"}) {
    EXPECT_FALSE(validate_revision(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace met
