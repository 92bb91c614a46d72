// Tests for engine/cpu_engine.h: the default KV pool's size, how a KV
// budget is split between blocks and a hybrid model's state snapshots, an
// engine opened over a random-weight model from plain values, and a hybrid
// recurrent model's prefix cache (state snapshots) through the real config.
#include "engine/cpu_engine.h"

#include <gtest/gtest.h>

#include <string>

#include "model/random_model.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

TEST(DefaultKvBlocks, FitsMaxSeqsSequencesOfTheContextUpTo4096Tokens) {
  EXPECT_EQ(default_kv_blocks(4, 2048, 1024), 4 * 2048 / 16);
  EXPECT_EQ(default_kv_blocks(4, 100000, 1024), 4 * 4096 / 16);
  EXPECT_EQ(default_kv_blocks(4, 0, 1024), 4 * 4096 / 16);   // unknown context
  EXPECT_EQ(default_kv_blocks(1, 20, 1024), 2);              // a partial block rounds up
}

TEST(DefaultKvBlocks, IsCappedAtTwoGiB) {
  const int64_t block_bytes = int64_t{1} << 20;  // 1 MiB blocks: 2 GiB holds 2048
  EXPECT_EQ(default_kv_blocks(64, 4096, block_bytes), 2048);
  EXPECT_EQ(default_kv_blocks(1, 16, int64_t{4} << 30), 1);  // never below one block
}

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(SplitKvBudget, AModelWithoutRecurrentStateSpendsItAllOnBlocks) {
  CpuEngineConfig c;
  c.kv_mem_bytes = 10 * kMiB;
  const Result<PoolSplit> s = split_kv_budget(c, 4096, kMiB, 0);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->blocks, 10);
  EXPECT_EQ(s->snapshots, 0);
}

// 100 MiB, 10 MiB of state a sequence: by default at most a quarter (2
// snapshots) of it; asked for 5, half; the rest is blocks.
TEST(SplitKvBudget, StateSnapshotsComeOutOfTheKvMemBudget) {
  CpuEngineConfig c;
  c.kv_mem_bytes = 100 * kMiB;
  const Result<PoolSplit> quarter = split_kv_budget(c, 4096, kMiB, 10 * kMiB);
  ASSERT_TRUE(quarter.ok()) << quarter.status().message();
  EXPECT_EQ(quarter->snapshots, 2);
  EXPECT_EQ(quarter->blocks, 80);
  c.state_snapshots = 5;
  const Result<PoolSplit> asked = split_kv_budget(c, 4096, kMiB, 10 * kMiB);
  ASSERT_TRUE(asked.ok());
  EXPECT_EQ(asked->snapshots, 5);
  EXPECT_EQ(asked->blocks, 50);
  c.state_snapshots = 0;
  EXPECT_EQ(split_kv_budget(c, 4096, kMiB, 10 * kMiB)->blocks, 100);
  c.state_snapshots = -1;
  c.max_seqs = 1;  // never more snapshots than max_seqs
  EXPECT_EQ(split_kv_budget(c, 4096, kMiB, 10 * kMiB)->snapshots, 1);
}

TEST(SplitKvBudget, TheDefaultPoolsBytesAreSplitTheSameWay) {
  CpuEngineConfig c;
  c.max_seqs = 4;
  const int64_t bytes = default_kv_blocks(4, 4096, kMiB) * kMiB;  // 1,024 blocks
  const Result<PoolSplit> s = split_kv_budget(c, 4096, kMiB, 64 * kMiB);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->snapshots, 4);
  EXPECT_EQ(int64_t{s->blocks} * kMiB + 4 * 64 * kMiB, bytes);
}

TEST(SplitKvBudget, KvBlocksSizeTheBlocksAloneWithTheSnapshotsBeside) {
  CpuEngineConfig c;
  c.kv_blocks = 7;
  c.max_seqs = 3;
  const Result<PoolSplit> s = split_kv_budget(c, 4096, kMiB, 64 * kMiB);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->blocks, 7);
  EXPECT_EQ(s->snapshots, 3);
}

TEST(SplitKvBudget, SnapshotsThatLeaveNoRoomForABlockAreRefusedNamingTheFlags) {
  CpuEngineConfig c;
  c.kv_mem_bytes = 100 * kMiB;
  c.pool_source = "--kv-mem 100M";
  c.state_snapshots = 10;
  const Result<PoolSplit> s = split_kv_budget(c, 4096, kMiB, 10 * kMiB);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--kv-mem 100M"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("--state-snapshots"), std::string::npos) << s.status().message();
}

// A one-layer random model in `dir`.
std::string small_model(const testing::TempDir& dir) {
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  const std::string path = dir.file("m.gguf");
  EXPECT_TRUE(make_random_model(s, path).ok());
  return path;
}

TEST(CpuEngine, OpensAModelWithThePoolItWasGivenAndServesARequest) {
  testing::TempDir dir;
  CpuEngineConfig c;
  c.kv_blocks = 7;
  c.max_seqs = 2;
  c.max_batch_tokens = 64;
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(small_model(dir), c);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)->engine().limits().num_kv_blocks, 7);
  EXPECT_GT((*e)->context_length(), 0);
  EngineRequest r;
  r.prompt = (*e)->tokenizer().encode("hello", EncodeOptions{.add_special = true});
  r.max_tokens = 3;
  r.ignore_eos = true;
  Result<RequestHandle> h = (*e)->engine().submit(std::move(r));
  ASSERT_TRUE(h.ok()) << h.status().message();
  StreamEvent ev;
  int tokens = 0;
  while (h->next(ev)) {
    if (const auto* d = std::get_if<DeltaEvent>(&ev)) tokens += static_cast<int>(d->tokens.size());
    if (const auto* f = std::get_if<FinishEvent>(&ev)) {
      EXPECT_EQ(f->finish_reason, "length");
    }
  }
  EXPECT_EQ(tokens, 3);
}

// With --spec-mtp the MTP block keeps KV too: --kv-mem's pool counts its
// layer, so the blocks fit the budget.
TEST(CpuEngine, AKvMemPoolCountsTheMtpBlocksLayer) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kQwen35);
  s.num_layers = 4;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 512;
  const std::string path = dir.file("mtp.gguf");
  ASSERT_TRUE(make_random_model(s, path).ok());
  const int64_t budget = int64_t{4} << 20;
  int32_t plain_blocks = 0;
  for (const bool mtp : {false, true}) {
    CpuEngineConfig c;
    c.kv_mem_bytes = budget;
    c.max_seqs = 2;
    c.max_batch_tokens = 64;
    c.spec_mtp = mtp;
    Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(path, c);
    ASSERT_TRUE(e.ok()) << e.status().message();
    const int32_t blocks = (*e)->engine().limits().num_kv_blocks;
    if (!mtp) {
      plain_blocks = blocks;
      continue;
    }
    // qwen35 tiny here: one attention layer in four, so the MTP layer doubles a block.
    EXPECT_EQ(blocks, plain_blocks / 2) << plain_blocks;
  }
}

TEST(CpuEngine, APoolTooSmallForOneBlockIsRefusedNamingWhatSizedIt) {
  testing::TempDir dir;
  CpuEngineConfig c;
  c.kv_mem_bytes = 100;
  c.pool_source = "--kv-mem 100";
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(small_model(dir), c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--kv-mem 100 holds no KV block"), std::string::npos) << e.status().message();
}

// A tiny qwen35 (3 gated delta layers, 1 attention layer), or granitehybrid
// (3 Mamba2 layers, 1 attention layer, Granite 4.0-H's multipliers).
std::string hybrid_model(const testing::TempDir& dir, Arch arch = Arch::kQwen35) {
  RandomModelSpec s;
  s.arch = arch;
  s.num_layers = 4;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 32;
  s.feed_forward_length = 256;
  s.vocab_size = 512;
  s.ssm_state_size = 32;
  s.ssm_group_count = 2;
  s.ssm_time_step_rank = 4;
  if (arch == Arch::kGraniteHybrid) {
    s.ssm_state_size = 16, s.ssm_time_step_rank = 8, s.layer_pattern = "MM*M";
    s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 6.0f, s.attention_scale = 1.0f / 32;
  }
  const std::string path = dir.file("hybrid.gguf");
  EXPECT_TRUE(make_random_model(s, path).ok());
  return path;
}

struct Served {
  std::vector<TokenId> tokens;
  int32_t cached_prompt_tokens = -1;
};

Served serve(CpuEngine& e, const std::vector<TokenId>& prompt) {
  EngineRequest r;
  r.prompt = prompt;
  r.max_tokens = 16;
  r.ignore_eos = true;
  Result<RequestHandle> h = e.engine().submit(std::move(r));
  EXPECT_TRUE(h.ok()) << h.status().message();
  Served out;
  StreamEvent ev;
  while (h.ok() && h->next(ev)) {
    if (const auto* d = std::get_if<DeltaEvent>(&ev)) {
      out.tokens.insert(out.tokens.end(), d->tokens.begin(), d->tokens.end());
    }
    if (const auto* f = std::get_if<FinishEvent>(&ev)) out.cached_prompt_tokens = f->usage.cached_prompt_tokens;
  }
  return out;
}

// A 1,000-token prompt served twice, a snapshot every 4 blocks: the repeat
// resumes from the snapshot after 992 tokens (its last block before the
// end; the interval's are every 64) and gives the cold run's tokens. The
// next turn of that conversation (prompt, the 16 tokens out, 30 more)
// resumes after 1,008: the block boundary the output crossed (a decode
// snapshot every quarter interval: every block here), snapshot by a decode
// step launched ahead of its input (the lane is on). With --state-snapshots
// 0 nothing is reused and the tokens are the same.
class CpuEngineHybrid : public ::testing::TestWithParam<Arch> {};

TEST_P(CpuEngineHybrid, ARepeatedPromptResumesFromAStateSnapshotWithTheColdTokens) {
  testing::TempDir dir;
  const std::string path = hybrid_model(dir, GetParam());
  std::vector<TokenId> prompt;
  for (int i = 0; i < 1000; ++i) prompt.push_back(static_cast<TokenId>((i * 131 + 17) % 500));
  CpuEngineConfig c;
  c.max_seqs = 4;
  c.kv_blocks = 256;
  c.max_batch_tokens = 256;
  c.state_snapshot_blocks = 4;
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(path, c);
  ASSERT_TRUE(e.ok()) << e.status().message();
  const Served cold = serve(**e, prompt);
  const Served warm = serve(**e, prompt);
  EXPECT_EQ(cold.cached_prompt_tokens, 0);
  EXPECT_EQ(warm.cached_prompt_tokens, 992);
  ASSERT_EQ(cold.tokens.size(), 16u);
  EXPECT_EQ(warm.tokens, cold.tokens);
  std::vector<TokenId> next_turn = prompt;
  next_turn.insert(next_turn.end(), cold.tokens.begin(), cold.tokens.end());
  for (int i = 0; i < 30; ++i) next_turn.push_back(static_cast<TokenId>((i * 37 + 5) % 500));
  const Served resumed = serve(**e, next_turn);
  EXPECT_EQ(resumed.cached_prompt_tokens, 1008);
  (*e)->engine().drain();
  EXPECT_EQ((*e)->engine().stats().state_slots_in_use, 0);
  EXPECT_EQ((*e)->engine().kv_blocks_in_use(), 0);

  c.state_snapshots = 0;
  Result<std::unique_ptr<CpuEngine>> off = CpuEngine::open(path, c);
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(serve(**off, prompt).tokens, cold.tokens);
  const Served again = serve(**off, prompt);
  EXPECT_EQ(again.cached_prompt_tokens, 0);
  EXPECT_EQ(again.tokens, cold.tokens);
  const Served next_cold = serve(**off, next_turn);
  EXPECT_EQ(next_cold.cached_prompt_tokens, 0);
  EXPECT_EQ(resumed.tokens, next_cold.tokens);
}

INSTANTIATE_TEST_SUITE_P(Archs, CpuEngineHybrid, ::testing::Values(Arch::kQwen35, Arch::kGraniteHybrid),
                         [](const auto& param_info) { return std::string(arch_name(param_info.param)); });

TEST(CpuEngine, AMissingModelFileIsAnError) {
  testing::TempDir dir;
  EXPECT_FALSE(CpuEngine::open(dir.file("absent.gguf"), CpuEngineConfig{}).ok());
}

}  // namespace
}  // namespace met
