// Tests for chained MTP drafts through CpuDevice (StepSeq::mtp_chain,
// ForwardOptions::mtp_chain): each chaining seq's tokens are the
// double-precision reference's block fed its own guesses, whether its chain
// starts mid-block, at a block's start or runs into the next block; a
// seq that does not chain gets none; chaining leaves the cache's blocks as
// they were (the next step's logits equal a device's that never chained);
// plans that chain too far, too many seqs, from a row without an output or
// in a step without guesses are refused; a step without guesses keeps the
// block's KV; a dense model's MTP block (met's test models) and its chain
// are the reference's too.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "model/cpu_device.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met::mtp_chain_test {
namespace {

constexpr uint32_t kVocab = 600;
constexpr int32_t kChain = 3;

// Prompts whose chains start at position 15 (mid-block, running into the
// next), 32 (a block's start) and 23; the second seq does not chain.
const int32_t kLengths[] = {15, 32, 23};
const int32_t kChains[] = {kChain, 0, 2};

struct Seqs {
  std::vector<std::vector<TokenId>> tokens;
  StepPlan plan;
};

// One prefill step of the three prompts, each seq in blocks of its own and
// with its last row an output.
Seqs prefill_plan() {
  Seqs s;
  int32_t row = 0;
  for (int32_t i = 0; i < 3; ++i) {
    std::vector<TokenId> t = testing::fixed_prompt(static_cast<size_t>(kLengths[i]) + 7, kVocab);
    t.erase(t.begin(), t.begin() + 7 * i);  // distinct prompts
    t.resize(static_cast<size_t>(kLengths[i]));
    for (int32_t k = 0; k < kLengths[i]; ++k) {
      s.plan.inputs.push_back(FeedToken{t[static_cast<size_t>(k)]});
      s.plan.positions.push_back(k);
    }
    StepSeq seq{row, kLengths[i], 0, testing::block_range(4 * i, 4), StateSlotId(i)};
    seq.mtp_chain = kChains[i];
    s.plan.seqs.push_back(seq);
    s.plan.outputs.push_back(OutputRow{row + kLengths[i] - 1, OutputKind::kLogits});
    row += kLengths[i];
    s.tokens.push_back(std::move(t));
  }
  return s;
}

testing::TestDeviceOptions chain_device(int32_t chain) {
  testing::TestDeviceOptions o;
  o.forward.mtp = true;
  o.forward.mtp_chain = chain;
  o.forward.mtp_chain_seqs = 2;
  o.limits.max_rows = 96;
  return o;
}

// Whether the reference's top two logits are further apart than float rounding.
bool clear_winner(std::vector<float> logits) {
  std::partial_sort(logits.begin(), logits.begin() + 2, logits.end(), std::greater<>());
  return logits[0] - logits[1] >= 1e-4f * std::fabs(logits[0]);
}

TokenId argmax(const std::vector<float>& logits) {
  return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

TEST(MtpChain, EachSeqsChainIsTheReferenceBlockFedItsOwnGuesses) {
  for (const Arch arch : {Arch::kQwen35, Arch::kQwen35Moe}) {
    testing::TempDir dir;
    auto m = testing::make_and_load(testing::hybrid_spec(arch, GgmlType::kF32, kVocab), dir);
    ASSERT_NE(m, nullptr);
    auto dev = testing::make_test_device(*m, chain_device(kChain));
    ASSERT_NE(dev, nullptr);
    EXPECT_EQ(dev->info().mtp_drafts, kChain + 1);
    EXPECT_EQ(dev->info().num_kv_blocks, 16) << "the scratch blocks are the device's own";
    const Seqs s = prefill_plan();
    const StepResult r = testing::run_step(*dev, s.plan);
    ASSERT_EQ(r.mtp_chain_width, kChain);
    const testing::ReferenceForward ref(*m);
    int compared = 0;
    for (size_t i = 0; i < 3; ++i) {
      const TokenId* chain = &r.mtp_chain[i * kChain];
      for (int32_t j = kChains[i]; j < kChain; ++j) EXPECT_EQ(chain[j], kNoChainToken) << "seq " << i;
      if (kChains[i] == 0) continue;
      std::vector<TokenId> next(s.tokens[i].begin() + 1, s.tokens[i].end());
      next.push_back(r.argmax[i]);
      // The reference is fed met's own guesses, so one near tie does not
      // change what every later step is compared against.
      std::vector<TokenId> fed{r.mtp_argmax[i]};
      fed.insert(fed.end(), chain, chain + kChains[i] - 1);
      const auto want = ref.mtp_chain_logits(s.tokens[i], next, fed);
      for (int32_t j = 0; j < kChains[i]; ++j) {
        if (!clear_winner(want[static_cast<size_t>(j)])) continue;
        ++compared;
        EXPECT_EQ(chain[j], argmax(want[static_cast<size_t>(j)])) << arch_name(arch) << " seq " << i << " step " << j;
      }
    }
    EXPECT_GE(compared, 4) << arch_name(arch);
  }
}

// The chain's keys go to scratch blocks: a step after it reads the cache as
// a device that never chained left it.
TEST(MtpChain, ChainingLeavesTheCachesBlocksAsTheyWere) {
  testing::TempDir dir;
  auto m = testing::make_and_load(testing::hybrid_spec(Arch::kQwen35, GgmlType::kF32, kVocab), dir);
  ASSERT_NE(m, nullptr);
  auto chained = testing::make_test_device(*m, chain_device(kChain));
  auto plain = testing::make_test_device(*m, chain_device(0));
  ASSERT_NE(chained, nullptr);
  ASSERT_NE(plain, nullptr);
  Seqs s = prefill_plan();
  const StepResult a0 = testing::run_step(*chained, s.plan);
  for (StepSeq& seq : s.plan.seqs) seq.mtp_chain = 0;
  const StepResult b0 = testing::run_step(*plain, s.plan);
  EXPECT_EQ(a0.logits, b0.logits);
  EXPECT_EQ(a0.mtp_argmax, b0.mtp_argmax);
  // Each seq decodes its argmax, then a draft: two rows with outputs.
  StepPlan next;
  for (size_t i = 0; i < 3; ++i) {
    const auto row = static_cast<int32_t>(2 * i);
    next.inputs.push_back(FeedToken{a0.argmax[i]});
    next.inputs.push_back(FeedToken{a0.mtp_argmax[i]});
    next.positions.push_back(kLengths[i]);
    next.positions.push_back(kLengths[i] + 1);
    next.seqs.push_back(StepSeq{row, 2, kLengths[i], testing::block_range(4 * static_cast<int32_t>(i), 4),
                                StateSlotId(static_cast<int32_t>(i))});
    next.outputs.push_back(OutputRow{row, OutputKind::kLogits});
    next.outputs.push_back(OutputRow{row + 1, OutputKind::kLogits});
  }
  const StepResult a1 = testing::run_step(*chained, next);
  const StepResult b1 = testing::run_step(*plain, next);
  EXPECT_EQ(a1.logits, b1.logits);
  EXPECT_EQ(a1.mtp_argmax, b1.mtp_argmax);
}

// A step without guesses (StepPlan::mtp_guesses false, speculation backed
// off) gives the trunk's logits and no mtp_argmax, but still writes the
// block's keys and values at its rows, bit for bit those of a step with
// guesses (every layer of every block the step wrote equal), so the next
// step's guesses equal a device's that computed them throughout. A seq may
// not chain in such a step.
TEST(MtpChain, AStepWithoutGuessesKeepsTheBlocksKv) {
  testing::TempDir dir;
  auto m = testing::make_and_load(testing::hybrid_spec(Arch::kQwen35, GgmlType::kF32, kVocab), dir);
  ASSERT_NE(m, nullptr);
  auto skipping = testing::make_test_device(*m, chain_device(0));
  auto always = testing::make_test_device(*m, chain_device(0));
  Seqs s = prefill_plan();
  for (StepSeq& seq : s.plan.seqs) seq.mtp_chain = 0;
  s.plan.mtp_guesses = false;
  const StepResult a0 = testing::run_step(*skipping, s.plan);
  s.plan.mtp_guesses = true;
  const StepResult b0 = testing::run_step(*always, s.plan);
  EXPECT_EQ(a0.logits, b0.logits);
  EXPECT_TRUE(a0.mtp_argmax.empty());
  ASSERT_EQ(b0.mtp_argmax.size(), 3u);
  std::vector<uint8_t> kv_a(static_cast<size_t>(skipping->info().kv_block_bytes));
  std::vector<uint8_t> kv_b(kv_a.size());
  const int32_t block_tokens = skipping->info().kv_block_tokens;
  for (const StepSeq& seq : s.plan.seqs) {
    for (int32_t b = 0; b * block_tokens < seq.num_rows; ++b) {
      const BlockId block = seq.block_table[static_cast<size_t>(b)];
      ASSERT_TRUE(skipping->read_kv_block(block, kv_a).ok());
      ASSERT_TRUE(always->read_kv_block(block, kv_b).ok());
      EXPECT_TRUE(kv_a == kv_b) << "block " << block.value();
    }
  }
  StepPlan next;
  for (size_t i = 0; i < 3; ++i) {
    next.inputs.push_back(FeedToken{b0.argmax[i]});
    next.positions.push_back(kLengths[i]);
    next.seqs.push_back(StepSeq{static_cast<int32_t>(i), 1, kLengths[i],
                                testing::block_range(4 * static_cast<int32_t>(i), 4),
                                StateSlotId(static_cast<int32_t>(i))});
    next.outputs.push_back(OutputRow{static_cast<int32_t>(i), OutputKind::kLogits});
  }
  const StepResult a1 = testing::run_step(*skipping, next);
  const StepResult b1 = testing::run_step(*always, next);
  EXPECT_EQ(a1.logits, b1.logits);
  EXPECT_EQ(a1.mtp_argmax, b1.mtp_argmax);
  next.mtp_guesses = false;
  next.seqs[0].mtp_chain = 1;
  auto chaining = testing::make_test_device(*m, chain_device(kChain));
  Result<Ticket> refused = chaining->launch(next);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("without guesses"), std::string::npos) << refused.status().message();
}

TEST(MtpChain, PlansThatChainBeyondTheDeviceAreRefused) {
  testing::TempDir dir;
  auto m = testing::make_and_load(testing::hybrid_spec(Arch::kQwen35, GgmlType::kF32, kVocab), dir);
  ASSERT_NE(m, nullptr);
  auto dev = testing::make_test_device(*m, chain_device(kChain));
  ASSERT_NE(dev, nullptr);
  const auto refused = [&](const StepPlan& plan, const char* what) {
    const Result<Ticket> t = dev->launch(plan);
    ASSERT_FALSE(t.ok()) << what;
    EXPECT_NE(t.status().message().find(what), std::string::npos) << t.status().message();
  };
  Seqs s = prefill_plan();
  s.plan.seqs[0].mtp_chain = kChain + 1;
  refused(s.plan, "the device chains 0 to 3");
  s = prefill_plan();
  s.plan.seqs[1].mtp_chain = 1;  // a third chaining seq; the device chains two
  refused(s.plan, "at most 2 a step");
  s = prefill_plan();
  s.plan.outputs[0].row -= 1;
  refused(s.plan, "not an output");
}

// A dense transformer's MTP block (met's test models: llama.cpp reads
// nextn for the qwen35 family only): make-model writes one after the trunk,
// and its guess at every position and its chain are the reference's.
TEST(MtpChain, ADenseModelsMtpBlockAndItsChainAreTheReferences) {
  for (const Arch arch : {Arch::kLlama, Arch::kQwen3}) {
    RandomModelSpec spec;
    spec.arch = arch;
    spec.num_layers = 2;
    spec.embedding_length = 128;
    spec.num_heads = 4;
    spec.num_kv_heads = 2;
    spec.feed_forward_length = 256;
    spec.vocab_size = kVocab;
    spec.context_length = 512;
    spec.nextn_predict_layers = 1;
    spec.dtype = GgmlType::kF32;
    spec.seed = 23;
    testing::TempDir dir;
    auto m = testing::make_and_load(spec, dir);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->weights().mtp.size(), 1u);
    auto dev = testing::make_test_device(*m, chain_device(kChain));
    ASSERT_NE(dev, nullptr);
    const auto tokens = testing::fixed_prompt(30, kVocab);
    StepPlan plan;
    for (int32_t k = 0; k < 30; ++k) {
      plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(k)]});
      plan.positions.push_back(k);
      plan.outputs.push_back(OutputRow{k, OutputKind::kArgmax});
    }
    StepSeq seq{0, 30, 0, testing::block_range(0, 2), std::nullopt};
    seq.mtp_chain = kChain;
    plan.seqs.push_back(seq);
    const StepResult r = testing::run_step(*dev, plan);
    const testing::ReferenceForward ref(*m);
    const auto want = ref.mtp_logits(tokens, r.argmax);
    int compared = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      if (!clear_winner(want[t])) continue;
      ++compared;
      EXPECT_EQ(r.mtp_argmax[t], argmax(want[t])) << arch_name(arch) << " position " << t;
    }
    EXPECT_GE(compared, 25) << arch_name(arch);
    const TokenId* chain = &r.mtp_chain[29 * kChain];
    std::vector<TokenId> fed{r.mtp_argmax[29]};
    fed.insert(fed.end(), chain, chain + kChain - 1);
    const auto chained = ref.mtp_chain_logits(tokens, r.argmax, fed);
    for (int32_t j = 0; j < kChain; ++j) {
      if (clear_winner(chained[static_cast<size_t>(j)])) {
        EXPECT_EQ(chain[j], argmax(chained[static_cast<size_t>(j)])) << arch_name(arch) << " step " << j;
      }
    }
  }
}

}  // namespace
}  // namespace met::mtp_chain_test
