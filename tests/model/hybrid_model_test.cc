// Tests for the hybrid recurrent architectures end to end through CpuDevice
// (ForwardPass with GatedDeltaLayer, the gated attention layers, the state
// slots of cpu::RecurrentState): qwen35, qwen35moe and qwen3next made by
// make_random_model, against the double-precision reference forward at every
// position of a fixed prompt, per weight dtype; prefill in one chunk, in
// several and token by token gives the same logits; a sequence's logits do
// not depend on the sequences sharing its steps or the thread count; a seq
// that starts at token 0 starts from a zero state whatever its slot held; a
// verify step's accepted prefix is replayed exactly; the MTP block
// predicts as the reference's does and leaves the trunk's logits alone.
#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "model/cpu_device.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met::hybrid_model_test {
namespace {

constexpr uint32_t kVocab = 600;

RandomModelSpec hybrid_spec(Arch arch, GgmlType dtype) { return testing::hybrid_spec(arch, dtype, kVocab); }

struct HybridCase {
  Arch arch;
  GgmlType dtype;
  double tolerance;   // max |logit error| relative to the largest |logit|
  double min_margin;  // MoE: positions whose reference routing margin is below it are not compared
};

class HybridVsReference : public ::testing::TestWithParam<HybridCase> {};

// 40 tokens: 29 in prefill chunks of 13, 13 and 3 (the chunked form of the
// delta rule, then the recurrent one), then 11 decode steps.
TEST_P(HybridVsReference, LogitsAtEveryPositionAgreeWithinTheDtypesTolerance) {
  const HybridCase p = GetParam();
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(p.arch, p.dtype), dir);
  ASSERT_NE(m, nullptr);
  const auto tokens = testing::fixed_prompt(40, kVocab);
  std::vector<double> margins;
  const auto ref = testing::ReferenceForward(*m).logits(tokens, &margins);
  auto dev = testing::make_test_device(*m);
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->info().fed_ahead_policy, FedAheadPolicy::kRepickOnly);
  EXPECT_EQ(dev->info().num_state_slots, 8);
  EXPECT_EQ(dev->info().num_layers, 1);  // the KV cache holds the attention layer only
  const auto got = testing::logits_at_every_position(*dev, tokens, 29, 13, testing::block_range(0, 4));
  ASSERT_EQ(got.size(), tokens.size());
  const auto [compared, worst] = testing::expect_logits_agree(ref, got, p.tolerance, margins, p.min_margin);
  EXPECT_GE(compared, 20);
  RecordProperty("max_relative_error", std::to_string(worst));
}

// F32 and F16 differ from the reference in float summation order (and the
// chunked delta rule's reassociation, within 2e-5 of its row scale); BF16
// rounds activations; Q8_0 and the k-quants quantize them per block. A gated
// delta head's output is RMS-normed, which cancels its scale: at a token
// whose q·k is near zero (common with random weights) the head contributes
// ±v, and activation rounding can flip the sign. So quantized files are far
// from the double reference for every engine: llama.cpp on a Q8_0 qwen35
// file of this shape is up to 10% of the largest logit from the reference,
// while met and llama.cpp agree there to 2.9e-2 at the worst position and
// 2.4e-7 at the median (bench/peer/crosscheck.sh, F32 KV). The quantized
// cases bound that noise; the F32 and F16 cases hold the math. qwen35moe
// and qwen3next run at F32 and F16 only: a routing near-tie flipped by that noise changes
// the state every later position reads (a per-position routing margin cannot
// see it), and its quantized experts are covered by moe_model_test.cc.
INSTANTIATE_TEST_SUITE_P(
    HybridArchsAndDtypes, HybridVsReference,
    ::testing::ValuesIn([] {
      std::vector<HybridCase> v;
      for (Arch arch : {Arch::kQwen35, Arch::kQwen35Moe, Arch::kQwen3Next}) {
        v.push_back({arch, GgmlType::kF32, 1e-4, 0.0});
        v.push_back({arch, GgmlType::kF16, 1e-4, 0.0});
      }
      v.push_back({Arch::kQwen35, GgmlType::kBF16, 5e-2, 0.0});
      v.push_back({Arch::kQwen35, GgmlType::kQ8_0, 0.25, 0.0});
      v.push_back({Arch::kQwen35, GgmlType::kQ6_K, 0.25, 0.0});
      return v;
    }()),
    [](const auto& param_info) {
      return std::string(arch_name(param_info.param.arch)) + "_" + std::string(ggml_type_name(param_info.param.dtype));
    });

// The state after a prefill does not depend on how it was cut into steps:
// one chunk of 37, chunks of 8 and of 5, and one token per step give the
// same bits (every row runs the recurrent form); with the chunked form for
// prefill they agree to its float rounding, and with the reference.
TEST(HybridModel, OneChunkManyChunksAndTokenByTokenGiveTheSameLogits) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35, GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  testing::expect_prefill_chunkings_agree(*m, {.chunked_delta_rule = true});
}

// Sequence 0 alone on one thread, then sharing each step with a sequence that
// prefills two tokens and one that decodes, each in its own state slot, on
// three threads: its logits are the same bits.
TEST(HybridModel, ARowsLogitsDoNotDependOnTheBatchOrTheThreadCount) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35Moe, GgmlType::kQ8_0), dir);
  ASSERT_NE(m, nullptr);
  const auto tokens = testing::fixed_prompt(16, kVocab);
  auto alone_dev = testing::make_test_device(*m, {.num_threads = 1});
  const auto alone = testing::logits_at_every_position(*alone_dev, tokens, 0, 1, testing::block_range(0, 2));
  auto dev = testing::make_test_device(*m, {.num_threads = 3});
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto pos = static_cast<int32_t>(i);
    StepPlan plan;
    for (int32_t j = 0; j < 2; ++j) {
      plan.inputs.push_back(FeedToken{static_cast<TokenId>((7 * i + j + 100) % kVocab)});
      plan.positions.push_back(2 * pos + j);
    }
    plan.seqs.push_back(StepSeq{0, 2, 2 * pos, testing::block_range(4, 4), StateSlotId(3)});
    plan.inputs.push_back(FeedToken{tokens[i]});
    plan.positions.push_back(pos);
    plan.seqs.push_back(StepSeq{2, 1, pos, testing::block_range(0, 2), StateSlotId(5)});
    plan.inputs.push_back(FeedToken{static_cast<TokenId>((11 * i + 3) % kVocab)});
    plan.positions.push_back(pos);
    plan.seqs.push_back(StepSeq{3, 1, pos, testing::block_range(8, 2), StateSlotId(0)});
    plan.outputs = {OutputRow{1, OutputKind::kLogits}, OutputRow{2, OutputKind::kLogits}};
    const StepResult r = testing::run_step(*dev, plan);
    ASSERT_EQ(r.logits.size(), 2u * kVocab);
    const std::vector<float> mine(r.logits.begin() + kVocab, r.logits.begin() + 2 * kVocab);
    EXPECT_EQ(mine, alone[i]) << "position " << i;
  }
}

// Slot 0 is left holding a finished sequence's state; a new sequence there
// (num_cached 0) gives the logits of a fresh device.
TEST(HybridModel, ASequenceStartingAtTokenZeroStartsFromAZeroState) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35, GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  const auto tokens = testing::fixed_prompt(12, kVocab);
  auto fresh = testing::make_test_device(*m);
  const auto want = testing::logits_at_every_position(*fresh, tokens, 12, 12, testing::block_range(0, 1));
  auto used = testing::make_test_device(*m);
  const auto other = testing::fixed_prompt(30, 97);
  (void)testing::logits_at_every_position(*used, other, 30, 30, testing::block_range(4, 2));
  const auto got = testing::logits_at_every_position(*used, tokens, 12, 12, testing::block_range(0, 1));
  EXPECT_EQ(got, want);
}

TEST(HybridModel, APlanWithoutAStateSlotOrWithASharedOneIsRefused) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35, GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  auto dev = testing::make_test_device(*m);
  StepPlan plan;
  plan.inputs = {FeedToken{1}, FeedToken{2}};
  plan.positions = {0, 0};
  plan.seqs.push_back(StepSeq{0, 1, 0, testing::block_range(0, 1), std::nullopt});
  plan.seqs.push_back(StepSeq{1, 1, 0, testing::block_range(1, 1), StateSlotId(2)});
  plan.outputs = {OutputRow{0, OutputKind::kArgmax}};
  Result<Ticket> t = dev->launch(plan);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("seq 0 has no state slot"), std::string::npos) << t.status().message();
  plan.seqs[0].state_slot = StateSlotId(2);
  t = dev->launch(plan);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("share state slot 2"), std::string::npos) << t.status().message();
  plan.seqs[0].state_slot = StateSlotId(8);
  t = dev->launch(plan);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("outside [0, 8)"), std::string::npos) << t.status().message();
}

TEST(HybridModel, AStepRewoundThroughTheRollbackRingIsExact) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35, GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  testing::expect_rewound_steps_are_exact(*m, kLaneStateRollback);
  auto dev = testing::make_test_device(*m, {.state_rollback = kLaneStateRollback});
  EXPECT_EQ(dev->info().fed_ahead_policy, FedAheadPolicy::kRewindable);
  EXPECT_EQ(dev->info().state_rollback, kLaneStateRollback);
  EXPECT_EQ(testing::make_test_device(*m)->info().fed_ahead_policy, FedAheadPolicy::kRepickOnly);
}

// Speculative decoding's verify step on a gated delta net model.
TEST(HybridModel, AVerifyStepContinuesExactlyFromAnyAcceptedPrefixItReplays) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35, GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  testing::expect_verify_steps_rewind_exactly(*m, 4);
}

struct MtpRun {
  std::vector<std::vector<float>> logits;  // per position
  std::vector<TokenId> argmax, mtp_argmax;
};

// `tokens` in chunks of 5 with an output at every row, on a device with the
// MTP block on or off.
MtpRun run_with_outputs(const Model& m, std::span<const TokenId> tokens, bool mtp) {
  auto dev = testing::make_test_device(m, {.forward = {.mtp = mtp}});
  MtpRun run;
  if (dev == nullptr) return run;
  const auto n = static_cast<int32_t>(tokens.size());
  for (int32_t begin = 0; begin < n; begin += 5) {
    const int32_t rows = std::min(5, n - begin);
    StepPlan plan;
    for (int32_t i = 0; i < rows; ++i) {
      plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(begin + i)]});
      plan.positions.push_back(begin + i);
      plan.outputs.push_back(OutputRow{i, OutputKind::kLogits});
    }
    plan.seqs.push_back(StepSeq{0, rows, begin, testing::block_range(0, 2), StateSlotId(0)});
    const StepResult r = testing::run_step(*dev, plan);
    for (int32_t i = 0; i < rows; ++i) {
      run.logits.emplace_back(r.logits.begin() + i * kVocab, r.logits.begin() + (i + 1) * kVocab);
      run.argmax.push_back(r.argmax[static_cast<size_t>(i)]);
      if (mtp) run.mtp_argmax.push_back(r.mtp_argmax[static_cast<size_t>(i)]);
    }
  }
  return run;
}

// The MTP block (ForwardOptions::mtp): each row's MTP argmax is the
// double-precision reference's, given the row's argmax as the token after
// it (positions where the reference's top two logits are within float
// rounding are not compared); the trunk's logits are the same bits as
// without the block, whose KV is a layer of its own.
TEST(HybridModel, TheMtpBlockPredictsAsTheReferenceAndLeavesTheTrunkAlone) {
  for (const Arch arch : {Arch::kQwen35, Arch::kQwen35Moe}) {
    testing::TempDir dir;
    auto m = testing::make_and_load(hybrid_spec(arch, GgmlType::kF32), dir);
    ASSERT_NE(m, nullptr);
    const auto tokens = testing::fixed_prompt(23, kVocab);
    const MtpRun plain = run_with_outputs(*m, tokens, false);
    const MtpRun mtp = run_with_outputs(*m, tokens, true);
    ASSERT_EQ(mtp.mtp_argmax.size(), tokens.size());
    EXPECT_EQ(mtp.logits, plain.logits) << arch_name(arch);
    const testing::ReferenceForward ref(*m);
    const auto want = ref.mtp_logits(tokens, mtp.argmax);
    int compared = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      std::vector<float> sorted = want[t];
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
      if (sorted[0] - sorted[1] < 1e-4f * std::fabs(sorted[0])) continue;
      ++compared;
      const auto best = static_cast<TokenId>(std::max_element(want[t].begin(), want[t].end()) - want[t].begin());
      EXPECT_EQ(mtp.mtp_argmax[t], best) << arch_name(arch) << " position " << t;
    }
    EXPECT_GE(compared, 20) << arch_name(arch);
  }
}

TEST(HybridModel, AnMtpDeviceNeedsAModelWithAnMtpBlock) {
  testing::TempDir dir;
  RandomModelSpec spec = hybrid_spec(Arch::kQwen35, GgmlType::kF32);
  spec.nextn_predict_layers = 0;
  auto m = testing::make_and_load(spec, dir);
  ASSERT_NE(m, nullptr);
  CpuDeviceOptions o;
  o.num_kv_blocks = 4;
  o.limits = ForwardLimits{.max_rows = 8, .max_outputs = 8, .max_seqs = 2};
  o.forward.mtp = true;
  const auto dev = CpuDevice::create(*m, o);
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("no MTP block"), std::string::npos) << dev.status().message();
}

TEST(HybridModel, StateSlotsReadBackWhatWasWrittenAndRefuseBadSizes) {
  testing::TempDir dir;
  auto m = testing::make_and_load(hybrid_spec(Arch::kQwen35, GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  auto dev = testing::make_test_device(*m);
  const ModelHParams& hp = m->hparams();
  EXPECT_EQ(dev->info().state_slot_bytes, static_cast<int64_t>(hp.recurrent_state_bytes()));
  std::vector<uint8_t> bytes(static_cast<size_t>(dev->info().state_slot_bytes));
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_TRUE(dev->write_state_slot(StateSlotId(4), 37, bytes).ok());
  std::vector<uint8_t> back(bytes.size());
  ASSERT_TRUE(dev->read_state_slot(StateSlotId(4), 37, back).ok());
  EXPECT_EQ(back, bytes);
  const Status elsewhere = dev->read_state_slot(StateSlotId(4), 36, back);
  EXPECT_NE(elsewhere.message().find("no state after 36 tokens"), std::string::npos) << elsewhere.message();
  back.pop_back();
  EXPECT_FALSE(dev->read_state_slot(StateSlotId(4), 37, back).ok());
  EXPECT_FALSE(dev->write_state_slot(StateSlotId(8), 37, bytes).ok());
}

}  // namespace
}  // namespace met::hybrid_model_test
