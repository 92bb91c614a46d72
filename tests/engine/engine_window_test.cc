// The engine on a real model whose every layer attends through a sliding
// window (a random gpt-oss, --swa-pattern 0 --sliding-window 16, on the
// CpuDevice): generations far longer than a small KV pool holds give the
// greedy tokens of a big pool that keeps every block (the scheduler's
// release_behind_window off), by swap preemption too, and the pool is whole
// again after.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "kv/spill_store.h"
#include "model/cpu_device.h"
#include "model/model.h"
#include "model/random_model.h"
#include "testing/collected_stream.h"
#include "testing/temp_dir.h"

namespace met::engine_window_test {
namespace {

constexpr uint32_t kWindow = 16;
constexpr uint32_t kVocab = 600;

// swa_pattern 0: every layer windowed; 2: layer 0 windowed, layer 1 not.
RandomModelSpec gpt_oss(uint32_t swa_pattern) {
  RandomModelSpec s;
  s.arch = Arch::kGptOss;
  s.num_layers = 2;
  s.embedding_length = 64;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 128;
  s.vocab_size = kVocab;
  s.seed = 41;
  s.num_experts = 4;
  s.num_experts_used = 2;
  s.expert_feed_forward_length = 64;
  s.sliding_window = kWindow;
  s.swa_pattern = swa_pattern;
  return s;
}

// The model file of gpt_oss(swa_pattern), made once per test binary.
std::string model_path(uint32_t swa_pattern = 0) {
  static testing::TempDir dir;
  const std::string p = (std::filesystem::path(dir.path()) / fmt::format("gpt-oss-{}.gguf", swa_pattern)).string();
  if (!std::filesystem::exists(p)) {
    const Result<RandomModelSummary> made = make_random_model(gpt_oss(swa_pattern), p);
    EXPECT_TRUE(made.ok()) << made.status().message();
  }
  return p;
}

// A model, its tokenizer, a CpuDevice with `num_blocks` and an engine.
class WindowEngine {
 public:
  WindowEngine(int32_t num_blocks, int32_t max_seqs, bool release, std::optional<std::string> spill_dir,
               bool pipeline = true, uint32_t swa_pattern = 0) {
    model_ = std::move(*Model::load(model_path(swa_pattern)));
    tokenizer_ = std::make_unique<Tokenizer>(std::move(*Tokenizer::from_gguf(model_->file().metadata())));
    CpuDeviceOptions d;
    d.num_kv_blocks = num_blocks;
    d.kv_dtype = GgmlType::kF32;
    d.limits = ForwardLimits{.max_rows = 64, .max_outputs = max_seqs, .max_seqs = max_seqs};
    device_ = std::move(*CpuDevice::create(*model_, d));
    EngineOptions eo;
    eo.scheduler.max_seqs = max_seqs;
    eo.scheduler.max_batch_tokens = 64;
    eo.scheduler.pipeline = pipeline;
    eo.scheduler.release_behind_window = release;
    if (spill_dir) {
      spill_ = std::move(*SpillStore::create(*spill_dir));
      eo.scheduler.preempt = PreemptMode::kSwap;
    }
    Result<std::unique_ptr<Engine>> e = Engine::create(*device_, *tokenizer_, spill_.get(), clock_, eo);
    EXPECT_TRUE(e.ok()) << e.status().message();
    engine_ = std::move(*e);
  }

  Engine& engine() { return *engine_; }
  const DeviceInfo& device_info() const { return device_->info(); }

 private:
  RealClock clock_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<CpuDevice> device_;
  std::unique_ptr<SpillStore> spill_;
  std::unique_ptr<Engine> engine_;
};

// `n` prompts of 30 + 9i tokens, each generating `max_tokens` greedily.
std::vector<testing::CollectedStream> generate(WindowEngine& m, int n, int32_t max_tokens) {
  std::vector<RequestHandle> handles;
  for (int i = 0; i < n; ++i) {
    EngineRequest r;
    for (int k = 0; k < 30 + 9 * i; ++k) r.prompt.push_back(static_cast<TokenId>((k * 37 + 11 * i + 5) % kVocab));
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    Result<RequestHandle> h = m.engine().submit(std::move(r));
    EXPECT_TRUE(h.ok()) << h.status().message();
    handles.push_back(std::move(*h));
  }
  std::vector<testing::CollectedStream> out;
  for (RequestHandle& h : handles) out.push_back(testing::collect_stream(h));
  m.engine().drain();
  EXPECT_EQ(m.engine().kv_blocks_in_use(), 0);
  return out;
}

TEST(EngineWindow, TheDeviceReportsAWindowOnlyWhenEveryLayerIsWindowed) {
  WindowEngine all(8, 1, true, std::nullopt);
  EXPECT_EQ(all.device_info().kv_window, static_cast<int32_t>(kWindow));
  WindowEngine some(8, 1, true, std::nullopt, true, /*swa_pattern=*/2);
  EXPECT_EQ(some.device_info().kv_window, 0);
}

// 6 blocks hold 96 positions; each sequence grows to 30 + 300 of them.
TEST(EngineWindow, ALongGenerationThroughASmallPoolGivesTheTokensOfAPoolThatKeepsEveryBlock) {
  WindowEngine keep(64, 1, /*release=*/false, std::nullopt);
  const std::vector<testing::CollectedStream> want = generate(keep, 1, 300);
  ASSERT_EQ(want[0].tokens.size(), 300u);
  // Varied tokens, so a block read from the wrong place would show.
  EXPECT_GT(std::set<TokenId>(want[0].tokens.begin(), want[0].tokens.end()).size(), 20u);
  for (bool pipeline : {true, false}) {
    WindowEngine small(6, 1, /*release=*/true, std::nullopt, pipeline);
    const std::vector<testing::CollectedStream> got = generate(small, 1, 300);
    ASSERT_TRUE(got[0].finish.has_value()) << got[0].error.value_or("");
    EXPECT_EQ(got[0].finish->finish_reason, "length");
    EXPECT_FALSE(got[0].finish->guard_stop.has_value()) << *got[0].finish->guard_stop;
    EXPECT_EQ(got[0].tokens, want[0].tokens) << "pipeline " << pipeline;
    const EngineStatsSnapshot s = small.engine().stats();
    EXPECT_EQ(s.preemptions_swap + s.preemptions_recompute, 0);
  }
}

// Four sequences of 2 live blocks each (the window of 16 straddles two, and
// the lane reserves the next as the first is given back) share 6, so they
// preempt one another by swap with blocks already released, and resume to
// the same tokens.
TEST(EngineWindow, SequencesWithReleasedBlocksSwapOutAndBackInToTheSameTokens) {
  WindowEngine keep(256, 4, /*release=*/false, std::nullopt);
  const std::vector<testing::CollectedStream> want = generate(keep, 4, 120);
  testing::TempDir spill;
  WindowEngine small(6, 4, /*release=*/true, spill.path());
  const std::vector<testing::CollectedStream> got = generate(small, 4, 120);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(got[i].finish.has_value()) << got[i].error.value_or("");
    EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
  }
  EXPECT_GT(small.engine().stats().preemptions_swap, 0);
  EXPECT_TRUE(std::filesystem::is_empty(spill.path()));
}

}  // namespace
}  // namespace met::engine_window_test
