// Tests for ExpertLoad (src/model/expert_load.h) and its counting in the
// forward pass: every step adds each layer's group sizes, so the counts sum
// to layers × k × rows run, and a dense model counts nothing.
#include "model/expert_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>

#include "model/cpu_device.h"
#include "model/random_model.h"
#include "testing/temp_dir.h"

namespace met::expert_load_test {
namespace {

TEST(ExpertLoad, AddsGroupSizesPerLayerAndReadsLayerMajor) {
  ExpertLoad load(2, 3);
  const int32_t a[] = {0, 2, 2, 5};  // sizes 2, 0, 3
  const int32_t b[] = {0, 1, 4, 4};  // sizes 1, 3, 0
  load.add(1, a);
  load.add(0, b);
  load.add(1, a);
  std::vector<int64_t> got;
  load.read(got);
  EXPECT_EQ(got, (std::vector<int64_t>{1, 3, 0, 4, 0, 6}));
  ExpertLoad dense;
  dense.read(got);
  EXPECT_TRUE(got.empty());
}

// One writer, readers on other threads: each count a reader sees is one the
// writer wrote (never torn, never going back).
TEST(ExpertLoad, ReadersOnOtherThreadsSeeCountsOnlyGrow) {
  ExpertLoad load(1, 2);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    std::vector<int64_t> prev(2, 0), now;
    while (!done.load()) {
      load.read(now);
      for (size_t i = 0; i < now.size(); ++i) EXPECT_GE(now[i], prev[i]);
      prev = now;
    }
  });
  const int32_t offsets[] = {0, 1, 3};
  for (int i = 0; i < 20000; ++i) load.add(0, offsets);
  done = true;
  reader.join();
  std::vector<int64_t> got;
  load.read(got);
  EXPECT_EQ(got, (std::vector<int64_t>{20000, 40000}));
}

RandomModelSpec spec(Arch arch, uint32_t num_experts) {
  RandomModelSpec s;
  s.arch = arch;
  s.num_layers = 3;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 600;
  s.num_experts = num_experts;
  s.num_experts_used = num_experts > 0 ? 3 : 0;
  s.expert_feed_forward_length = num_experts > 0 ? 64 : 0;
  return s;
}

std::unique_ptr<CpuDevice> device(const Model& m, int threads) {
  CpuDeviceOptions o;
  o.num_threads = threads;
  o.kv_dtype = GgmlType::kF32;
  o.num_kv_blocks = 8;
  o.limits = ForwardLimits{.max_rows = 64, .max_outputs = 4, .max_seqs = 4};
  return std::move(*CpuDevice::create(m, o));
}

// A step of `rows` rows of one sequence starting at `pos`.
void run_rows(Device& dev, int32_t rows, int32_t pos) {
  StepPlan p;
  for (int32_t i = 0; i < rows; ++i) {
    p.inputs.push_back(FeedToken{static_cast<TokenId>((pos + i) * 7 % 600)});
    p.positions.push_back(pos + i);
  }
  p.seqs.push_back(StepSeq{0, rows, pos, {BlockId(0), BlockId(1), BlockId(2), BlockId(3)}, std::nullopt});
  p.outputs.push_back(OutputRow{rows - 1, OutputKind::kArgmax});
  auto t = dev.launch(p);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  StepResult r;
  ASSERT_TRUE(dev.await_result(*t, r).ok());
}

TEST(ExpertLoad, TheForwardCountsKChoicesPerRowInEveryLayer) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(spec(Arch::kQwen3Moe, 8), dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  auto dev = device(**m, 3);
  EXPECT_EQ(dev->info().num_experts, 8);
  run_rows(*dev, 13, 0);  // a prefill chunk
  for (int32_t pos = 13; pos < 20; ++pos) run_rows(*dev, 1, pos);  // decode steps
  std::vector<int64_t> counts;
  dev->read_expert_tokens(counts);
  ASSERT_EQ(counts.size(), 3u * 8u);
  for (size_t layer = 0; layer < 3; ++layer) {
    const auto begin = counts.begin() + static_cast<std::ptrdiff_t>(layer * 8);
    EXPECT_EQ(std::accumulate(begin, begin + 8, int64_t{0}), 3 * 20) << "layer " << layer;
    EXPECT_GT(std::count_if(begin, begin + 8, [](int64_t c) { return c > 0; }), 3) << "layer " << layer;
  }
}

TEST(ExpertLoad, ADenseModelCountsNothing) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(spec(Arch::kLlama, 0), dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  auto dev = device(**m, 2);
  run_rows(*dev, 5, 0);
  std::vector<int64_t> counts = {1};
  dev->read_expert_tokens(counts);
  EXPECT_TRUE(counts.empty());
  EXPECT_EQ(dev->info().num_experts, 0);
}

}  // namespace
}  // namespace met::expert_load_test
