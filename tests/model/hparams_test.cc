// Tests for read_hparams (src/model/hparams.h).
#include "model/hparams.h"

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "testing/shared_data.h"

namespace met {
namespace {

GgufMetadata llama_metadata() {
  GgufMetadata md;
  md.set("general.architecture", std::string("llama"));
  md.set("llama.block_count", uint32_t{4});
  md.set("llama.embedding_length", uint32_t{128});
  md.set("llama.feed_forward_length", uint32_t{256});
  md.set("llama.attention.head_count", uint32_t{8});
  md.set("llama.attention.head_count_kv", uint32_t{2});
  md.set("llama.context_length", uint32_t{1024});
  return md;
}

TEST(ReadHParams, ReadsTheArchitectureKeys) {
  auto hp = read_hparams(llama_metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->arch, "llama");
  EXPECT_EQ(hp->num_layers, 4u);
  EXPECT_EQ(hp->embedding_length, 128u);
  EXPECT_EQ(hp->feed_forward_length, 256u);
  EXPECT_EQ(hp->num_heads, 8u);
  EXPECT_EQ(hp->num_kv_heads, 2u);
  EXPECT_EQ(hp->context_length, 1024u);
}

TEST(ReadHParams, DefaultsFollowLlamaCpp) {
  auto hp = read_hparams(llama_metadata());
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->head_dim, 16u);   // embedding / heads
  EXPECT_EQ(hp->rope_dims, 16u);  // the whole head
  EXPECT_FLOAT_EQ(hp->rope_freq_base, 10000.0f);
  EXPECT_FLOAT_EQ(hp->rms_norm_eps, 1e-5f);
  EXPECT_EQ(hp->rope_scaling.kind, RopeScalingKind::kNone);
}

TEST(ReadHParams, MissingKeyIsNamed) {
  GgufMetadata md;
  md.set("general.architecture", std::string("qwen2"));
  md.set("qwen2.embedding_length", uint32_t{64});
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_EQ(hp.status().code(), StatusCode::kNotFound);
  EXPECT_NE(hp.status().message().find("qwen2.block_count"), std::string::npos);
}

TEST(ReadHParams, MistypedKeyIsNamed) {
  GgufMetadata md = llama_metadata();
  md.set("llama.block_count", std::string("four"));
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("llama.block_count"), std::string::npos);
}

TEST(ReadHParams, KvHeadsMustDivideHeads) {
  GgufMetadata md = llama_metadata();
  md.set("llama.attention.head_count_kv", uint32_t{3});
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("head_count_kv 3"), std::string::npos);
}

TEST(ReadHParams, ReadsYarnScaling) {
  GgufMetadata md = llama_metadata();
  md.set("llama.rope.scaling.type", std::string("yarn"));
  md.set("llama.rope.scaling.factor", 4.0f);
  md.set("llama.rope.scaling.original_context_length", uint32_t{256});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->rope_scaling.kind, RopeScalingKind::kYarn);
  EXPECT_FLOAT_EQ(hp->rope_scaling.factor, 4.0f);
  EXPECT_EQ(hp->rope_scaling.original_context_length, 256u);
}

TEST(ReadHParams, UnknownRopeScalingIsUnimplemented) {
  GgufMetadata md = llama_metadata();
  md.set("llama.rope.scaling.type", std::string("longrope"));
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_EQ(hp.status().code(), StatusCode::kUnimplemented);
}

TEST(ReadHParams, Stories260KHasTheDocumentedShape) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto hp = read_hparams(file->metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->num_layers, 5u);
  EXPECT_EQ(hp->embedding_length, 64u);
  EXPECT_EQ(hp->num_heads, 8u);
  EXPECT_EQ(hp->num_kv_heads, 4u);
  EXPECT_EQ(hp->feed_forward_length, 172u);
  EXPECT_EQ(hp->vocab_size, 512u);
  EXPECT_EQ(hp->head_dim, 8u);
  EXPECT_EQ(hp->rope_dims, 8u);
}

}  // namespace
}  // namespace met
