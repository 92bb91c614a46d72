// The encoders (bert, nomic-bert): the keys read_hparams reads, the tensors
// arch_tensors lists in llama.cpp's converter's order, and made models on the
// CpuDevice (EncoderPass) against the double-precision ReferenceEncoder:
// CLS, mean and last pooling of whole sequences, two sequences in one step
// as alone, and the plans an encoder refuses. Against llama.cpp:
// bench/peer/README.md.
#include <gtest/gtest.h>

#include <cmath>

#include "model/arch.h"
#include "model/hparams.h"
#include "testing/model_test_support.h"
#include "testing/reference_encoder.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::block_range;
using testing::fixed_prompt;

RandomModelSpec encoder_spec(Arch arch) {
  RandomModelSpec s = *random_model_preset("tiny", arch);
  s.num_layers = 2, s.embedding_length = 128, s.num_heads = s.num_kv_heads = 4, s.feed_forward_length = 256;
  s.vocab_size = 600, s.seed = 5;
  return s;
}

void add_seq(StepPlan& plan, std::span<const TokenId> tokens, std::vector<BlockId> table, OutputKind kind) {
  const int32_t begin = plan.num_rows();
  for (size_t i = 0; i < tokens.size(); ++i) {
    plan.inputs.push_back(FeedToken{tokens[i]});
    plan.positions.push_back(static_cast<int32_t>(i));
  }
  const auto n = static_cast<int32_t>(tokens.size());
  plan.seqs.push_back(StepSeq{begin, n, 0, std::move(table), std::nullopt});
  plan.outputs.push_back(OutputRow{kind == OutputKind::kHidden ? begin : begin + n - 1, kind});
}

TEST(EncoderArch, ListsTheTensorsLlamaCppsConverterWrites) {
  ModelHParams hp;
  hp.num_layers = 1, hp.embedding_length = 8, hp.feed_forward_length = 16, hp.vocab_size = 50;
  hp.context_length = 32, hp.token_type_count = 2;
  std::vector<std::string> bert, nomic;
  for (const TensorSpec& t : arch_tensors(Arch::kBert, hp, false)) bert.push_back(t.name);
  for (const TensorSpec& t : arch_tensors(Arch::kNomicBert, hp, false)) nomic.push_back(t.name);
  EXPECT_EQ(bert, (std::vector<std::string>{
                      "token_embd.weight", "token_types.weight", "position_embd.weight", "token_embd_norm.weight",
                      "token_embd_norm.bias", "blk.0.attn_q.weight", "blk.0.attn_q.bias", "blk.0.attn_k.weight",
                      "blk.0.attn_k.bias", "blk.0.attn_v.weight", "blk.0.attn_v.bias", "blk.0.attn_output.weight",
                      "blk.0.attn_output.bias", "blk.0.attn_output_norm.weight", "blk.0.attn_output_norm.bias",
                      "blk.0.ffn_up.weight", "blk.0.ffn_up.bias", "blk.0.ffn_down.weight", "blk.0.ffn_down.bias",
                      "blk.0.layer_output_norm.weight", "blk.0.layer_output_norm.bias"}));
  EXPECT_EQ(nomic, (std::vector<std::string>{
                       "token_embd.weight", "token_types.weight", "token_embd_norm.weight", "token_embd_norm.bias",
                       "blk.0.attn_qkv.weight", "blk.0.attn_output.weight", "blk.0.attn_output_norm.weight",
                       "blk.0.attn_output_norm.bias", "blk.0.ffn_up.weight", "blk.0.ffn_gate.weight",
                       "blk.0.ffn_down.weight", "blk.0.layer_output_norm.weight", "blk.0.layer_output_norm.bias"}));
}

TEST(EncoderHParams, ReadsCausalityPoolingAndTheLayerNormEpsilon) {
  GgufMetadata md;
  md.set("general.architecture", std::string("bert"));
  md.set("bert.block_count", uint32_t{2});
  md.set("bert.embedding_length", uint32_t{64});
  md.set("bert.attention.head_count", uint32_t{4});
  md.set("bert.attention.layer_norm_epsilon", 1e-7f);
  md.set("bert.pooling_type", uint32_t{1});
  md.set("tokenizer.ggml.token_type_count", uint32_t{2});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_FALSE(hp->causal_attention);
  EXPECT_FLOAT_EQ(hp->layer_norm_eps, 1e-7f);
  EXPECT_EQ(hp->pooling, Pooling::kMean);
  EXPECT_EQ(hp->token_type_count, 2u);
  md.set("bert.attention.causal", true);
  EXPECT_FALSE(read_hparams(md).ok()) << "a causal bert is not one met runs";
  md.set("bert.attention.causal", false);
  md.set("bert.pooling_type", uint32_t{4});
  const auto rank = read_hparams(md);
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.status().message().find("pooling type 4"), std::string::npos) << rank.status().message();
}

class EncoderVsReference : public ::testing::TestWithParam<Arch> {};

TEST_P(EncoderVsReference, PooledHiddenStatesMatchTheReferenceAndDoNotDependOnTheBatch) {
  testing::TempDir dir;
  const RandomModelSpec spec = encoder_spec(GetParam());
  const std::unique_ptr<Model> model = testing::make_and_load(spec, dir);
  ASSERT_NE(model, nullptr);
  const std::unique_ptr<CpuDevice> dev = testing::make_test_device(*model);
  EXPECT_FALSE(dev->info().has_head);
  EXPECT_FALSE(dev->info().causal);
  const std::vector<TokenId> a = fixed_prompt(37, spec.vocab_size), b = fixed_prompt(20, spec.vocab_size - 11);
  StepPlan both;
  add_seq(both, a, block_range(0, 3), OutputKind::kHiddenSum);
  add_seq(both, b, block_range(4, 2), OutputKind::kHidden);
  const StepResult r = testing::run_step(*dev, both);
  StepPlan alone;
  add_seq(alone, a, block_range(8, 3), OutputKind::kHidden);
  const StepResult last = testing::run_step(*dev, alone);

  const testing::ReferenceEncoder ref(*model);
  const size_t embd = spec.embedding_length;
  std::vector<float> mean(r.hidden.begin(), r.hidden.begin() + static_cast<ptrdiff_t>(embd));
  for (float& x : mean) x /= 37.0f;
  const testing::Rows ha = ref.hidden(a), hb = ref.hidden(b);
  EXPECT_LT(testing::relative_error(testing::pool_rows(ha, Pooling::kMean), mean), 1e-4);
  EXPECT_LT(testing::relative_error(testing::pool_rows(hb, Pooling::kCls), std::span(r.hidden).subspan(embd, embd)),
            1e-4);
  EXPECT_LT(testing::relative_error(testing::pool_rows(ha, Pooling::kCls), std::span(last.hidden).first(embd)), 1e-4);

  StepPlan b_alone;
  add_seq(b_alone, b, block_range(12, 2), OutputKind::kHidden);
  const StepResult rb = testing::run_step(*dev, b_alone);
  EXPECT_TRUE(std::equal(rb.hidden.begin(), rb.hidden.begin() + static_cast<ptrdiff_t>(embd),
                         r.hidden.begin() + static_cast<ptrdiff_t>(embd)))
      << "a sequence's state is the same bits beside another";
}

INSTANTIATE_TEST_SUITE_P(Archs, EncoderVsReference, ::testing::Values(Arch::kBert, Arch::kNomicBert),
                         [](const auto& p) { return p.param == Arch::kBert ? "bert" : "nomic_bert"; });

TEST(EncoderDevice, RefusesLogitsAndSequencesThatAreNotWhole) {
  testing::TempDir dir;
  const std::unique_ptr<Model> model = testing::make_and_load(encoder_spec(Arch::kBert), dir);
  ASSERT_NE(model, nullptr);
  const std::unique_ptr<CpuDevice> dev = testing::make_test_device(*model);
  const std::vector<TokenId> t = fixed_prompt(5, 600);
  StepPlan logits;
  add_seq(logits, t, block_range(0, 1), OutputKind::kLogits);
  const Result<Ticket> l = dev->launch(logits);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("without a head"), std::string::npos) << l.status().message();
  StepPlan cont;
  cont.inputs.push_back(FeedToken{t[0]});
  cont.positions.push_back(3);
  cont.seqs.push_back(StepSeq{0, 1, 3, block_range(0, 1), std::nullopt});
  cont.outputs.push_back(OutputRow{0, OutputKind::kHidden});
  const Result<Ticket> c = dev->launch(cont);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("whole in one step"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace met
