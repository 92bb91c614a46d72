// Tests of choose_gguf and its helpers (src/hub/gguf_choice.h): the choice
// llama.cpp's -hf makes, as a table over listings.
#include "hub/gguf_choice.h"

#include <gtest/gtest.h>

#include "hub/hub_test_support.h"

namespace met {
namespace {

using testing::ref_of;

std::vector<HubFile> listing(std::initializer_list<const char*> paths) {
  std::vector<HubFile> files;
  for (const char* p : paths) files.push_back(HubFile{p, std::nullopt, ""});
  return files;
}

std::string chosen(const std::vector<HubFile>& files, const std::string& ref) {
  Result<HubFile> f = choose_gguf(files, ref_of(ref));
  return f.ok() ? f->path : "error: " + f.status().message();
}

const std::vector<HubFile> kQuants =
    listing({".gitattributes", "README.md", "model-IQ4_XS.gguf", "model-Q4_K.gguf", "model-Q4_K_M.gguf",
             "model-Q4_K_S.gguf", "model-Q8_0.gguf", "mmproj-model-Q4_K_M.gguf"});

TEST(GgufChoice, PrefersQ4KMWithoutATag) { EXPECT_EQ(chosen(kQuants, "org/repo"), "model-Q4_K_M.gguf"); }

TEST(GgufChoice, MatchesATagCaseInsensitivelyAsAWholeWord) {
  EXPECT_EQ(chosen(kQuants, "org/repo:q8_0"), "model-Q8_0.gguf");
  EXPECT_EQ(chosen(kQuants, "org/repo:Q4_K"), "model-Q4_K.gguf");
  EXPECT_EQ(chosen(kQuants, "org/repo:Q4_K_S"), "model-Q4_K_S.gguf");
  EXPECT_EQ(chosen(kQuants, "org/repo:iq4_xs"), "model-IQ4_XS.gguf");
}

TEST(GgufChoice, FallsBackToTheFirstGgufWithoutQ4KM) {
  EXPECT_EQ(chosen(listing({"README.md", "tiny-F16.gguf", "tiny-Q8_0.gguf"}), "org/repo"), "tiny-F16.gguf");
  EXPECT_EQ(chosen(listing({"only.gguf"}), "org/repo"), "only.gguf");
}

TEST(GgufChoice, LeavesOutMultimodalProjectors) {
  EXPECT_EQ(chosen(listing({"mmproj-F16.gguf", "model-Q8_0.gguf"}), "org/repo"), "model-Q8_0.gguf");
}

TEST(GgufChoice, FindsQuantsInSubFolders) {
  EXPECT_EQ(chosen(listing({"Q8_0/model-Q8_0.gguf", "Q4_K_M/model-Q4_K_M.gguf"}), "org/repo"),
            "Q4_K_M/model-Q4_K_M.gguf");
}

TEST(GgufChoice, TakesANamedFileExactly) {
  EXPECT_EQ(chosen(kQuants, "org/repo:model-Q8_0.gguf"), "model-Q8_0.gguf");
  const std::string missing = chosen(kQuants, "org/repo:model-F16.gguf");
  EXPECT_NE(missing.find("has no file 'model-F16.gguf'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("model-Q8_0.gguf"), std::string::npos) << "the message lists the repo's GGUFs";
}

TEST(GgufChoice, AnUnmatchedTagListsTheRepoGgufs) {
  Result<HubFile> f = choose_gguf(kQuants, ref_of("org/repo:Q2_K"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound);
  for (const char* name : {"Q2_K", "model-IQ4_XS.gguf", "model-Q4_K_M.gguf", "model-Q8_0.gguf"}) {
    EXPECT_NE(f.status().message().find(name), std::string::npos) << f.status().message();
  }
  EXPECT_EQ(f.status().message().find("README.md"), std::string::npos);
}

TEST(GgufChoice, ARepoWithoutGgufsSaysSo) {
  Result<HubFile> f = choose_gguf(listing({"config.json", "model.safetensors"}), ref_of("org/repo"));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("no .gguf model file"), std::string::npos) << f.status().message();
}

TEST(GgufChoice, RefusesSplitGgufsButPrefersASingleFile) {
  const std::vector<HubFile> split = listing({"m-Q4_K_M-00001-of-00002.gguf", "m-Q4_K_M-00002-of-00002.gguf"});
  Result<HubFile> f = choose_gguf(split, ref_of("org/repo"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(f.status().message().find("split GGUF"), std::string::npos) << f.status().message();
  EXPECT_FALSE(choose_gguf(split, ref_of("org/repo:m-Q4_K_M-00001-of-00002.gguf")).ok());
  EXPECT_EQ(chosen(listing({"Q8_0/m-Q8_0-00001-of-00003.gguf", "m-Q8_0.gguf"}), "org/repo:Q8_0"), "m-Q8_0.gguf");
}

TEST(GgufChoice, Helpers) {
  EXPECT_TRUE(is_split_gguf("a/b-00001-of-00003.gguf"));
  EXPECT_TRUE(is_split_gguf("b-00003-OF-00003.GGUF"));
  EXPECT_FALSE(is_split_gguf("b-0001-of-0003.gguf"));
  EXPECT_FALSE(is_split_gguf("-00001-of-00003.gguf"));
  EXPECT_TRUE(is_gguf_path("x/Model.GGUF"));
  EXPECT_FALSE(is_gguf_path("x.gguf/readme.md"));
  EXPECT_FALSE(is_gguf_path(".gguf"));
  EXPECT_TRUE(name_has_quant_tag("llama_q4_k_m.gguf", "Q4_K_M"));
  EXPECT_TRUE(name_has_quant_tag("llama.Q4_K_M.gguf", "Q4_K_M"));
  EXPECT_FALSE(name_has_quant_tag("llama-Q4_K_M.gguf", "Q4_K"));
  EXPECT_FALSE(name_has_quant_tag("llama-IQ4_XS.gguf", "Q4_XS"));
  EXPECT_FALSE(name_has_quant_tag("Q4_K_M/llama-F16.gguf", "Q4_K_M")) << "the file name, not its folder";
}

}  // namespace
}  // namespace met
