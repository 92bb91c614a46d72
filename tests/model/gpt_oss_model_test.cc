// Tests for gpt-oss end to end (llama.cpp's LLM_ARCH_OPENAI_MOE: attention
// sinks, sliding-window layers, biases on attention, router and experts,
// top-k-then-softmax routing, the clamped SwiGLU), made by make_random_model,
// through CpuDevice against the double-precision reference forward at every
// position of prompts longer than the window, per weight dtype; batch and
// thread-count invariance; the GGUF keys and tensors llama.cpp's loader reads.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/cpu_device.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met::gpt_oss_model_test {
namespace {

constexpr uint32_t kVocab = 600;
constexpr int32_t kBlocksPerSeq = 24;  // 384 positions

std::vector<BlockId> seq_blocks(int32_t seq) {
  std::vector<BlockId> b;
  for (int32_t i = 0; i < kBlocksPerSeq; ++i) b.emplace_back(seq * kBlocksPerSeq + i);
  return b;
}

std::unique_ptr<CpuDevice> make_device(const Model& m, int threads) {
  return testing::make_test_device(m, {.num_threads = threads,
                                       .num_kv_blocks = 3 * kBlocksPerSeq,
                                       .limits = {.max_rows = 160, .max_outputs = 160, .max_seqs = 8}});
}

RandomModelSpec gpt_oss_spec(GgmlType dtype, uint32_t window, uint32_t pattern) {
  RandomModelSpec s;
  s.arch = Arch::kGptOss;
  s.num_layers = 2;  // layer 0 windowed, layer 1 full (pattern 2)
  s.embedding_length = 256;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 512;
  s.vocab_size = kVocab;
  s.dtype = dtype;
  s.seed = 23;
  s.num_experts = 8;
  s.num_experts_used = 2;
  s.expert_feed_forward_length = 256;
  s.sliding_window = window;
  s.swa_pattern = pattern;
  return s;
}

// Logits at every position: prefill chunks of `chunk` rows with an output per
// row, then one token per step.
std::vector<std::vector<float>> logits_at_every_position(Device& dev, const std::vector<TokenId>& tokens,
                                                         int32_t prefill, int32_t chunk) {
  return testing::logits_at_every_position(dev, tokens, prefill, chunk, seq_blocks(0));
}

struct GptOssCase {
  GgmlType dtype;
  uint32_t window;
  uint32_t pattern;
  int32_t tokens;      // prompt length (longer than the window)
  int32_t prefill;     // the first `prefill` tokens go in chunks, the rest one per step
  int32_t chunk;
  double tolerance;    // max |logit error| relative to the largest |logit|
  bool all_experts;    // every token uses all (4) experts: no discrete choice a rounding can flip
};

class GptOssVsReference : public ::testing::TestWithParam<GptOssCase> {};

TEST_P(GptOssVsReference, LogitsAtEveryPositionAgreeWithTheReferenceThatMasksByWindow) {
  const GptOssCase p = GetParam();
  testing::TempDir dir;
  RandomModelSpec spec = gpt_oss_spec(p.dtype, p.window, p.pattern);
  if (p.all_experts) spec.num_experts = spec.num_experts_used = 4;
  ASSERT_TRUE(make_random_model(spec, dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_EQ((*m)->arch(), Arch::kGptOss);
  const auto tokens = testing::fixed_prompt(static_cast<size_t>(p.tokens), kVocab);
  const auto ref = testing::ReferenceForward(**m).logits(tokens);
  auto dev = make_device(**m, 2);
  const auto got = logits_at_every_position(*dev, tokens, p.prefill, p.chunk);
  ASSERT_EQ(got.size(), ref.size());
  const double worst = testing::expect_logits_agree(ref, got, p.tolerance).worst;
  RecordProperty("max_relative_error", std::to_string(worst));
}

// Tolerances as for the other MoE models (moe_model_test.cc). Windows of 8
// and 20 over 40-48 tokens put most positions past the window, in prefill
// chunks that straddle it and in decode; 100 over 300 tokens crosses the
// kernel's 128-position chunks. F32 and F16 route 2 of 8 experts exactly as
// the reference does. With weights quantized, the router's input moves by up
// to a few percent and 2 layers of 2-of-8 choices on random weights hold
// near-ties from the first positions on; a flipped choice changes its
// position and, through attention, every later one. So the quantized cases
// use all 4 experts of 4: the routing weights still come from the biased
// router's softmax, and the experts run their quantized kernels, biases and
// clamped SwiGLU, with nothing discrete left to flip.
INSTANTIATE_TEST_SUITE_P(
    DtypesAndWindows, GptOssVsReference,
    ::testing::Values(GptOssCase{GgmlType::kF32, 8, 2, 40, 24, 7, 1e-4, false},
                      GptOssCase{GgmlType::kF32, 20, 0, 48, 30, 16, 1e-4, false},
                      GptOssCase{GgmlType::kF32, 100, 2, 300, 290, 150, 1e-4, false},
                      GptOssCase{GgmlType::kF16, 8, 2, 40, 24, 7, 1e-4, false},
                      GptOssCase{GgmlType::kBF16, 8, 2, 40, 24, 7, 2e-2, true},
                      GptOssCase{GgmlType::kQ8_0, 8, 2, 40, 24, 7, 3e-2, true},
                      GptOssCase{GgmlType::kMXFP4, 8, 2, 40, 24, 7, 3e-2, true}),
    [](const auto& param_info) {
      const GptOssCase& c = param_info.param;
      return std::string(ggml_type_name(c.dtype)) + "_window" + std::to_string(c.window) + "_pattern" +
             std::to_string(c.pattern);
    });

// A sequence's logits alone on one thread equal its logits when it shares
// each step with a prefilling and a decoding sequence, on three threads.
TEST(GptOssModel, ARowsLogitsDoNotDependOnTheBatchOrTheThreadCount) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(gpt_oss_spec(GgmlType::kQ8_0, 6, 2), dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const auto tokens = testing::fixed_prompt(20, kVocab);
  auto alone_dev = make_device(**m, 1);
  const auto alone = logits_at_every_position(*alone_dev, tokens, 0, 1);
  auto dev = make_device(**m, 3);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t pos = static_cast<int32_t>(i);
    StepPlan plan;
    for (int32_t j = 0; j < 3; ++j) {  // sequence 1 prefills three tokens per step
      plan.inputs.push_back(FeedToken{static_cast<TokenId>((7 * i + j + 100) % kVocab)});
      plan.positions.push_back(3 * pos + j);
    }
    plan.seqs.push_back(StepSeq{0, 3, 3 * pos, seq_blocks(1), std::nullopt});
    plan.inputs.push_back(FeedToken{tokens[i]});
    plan.positions.push_back(pos);
    plan.seqs.push_back(StepSeq{3, 1, pos, seq_blocks(0), std::nullopt});
    plan.inputs.push_back(FeedToken{static_cast<TokenId>((11 * i + 3) % kVocab)});
    plan.positions.push_back(pos);
    plan.seqs.push_back(StepSeq{4, 1, pos, seq_blocks(2), std::nullopt});
    plan.outputs = {OutputRow{2, OutputKind::kLogits}, OutputRow{3, OutputKind::kLogits}};
    const StepResult r = testing::run_step(*dev, plan);
    const std::vector<float> mine(r.logits.begin() + kVocab, r.logits.begin() + 2 * kVocab);
    EXPECT_EQ(mine, alone[i]) << "position " << i;
  }
}

TEST(GptOssModel, WritesTheKeysAndTensorsLlamaCppsLoaderReads) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(gpt_oss_spec(GgmlType::kMXFP4, 64, 2), dir.file("m.gguf")).ok());
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  const GgufMetadata& md = f->metadata();
  EXPECT_EQ(*md.get_string("general.architecture"), "gpt-oss");
  EXPECT_EQ(*md.get_u32("gpt-oss.attention.sliding_window"), 64u);
  EXPECT_EQ(*md.get_u32("gpt-oss.expert_feed_forward_length"), 256u);
  EXPECT_EQ(*md.get_u32("gpt-oss.expert_count"), 8u);
  EXPECT_EQ(*md.get_u32("gpt-oss.attention.key_length"), 64u);
  auto shape = [&f](const char* name) {
    const GgufTensorInfo* t = f->find_tensor(name);
    return t == nullptr ? std::vector<uint64_t>{} : t->shape;
  };
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(shape("blk.0.attn_sinks.weight"), (Shape{4}));
  EXPECT_EQ(shape("blk.0.attn_q.bias"), (Shape{256}));
  EXPECT_EQ(shape("blk.0.attn_output.bias"), (Shape{256}));
  EXPECT_EQ(shape("blk.0.post_attention_norm.weight"), (Shape{256}));
  EXPECT_EQ(shape("blk.0.ffn_gate_inp.bias"), (Shape{8}));
  EXPECT_EQ(shape("blk.0.ffn_gate_exps.bias"), (Shape{256, 8}));
  EXPECT_EQ(shape("blk.0.ffn_down_exps.bias"), (Shape{256, 8}));
  EXPECT_EQ(f->find_tensor("blk.0.ffn_norm.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.0.ffn_gate_exps.weight")->type, GgmlType::kMXFP4);
  EXPECT_EQ(f->find_tensor("blk.0.attn_sinks.weight")->type, GgmlType::kF32);
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const ModelHParams& hp = (*m)->hparams();
  EXPECT_TRUE(hp.layer_is_swa(0));  // llama.cpp's set_swa_pattern(2): even layers windowed
  EXPECT_FALSE(hp.layer_is_swa(1));
  EXPECT_EQ((*m)->weights().layers[0].window, 64u);
  EXPECT_EQ((*m)->weights().layers[1].window, 0u);
}

TEST(GptOssModel, AFileWithoutItsSlidingWindowIsRefusedByKey) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(gpt_oss_spec(GgmlType::kF32, 8, 2), dir.file("m.gguf")).ok());
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  GgufWriter w(f->alignment());
  for (const auto& [key, value] : f->metadata().entries()) {
    if (key != "gpt-oss.attention.sliding_window") w.set(key, value);
  }
  for (const GgufTensorInfo& t : f->tensors()) {
    auto bytes = f->tensor_data(t);
    ASSERT_TRUE(w.add_tensor_bytes(t.name, t.shape, t.type, {bytes.begin(), bytes.end()}).ok());
  }
  ASSERT_TRUE(w.write_file(dir.file("bad.gguf")).ok());
  auto m = Model::load(dir.file("bad.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("gpt-oss.attention.sliding_window"), std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace met::gpt_oss_model_test
