// Tests for lora_load.h and random_lora.h: a made adapter loads with every
// pair where the file has it (A as stored, B transposed, alpha / rank as
// its scale); each fault of a file is an error naming the file and the
// tensor (not an adapter, another architecture, another base model, a
// shape that does not fit, a pair missing its half, another suffix, a
// matrix met does not adapt, a type it cannot decode, ranks that differ);
// make_random_lora is deterministic per seed and refuses what it cannot
// write.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "gguf/gguf_writer.h"
#include "model/lora_load.h"
#include "model/random_lora.h"
#include "tensor/quantize.h"
#include "testing/model_test_support.h"

namespace met {
namespace {

RandomModelSpec llama_spec(uint32_t layers, uint32_t embd) {
  RandomModelSpec s;
  s.num_layers = layers;
  s.embedding_length = embd;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 96;
  s.vocab_size = 512;
  return s;
}

std::string load_error(const std::string& path, const Model& model) {
  auto a = load_lora(path, model, "x");
  EXPECT_FALSE(a.ok()) << path << " loaded";
  return a.ok() ? "" : a.status().message();
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct HandTensor {
  std::string name;
  std::vector<uint64_t> shape;
  GgmlType type = GgmlType::kF32;
};

// An adapter file with these tensors (zeros), for architecture `arch`.
void write_adapter(const std::string& path, const std::vector<HandTensor>& tensors, const std::string& arch = "llama",
                   const std::string& type = "adapter") {
  GgufWriter w;
  w.set("general.architecture", GgufValue(arch));
  w.set("general.type", GgufValue(type));
  w.set("adapter.type", GgufValue(std::string("lora")));
  for (const HandTensor& t : tensors) {
    const uint64_t rows = t.shape.size() > 1 ? t.shape[1] : 1;
    std::vector<uint8_t> bytes(rows * ggml_row_bytes(t.type, t.shape[0]).value_or(0));
    ASSERT_TRUE(w.add_tensor_bytes(t.name, t.shape, t.type, std::move(bytes)).ok()) << t.name;
  }
  ASSERT_TRUE(w.write_file(path).ok());
}

TEST(LoraLoad, AMadeAdapterLoadsEveryPairAsStored) {
  testing::TempDir dir;
  auto model = testing::make_and_load(llama_spec(2, 64), dir);
  ASSERT_NE(model, nullptr);
  RandomLoraSpec spec;
  spec.rank = 8;
  spec.alpha = 4.0f;
  spec.targets = *parse_lora_targets("q,down,output");
  auto made = make_random_lora(dir.file("m.gguf"), dir.file("a.gguf"), spec);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  EXPECT_EQ(made->num_pairs, 5);  // q and down of 2 layers, and the head
  auto a = load_lora(dir.file("a.gguf"), *model, "mine", 3.0f);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  const LoraAdapter& ad = **a;
  EXPECT_EQ(ad.name, "mine");
  EXPECT_EQ(ad.max_rank, 8);
  ASSERT_EQ(ad.layers.size(), 2u);
  EXPECT_EQ(ad.find(0, LoraTarget::kK), nullptr);
  EXPECT_EQ(ad.find(1, LoraTarget::kGate), nullptr);
  const LoraPair* down = ad.find(1, LoraTarget::kDown);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->rows, 64);
  EXPECT_EQ(down->cols, 96);
  EXPECT_FLOAT_EQ(down->scale, 3.0f * 4.0f / 8.0f);
  ASSERT_NE(ad.find(0, LoraTarget::kOutput), nullptr);
  EXPECT_EQ(ad.output.rows, 512);
  // A as stored; B in panels.
  auto file = GgufFile::open(dir.file("a.gguf"));
  ASSERT_TRUE(file.ok());
  const GgufTensorInfo* fa = file->find_tensor("blk.1.ffn_down.weight.lora_a");
  const GgufTensorInfo* fb = file->find_tensor("blk.1.ffn_down.weight.lora_b");
  ASSERT_TRUE(fa != nullptr && fb != nullptr);
  std::vector<float> av(fa->num_elements), bv(fb->num_elements);
  ASSERT_TRUE(dequantize_row(fa->type, file->tensor_data(*fa), av).ok());
  ASSERT_TRUE(dequantize_row(fb->type, file->tensor_data(*fb), bv).ok());
  EXPECT_EQ(down->a, av);
  for (int64_t o = 0; o < 64; ++o) {
    for (int64_t k = 0; k < 8; ++k) {
      ASSERT_EQ(down->bp[static_cast<size_t>(lora_panel_index(o, k, 8))], bv[static_cast<size_t>(o * 8 + k)]);
    }
  }
  EXPECT_EQ(down->bp.size(), 64u * 8);
  EXPECT_EQ(ad.num_bytes(), 4 * (2 * 8 * (64 + 96) + 2 * 8 * (64 + 64) + 8 * (64 + 512)));
}

TEST(LoraLoad, AnF16AdapterIsKeptAsItsF16BitsAndOthersAsF32) {
  testing::TempDir dir;
  auto model = testing::make_and_load(llama_spec(1, 64), dir);
  ASSERT_NE(model, nullptr);
  for (const GgmlType dtype : {GgmlType::kF16, GgmlType::kBF16}) {
    RandomLoraSpec spec;
    spec.rank = 4;
    spec.dtype = dtype;
    spec.targets = *parse_lora_targets("v");
    ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file("a.gguf"), spec).ok());
    auto a = load_lora(dir.file("a.gguf"), *model, "x");
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    const LoraPair* v = (*a)->find(0, LoraTarget::kV);
    ASSERT_NE(v, nullptr);
    auto file = GgufFile::open(dir.file("a.gguf"));
    const GgufTensorInfo* fa = file->find_tensor("blk.0.attn_v.weight.lora_a");
    if (dtype == GgmlType::kF16) {
      EXPECT_TRUE(v->f16);
      ASSERT_EQ(v->a16.size(), 4u * 64);
      EXPECT_EQ(std::memcmp(v->a16.data(), file->tensor_data(*fa).data(), 4 * 64 * 2), 0) << "A's bits changed";
      EXPECT_TRUE(v->a.empty());
      EXPECT_EQ((*a)->num_bytes(), 2 * (4 * 64 + 32 * 4));
    } else {
      EXPECT_FALSE(v->f16);  // BF16 widens exactly to F32
      EXPECT_EQ(v->a.size(), 4u * 64);
    }
  }
}

TEST(LoraLoad, WithoutAlphaTheScaleIsTheUsersAlone) {
  testing::TempDir dir;
  auto model = testing::make_and_load(llama_spec(1, 64), dir);
  ASSERT_NE(model, nullptr);
  write_adapter(dir.file("a.gguf"), {{"blk.0.attn_q.weight.lora_a", {64, 4}}, {"blk.0.attn_q.weight.lora_b", {4, 64}}});
  auto a = load_lora(dir.file("a.gguf"), *model, "x", 0.5f);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_FLOAT_EQ((*a)->find(0, LoraTarget::kQ)->scale, 0.5f);
}

TEST(LoraLoad, EachFaultOfAFileIsNamed) {
  testing::TempDir dir;
  auto model = testing::make_and_load(llama_spec(2, 64), dir);
  ASSERT_NE(model, nullptr);
  EXPECT_NE(load_error(dir.file("m.gguf"), *model).find("not 'adapter': not a LoRA adapter file"), std::string::npos);

  const std::string path = dir.file("bad.gguf");
  const auto check = [&](const std::vector<HandTensor>& tensors, const std::string& expected,
                         const std::string& arch = "llama") {
    write_adapter(path, tensors, arch);
    const std::string message = load_error(path, *model);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find("bad.gguf"), std::string::npos) << message;
  };
  const HandTensor qa{"blk.0.attn_q.weight.lora_a", {64, 4}}, qb{"blk.0.attn_q.weight.lora_b", {4, 64}};
  check({qa, qb}, "the adapter is for architecture 'qwen3', the model is 'llama'", "qwen3");
  check({qa}, "tensor 'blk.0.attn_q.weight.lora_a' has no lora_b beside it");
  check({qa, qb, {"blk.0.attn_q.weight.lora_c", {4, 4}}}, "tensor 'blk.0.attn_q.weight.lora_c': an adapter's "
                                                          "tensors end in .lora_a or .lora_b");
  check({{"blk.2.attn_q.weight.lora_a", {64, 4}}, {"blk.2.attn_q.weight.lora_b", {4, 64}}},
        "tensor 'blk.2.attn_q.weight' has no base tensor in the model");
  check({{"blk.0.attn_norm.weight.lora_a", {64, 4}}, {"blk.0.attn_norm.weight.lora_b", {4, 1}}},
        "tensor 'blk.0.attn_norm.weight': met adapts attn_q");
  check({{"blk.0.attn_q.weight.lora_a", {32, 4}}, qb},
        "tensor 'blk.0.attn_q.weight' is 64 × 64; its lora_a must be [64, rank] and lora_b [rank, 64]");
  check({qa, {"blk.0.attn_q.weight.lora_b", {8, 64}}}, "tensor 'blk.0.attn_q.weight': lora_a has rank 4, lora_b 8");
  check({{"blk.0.attn_q.weight.lora_a", {64, 4}, GgmlType::kQ4_0}, qb},
        "tensor 'blk.0.attn_q.weight.lora_a' is q4_0; adapters may be F32, F16, BF16 or Q8_0");
  write_adapter(path, {qa, qb}, "llama", "model");
  EXPECT_NE(load_error(path, *model).find("general.type is 'model'"), std::string::npos);
}

TEST(LoraLoad, AnAdapterForAnotherModelIsRefused) {
  testing::TempDir dir, other_dir;
  auto model = testing::make_and_load(llama_spec(2, 64), dir);
  auto other = testing::make_and_load(llama_spec(2, 32), other_dir);
  ASSERT_TRUE(model != nullptr && other != nullptr);
  RandomLoraSpec spec;
  spec.rank = 4;
  ASSERT_TRUE(make_random_lora(other_dir.file("m.gguf"), dir.file("a.gguf"), spec).ok());
  EXPECT_NE(load_error(dir.file("a.gguf"), *model).find("its lora_a must be [64, rank]"), std::string::npos);
}

TEST(RandomLora, IsDeterministicPerSeedAndRefusesWhatItCannotWrite) {
  testing::TempDir dir;
  auto model = testing::make_and_load(llama_spec(1, 64), dir);
  ASSERT_NE(model, nullptr);
  RandomLoraSpec spec;
  spec.rank = 4;
  spec.seed = 5;
  ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file("a.gguf"), spec).ok());
  ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file("b.gguf"), spec).ok());
  spec.seed = 6;
  ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file("c.gguf"), spec).ok());
  EXPECT_EQ(file_bytes(dir.file("a.gguf")), file_bytes(dir.file("b.gguf")));
  EXPECT_NE(file_bytes(dir.file("a.gguf")), file_bytes(dir.file("c.gguf")));
  spec.dtype = GgmlType::kQ8_0;
  auto q8 = make_random_lora(dir.file("m.gguf"), dir.file("d.gguf"), spec);
  ASSERT_FALSE(q8.ok());
  EXPECT_NE(q8.status().message().find("rows of 4 values cannot be q8_0"), std::string::npos) << q8.status().message();
  spec.dtype = GgmlType::kQ4_0;
  EXPECT_FALSE(make_random_lora(dir.file("m.gguf"), dir.file("d.gguf"), spec).ok());
  spec.dtype = GgmlType::kF32;
  spec.rank = 0;
  EXPECT_FALSE(make_random_lora(dir.file("m.gguf"), dir.file("d.gguf"), spec).ok());
}

TEST(RandomLora, TargetsParse) {
  auto t = parse_lora_targets("q,v,down,q");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (std::vector<LoraTarget>{LoraTarget::kQ, LoraTarget::kV, LoraTarget::kDown}));
  auto bad = parse_lora_targets("q,lm_head");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'lm_head' is not one of"), std::string::npos);
}

}  // namespace
}  // namespace met
