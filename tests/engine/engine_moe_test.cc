// The engine on made MoE models (qwen3moe, 16 experts of which 4 per token,
// with and without a shared expert, F32 and Q8_0; gpt-oss, its even layer
// windowed, F32 and MXFP4) and hybrid recurrent ones (qwen35, qwen35moe, qwen3next: gated
// delta layers whose state lives in a slot per sequence, swapped with the
// KV blocks; F32 and Q8_0) and Mamba2 hybrids (granitehybrid, nemotron_h:
// Mamba2 layers' conv and scan state in the same slots), greedy: preemption by swap and
// by recompute gives exactly the tokens and logprobs of an uninterrupted run,
// the pipelined lane gives the synchronous tokens, and a request's tokens,
// logprobs and prompt logprobs are the same alone on one thread and in a
// batch of seventeen on three (batch invariance through routing: which rows
// share an expert's matmul, and how large its group is, must not matter),
// and speculative decoding (predicted outputs with edits; recurrent state
// kept after each verify row) gives the plain run's tokens.
// Exact equality throughout: with F32 weights a restore that flips one bit
// of KV, or routing that lets a row's neighbours or the thread count move its
// sums by an ulp, shows (Q8_0's 8-bit activations absorb most such
// differences: its cases cover the packed expert kernels, F32's the bits).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/random_model.h"
#include "model_engine.h"
#include "testing/collected_stream.h"
#include "testing/temp_dir.h"

namespace met::engine_moe_test {
namespace {

using Outcome = testing::CollectedStream;
using testing::ModelEngine;

const char* kPrompts[16] = {
    "Once upon a time",        "The little dog",      "Lily and Ben went to the park",
    "One day, a big bird",     "Tom had a red ball",  "The sun was shining and",
    "Sue liked to play with",  "There was a cat",     "Mom said",
    "A boy named Tim",         "The tree was tall",   "In the garden, the flowers",
    "Bob found a box",         "It was a cold day",   "The fish swam",
    "She wanted to",
};

struct MoeCase {
  uint32_t shared_ff;  // 0: no shared expert
  GgmlType dtype;
  Arch arch = Arch::kQwen3Moe;  // gpt-oss: even layers through a window of 8, sinks, biases
};

// qwen35: 4 layers (3 gated delta, 1 attention), 2 key heads and 4 value
// heads; qwen35moe adds the MoE's experts and its shared expert.
void make_hybrid(RandomModelSpec& s) {
  s.num_layers = 4;
  s.head_dim = 32;
  s.ssm_state_size = 32;
  s.ssm_group_count = 2;
  s.ssm_time_step_rank = 4;
  if (s.arch == Arch::kQwen35) s.num_experts = s.num_experts_used = s.expert_feed_forward_length = 0;
}

// granitehybrid "M*MM" with Granite 4.0-H's multipliers (with a shared
// expert: the MoE's experts and Granite's ungated shared expert, else a dense
// FFN), nemotron_h "M-*M" (Mamba2, relu² MLP, attention): 8 Mamba2 heads of
// 32, 2 groups of d_state 16.
void make_mamba_hybrid(RandomModelSpec& s) {
  s.num_layers = 4;
  s.head_dim = 32;
  s.ssm_state_size = 16;
  s.ssm_group_count = 2;
  s.ssm_time_step_rank = 8;
  s.layer_pattern = s.arch == Arch::kGraniteHybrid ? "M*MM" : "M-*M";
  if (s.shared_expert_feed_forward_length == 0) s.num_experts = s.num_experts_used = s.expert_feed_forward_length = 0;
  if (s.arch != Arch::kGraniteHybrid) return;
  s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 6.0f, s.attention_scale = 1.0f / 32;
}

// The small preset's expert shape (16 experts, 4 used) at a size a sanitizer
// build runs in seconds.
std::string make_moe_model(const testing::TempDir& dir, const MoeCase& c) {
  RandomModelSpec s;
  s.arch = c.arch;
  if (c.arch == Arch::kGptOss) s.sliding_window = 8;
  s.num_layers = 2;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 700;
  s.dtype = c.dtype;
  s.seed = 5;
  s.num_experts = 16;
  s.num_experts_used = 4;
  s.expert_feed_forward_length = 64;
  s.shared_expert_feed_forward_length = c.shared_ff;
  if (arch_is_hybrid(c.arch)) make_hybrid(s);
  if (arch_is_mamba_hybrid(c.arch)) make_mamba_hybrid(s);
  const std::string path = dir.file("moe.gguf");
  const Result<RandomModelSummary> made = make_random_model(s, path);
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  return path;
}

struct Options {
  std::optional<int32_t> logprobs;
  std::optional<int32_t> prompt_logprobs;
  bool one_at_a_time = false;  // each request ends before the next is submitted
  std::vector<std::string> extra_prompts;
  std::vector<std::vector<TokenId>> predictions;  // request i's predicted output, where given
};

// Every prompt (and the extra ones) submitted at once, unless one at a time,
// each run for 48 tokens, EOS ignored so every run is long enough to be
// preempted.
std::vector<Outcome> run_prompts(ModelEngine& m, const Options& o) {
  std::vector<std::string> prompts(std::begin(kPrompts), std::end(kPrompts));
  prompts.insert(prompts.end(), o.extra_prompts.begin(), o.extra_prompts.end());
  std::vector<RequestHandle> handles;
  std::vector<Outcome> out;
  for (const std::string& p : prompts) {
    EngineRequest r;
    r.prompt = m.tokenizer().encode(p, EncodeOptions{.add_special = true});
    r.max_tokens = 48;
    r.ignore_eos = true;
    r.logprobs = o.logprobs;
    r.prompt_logprobs = o.prompt_logprobs;
    if (handles.size() < o.predictions.size()) r.prediction = o.predictions[handles.size()];
    Result<RequestHandle> h = m.engine().submit(std::move(r));
    EXPECT_TRUE(h.ok()) << h.status().to_string();
    handles.push_back(std::move(*h));
    if (o.one_at_a_time) out.push_back(testing::collect_stream(handles.back()));
  }
  for (size_t i = out.size(); i < handles.size(); ++i) out.push_back(testing::collect_stream(handles[i]));
  m.engine().drain();
  EXPECT_EQ(m.engine().kv_blocks_in_use(), 0);
  EXPECT_EQ(m.engine().stats().state_slots_in_use, 0);
  return out;
}

// "" when a and b are bit-for-bit the same logprobs, else the first difference.
std::string logprob_difference(const std::vector<TokenLogprob>& a, const std::vector<TokenLogprob>& b) {
  if (a.size() != b.size()) return "lengths " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    bool same = a[i].token == b[i].token && a[i].logprob == b[i].logprob && a[i].rank == b[i].rank &&
                a[i].top.size() == b[i].top.size();
    for (size_t j = 0; same && j < a[i].top.size(); ++j) {
      same = a[i].top[j].token == b[i].top[j].token && a[i].top[j].logprob == b[i].top[j].logprob;
    }
    if (!same) {
      return "position " + std::to_string(i) + ": " + std::to_string(a[i].logprob) + " vs " +
             std::to_string(b[i].logprob);
    }
  }
  return "";
}

void expect_same_outcomes(const std::vector<Outcome>& want, const std::vector<Outcome>& got, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(want[i].finish.has_value()) << what << " request " << i;
    ASSERT_TRUE(got[i].finish.has_value()) << what << " request " << i << ": " << got[i].error.value_or("");
    EXPECT_EQ(got[i].tokens, want[i].tokens) << what << " request " << i;
    EXPECT_EQ(got[i].text, want[i].text) << what << " request " << i;
    EXPECT_EQ(got[i].finish->finish_reason, want[i].finish->finish_reason) << what << " request " << i;
    EXPECT_EQ(logprob_difference(want[i].logprobs, got[i].logprobs), "") << what << " request " << i;
    EXPECT_EQ(logprob_difference(want[i].prompt_logprobs, got[i].prompt_logprobs), "") << what << " request " << i;
  }
}

class EngineOnMoe : public ::testing::TestWithParam<MoeCase> {};

TEST_P(EngineOnMoe, SixteenPromptsGiveTheSameTokensAndLogprobsThroughABigASwappingAndARecomputingPool) {
  testing::TempDir dir;
  const std::string path = make_moe_model(dir, GetParam());
  Options o;
  o.logprobs = 3;
  ModelEngine big(path, 512, 16, std::nullopt);
  const std::vector<Outcome> want = run_prompts(big, o);
  EXPECT_EQ(big.engine().stats().preemptions_swap + big.engine().stats().preemptions_recompute, 0);
  ASSERT_EQ(want[0].logprobs.size(), 48u);

  testing::TempDir spill;
  ModelEngine swap(path, 14, 16, spill.path());
  const std::vector<Outcome> swapped = run_prompts(swap, o);
  EXPECT_GT(swap.engine().stats().preemptions_swap, 0);
  EXPECT_TRUE(std::filesystem::is_empty(spill.path()));
  expect_same_outcomes(want, swapped, "swapping pool");

  ModelEngine recompute(path, 14, 16, std::nullopt);
  const std::vector<Outcome> recomputed = run_prompts(recompute, o);
  EXPECT_GT(recompute.engine().stats().preemptions_recompute, 0);
  expect_same_outcomes(want, recomputed, "recomputing pool");
}

TEST_P(EngineOnMoe, ThePipelinedLaneGivesTheSynchronousTokensInABigAndATightPool) {
  testing::TempDir dir;
  const std::string path = make_moe_model(dir, GetParam());
  for (int32_t blocks : {512, 14}) {
    ModelEngine off(path, blocks, 16, std::nullopt, /*pipeline=*/false);
    const std::vector<Outcome> want = run_prompts(off, {});
    // Hybrids: RepickOnly without a rollback ring, kRewindable with one.
    for (int32_t rollback : {0, kLaneStateRollback}) {
      ModelEngine on(path, blocks, 16, std::nullopt, /*pipeline=*/true, /*num_threads=*/1, rollback);
      const std::vector<Outcome> got = run_prompts(on, {});
      expect_same_outcomes(want, got, fmt::format("{} blocks, rollback {}", blocks, rollback));
    }
  }
}

// Alone: one request at a time on one thread. In a batch: seventeen on
// three threads, the long prompt's prefill chunks cut otherwise and sharing
// steps with the others' rows, experts' groups of dozens of rows.
TEST_P(EngineOnMoe, ARequestsLogitsAreTheSameAloneOnOneThreadAndInABatchOnThree) {
  testing::TempDir dir;
  const std::string path = make_moe_model(dir, GetParam());
  std::string long_prompt;
  for (int i = 0; i < 8; ++i) long_prompt += "The sun was shining and Lily went to the park with her dog. ";
  Options o;
  o.logprobs = 5;
  o.prompt_logprobs = 5;
  o.one_at_a_time = true;
  o.extra_prompts = {long_prompt};
  std::vector<Outcome> alone;
  {
    ModelEngine m(path, 512, 17, std::nullopt, /*pipeline=*/true, /*num_threads=*/1);
    alone = run_prompts(m, o);
  }
  o.one_at_a_time = false;
  ModelEngine batch(path, 512, 17, std::nullopt, /*pipeline=*/true, /*num_threads=*/3);
  const std::vector<Outcome> together = run_prompts(batch, o);
  EXPECT_GT(together.back().prompt_logprobs.size(), 100u);
  expect_same_outcomes(alone, together, "batch of 17 on 3 threads");
}

// Speculative decoding on every architecture, with recurrent state too (a
// verify step keeps the state after each row and the next step runs from the
// accepted prefix's): each request predicts the plain run's output with two
// tokens changed, so drafts are accepted, rejected and picked up again; the
// tokens are the plain run's, in a big pool and in a tight one that swaps.
TEST_P(EngineOnMoe, PredictedOutputsWithEditsGiveTheTokensWithoutThem) {
  testing::TempDir dir;
  const std::string path = make_moe_model(dir, GetParam());
  ModelEngine plain(path, 512, 16, std::nullopt);
  const std::vector<Outcome> want = run_prompts(plain, {});
  Options o;
  for (const Outcome& w : want) {
    std::vector<TokenId> p = w.tokens;
    p[p.size() / 3] = p[p.size() / 3] == 9 ? 10 : 9;
    p[2 * p.size() / 3] = p[2 * p.size() / 3] == 9 ? 10 : 9;
    o.predictions.push_back(std::move(p));
  }
  testing::TempDir spill;
  SpecOptions every;  // every proposal verified: the drafts at the edits are, whatever the draft budget says
  every.adaptive = false;
  for (const int32_t blocks : {512, 14}) {
    ModelEngine spec(path, blocks, 16, blocks == 14 ? std::optional(spill.path()) : std::nullopt, /*pipeline=*/true,
                     /*num_threads=*/1, /*state_rollback=*/0, every);
    const std::vector<Outcome> got = run_prompts(spec, o);
    expect_same_outcomes(want, got, fmt::format("predicted, {} blocks", blocks));
    int64_t accepted = 0, rejected = 0;
    for (const Outcome& g : got) {
      if (!g.finish.has_value()) continue;
      accepted += g.finish->usage.accepted_prediction_tokens;
      rejected += g.finish->usage.rejected_prediction_tokens;
    }
    EXPECT_GT(accepted, 16 * 30) << blocks << " blocks";
    EXPECT_GT(rejected, 0) << blocks << " blocks";
  }
}

// Drafting with the model's own MTP block (qwen35, qwen35moe; the block a
// copy of the last attention layer over layers scaled down, so its drafts
// are mostly the trunk's next token): the tokens are the plain run's,
// pipelined or not, in a big pool and in a tight one that swaps; drafts are
// accepted and rejected.
TEST(EngineMtp, MtpDraftsGiveTheTokensWithoutThem) {
  for (const Arch arch : {Arch::kQwen35, Arch::kQwen35Moe}) {
    testing::TempDir dir;
    RandomModelSpec s;
    s.arch = arch;
    s.embedding_length = 128;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.feed_forward_length = 256;
    s.vocab_size = 700;
    s.seed = 5;
    if (arch == Arch::kQwen35Moe) {
      s.num_experts = 16;
      s.num_experts_used = 4;
      s.expert_feed_forward_length = 64;
      s.shared_expert_feed_forward_length = 96;
    }
    make_hybrid(s);
    s.nextn_predict_layers = 1;
    s.mtp_copies_last_layer = true;
    s.branch_scale = 0.01f;
    const std::string path = dir.file("mtp.gguf");
    const Result<RandomModelSummary> made = make_random_model(s, path);
    ASSERT_TRUE(made.ok()) << made.status().message();
    ModelEngine plain(path, 512, 16, std::nullopt);
    const std::vector<Outcome> want = run_prompts(plain, {});
    SpecOptions spec;
    spec.mtp = true;
    testing::TempDir spill;
    for (const bool pipeline : {true, false}) {
      for (const int32_t blocks : {512, 14}) {
        ModelEngine mtp(path, blocks, 16, blocks == 14 ? std::optional(spill.path()) : std::nullopt, pipeline, 1, 0,
                        spec);
        const std::vector<Outcome> got = run_prompts(mtp, {});
        const std::string what = fmt::format("{} pipeline {} blocks {}", arch_name(arch), pipeline, blocks);
        expect_same_outcomes(want, got, what);
        const EngineStatsSnapshot st = mtp.engine().stats();
        EXPECT_GT(st.spec_accepted, 0) << what;
        EXPECT_LT(st.spec_accepted, st.spec_drafted) << what;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(MoeModels, EngineOnMoe,
                         ::testing::Values(MoeCase{0, GgmlType::kF32}, MoeCase{96, GgmlType::kF32},
                                           MoeCase{96, GgmlType::kQ8_0}, MoeCase{0, GgmlType::kF32, Arch::kGptOss},
                                           MoeCase{0, GgmlType::kMXFP4, Arch::kGptOss},
                                           MoeCase{0, GgmlType::kF32, Arch::kQwen35},
                                           MoeCase{0, GgmlType::kQ8_0, Arch::kQwen35},
                                           MoeCase{96, GgmlType::kF32, Arch::kQwen35Moe},
                                           MoeCase{96, GgmlType::kF32, Arch::kQwen3Next},
                                           MoeCase{0, GgmlType::kF32, Arch::kGraniteHybrid},
                                           MoeCase{0, GgmlType::kQ8_0, Arch::kGraniteHybrid},
                                           MoeCase{96, GgmlType::kF32, Arch::kGraniteHybrid},
                                           MoeCase{0, GgmlType::kF32, Arch::kNemotronH}),
                         [](const auto& param_info) {
                           const MoeCase& c = param_info.param;
                           if (c.arch == Arch::kGptOss) return "GptOss_" + std::string(ggml_type_name(c.dtype));
                           if (arch_is_hybrid(c.arch) || arch_is_mamba_hybrid(c.arch)) {
                             const bool shared = arch_is_mamba_hybrid(c.arch) && c.shared_ff > 0;
                             return std::string(arch_name(c.arch)) + (shared ? "_moe_" : "_") +
                                    std::string(ggml_type_name(c.dtype));
                           }
                           return std::string(c.shared_ff > 0 ? "SharedExpert_" : "RoutedOnly_") +
                                  std::string(ggml_type_name(c.dtype));
                         });

}  // namespace
}  // namespace met::engine_moe_test
