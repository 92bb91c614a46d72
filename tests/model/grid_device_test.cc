// Tests for model/grid_device.h on the host backend: the grid forward pass
// (the program CudaDevice runs on a GPU) gives the reference forward's
// logits at every position for every weight type it reads (tiled for the
// GEMV too), prefilled in chunks or a token per step; it agrees with CpuDevice; and it refuses, by
// name, what it does not run (architectures, KV types, hidden outputs, a row
// fed from an output the previous step did not have).
#include "model/grid_device.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "testing/device_conformance.h"
#include "testing/grid_test_support.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met::testing {
namespace {

struct GridCase {
  Arch arch;
  GgmlType dtype;
};

void PrintTo(const GridCase& c, std::ostream* os) {
  *os << arch_name(c.arch) << " " << ggml_type_name(c.dtype);
}

class GridVsReference : public ::testing::TestWithParam<GridCase> {};

// The grid program multiplies float activations by the file's weights
// decoded exactly, so every weight type is within float summation error of
// the reference (which decodes the same weights): no activation
// quantization, unlike the CPU's integer paths: 1e-4 of the largest logit.
// `spec`'s model on two host grids: expect_grid_logits.
void expect_host_grid_logits(const RandomModelSpec& spec, int32_t num_tokens, int32_t prefill, int32_t chunk,
                             int32_t singles) {
  TempDir dir;
  auto model = make_and_load(spec, dir);
  ASSERT_NE(model, nullptr);
  auto dev = make_test_grid(*model);
  auto fresh = make_test_grid(*model);
  ASSERT_NE(dev, nullptr);
  ASSERT_NE(fresh, nullptr);
  expect_grid_logits(*dev, *fresh, *model, num_tokens, prefill, chunk, singles);
}

TEST_P(GridVsReference, LogitsAtEveryPositionMatchTheReference) {
  expect_host_grid_logits(small_model_spec(GetParam().arch, GetParam().dtype), 40, 30, 7, 40);
}

// Every weight type on llama; the other architectures' own parts (qwen2's
// biases, qwen3's q/k norms and NeoX rope, mistral) on two of them.
INSTANTIATE_TEST_SUITE_P(ArchsAndWeightTypes, GridVsReference,
                         ::testing::Values(GridCase{Arch::kLlama, GgmlType::kF32}, GridCase{Arch::kLlama, GgmlType::kF16},
                                           GridCase{Arch::kLlama, GgmlType::kBF16},
                                           GridCase{Arch::kLlama, GgmlType::kQ8_0},
                                           GridCase{Arch::kLlama, GgmlType::kQ4_K},
                                           GridCase{Arch::kLlama, GgmlType::kQ6_K},
                                           GridCase{Arch::kQwen2, GgmlType::kF32}, GridCase{Arch::kQwen2, GgmlType::kQ8_0},
                                           GridCase{Arch::kQwen3, GgmlType::kF32}, GridCase{Arch::kQwen3, GgmlType::kQ4_K},
                                           GridCase{Arch::kMistral, GgmlType::kF16}),
                         [](const ::testing::TestParamInfo<GridCase>& param_info) {
                           return std::string(arch_name(param_info.param.arch)) + "_" +
                                  std::string(ggml_type_name(param_info.param.dtype));
                         });

// Weights the device tiles for its GEMV (every matrix of a 1,024-wide
// model): the reference's logits, and the same bits chunked or a token a
// step.
class GridTiledVsReference : public ::testing::TestWithParam<GgmlType> {};

TEST_P(GridTiledVsReference, LogitsAtEveryPositionMatchTheReference) {
  expect_host_grid_logits(wide_model_spec(GetParam()), 6, 4, 2, 6);
}

INSTANTIATE_TEST_SUITE_P(TiledTypes, GridTiledVsReference,
                         ::testing::Values(GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K),
                         [](const ::testing::TestParamInfo<GgmlType>& param_info) {
                           return std::string(ggml_type_name(param_info.param));
                         });

// A model loaded for a device with weights of its own is not packed for
// the CPU: its matrices are the file's rows, in the file's bytes. The
// grid device reads the file's bytes either way (the same bits), and the
// CPU device still runs such a model (on its rows kernels), near the
// reference.
TEST(GridDevice, AModelLoadedWithoutCpuPackingKeepsTheFilesRows) {
  TempDir dir;
  ASSERT_TRUE(make_random_model(small_model_spec(Arch::kLlama, GgmlType::kQ8_0), dir.file("m.gguf")).ok());
  auto packed = Model::load(dir.file("m.gguf"));
  auto rows = Model::load(dir.file("m.gguf"), nullptr, WeightPacking::kNone);
  ASSERT_TRUE(packed.ok() && rows.ok());
  const std::span<const uint8_t> file = (*rows)->file().tensor_data(*(*rows)->file().find_tensor("blk.0.ffn_up.weight"));
  for (const LayerWeights& l : (*rows)->weights().layers) {
    for (const cpu::WeightMatrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      EXPECT_EQ(w->layout, cpu::WeightLayout::kRows);
    }
  }
  EXPECT_EQ((*rows)->weights().layers[0].w_up.data, file.data());
  const std::vector<TokenId> tokens = fixed_prompt(12, (*rows)->hparams().vocab_size);
  auto grid_packed = make_test_grid(**packed);
  auto grid_rows = make_test_grid(**rows);
  ASSERT_NE(grid_packed, nullptr);
  ASSERT_NE(grid_rows, nullptr);
  EXPECT_EQ(logits_at_every_position(*grid_rows, tokens, 12, 5, block_range(0, 1)),
            logits_at_every_position(*grid_packed, tokens, 12, 5, block_range(0, 1)));
  auto cpu = make_test_device(**rows, {.num_kv_blocks = 8, .kv_dtype = GgmlType::kF32,
                                       .limits = {.max_rows = 16, .max_outputs = 16, .max_seqs = 2}});
  ASSERT_NE(cpu, nullptr);
  expect_logits_agree(ReferenceForward(**rows).logits(tokens),
                      logits_at_every_position(*cpu, tokens, 12, 5, block_range(0, 1)), 3e-2);
}

// Past one attention partition (256 positions): prefill rows fold their
// partitions whole, decode rows run them split and merge; both match the
// reference, and a position's logits are the same bits either way.
TEST(GridDevice, AttentionAcrossPartitionsMatchesTheReference) {
  // 270 prefilled in chunks of 32 (whole), the last 30 one a step (split
  // over two partitions); the first 280 one a step on another device.
  expect_host_grid_logits(small_model_spec(Arch::kLlama, GgmlType::kF32), 300, 270, 32, 280);
}

TEST(GridDevice, AgreesWithTheCpuDeviceOnAQuantizedModelWithAnF16Cache) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kQ8_0), dir);
  ASSERT_NE(model, nullptr);
  auto grid = make_test_grid(*model, GgmlType::kF16);
  auto cpu = make_test_device(*model, {.num_kv_blocks = 32, .kv_dtype = GgmlType::kF16});
  ASSERT_NE(grid, nullptr);
  ASSERT_NE(cpu, nullptr);
  const std::vector<TokenId> tokens = fixed_prompt(24, 600);
  const auto g = logits_at_every_position(*grid, tokens, 16, 16, block_range(0, 2));
  const auto c = logits_at_every_position(*cpu, tokens, 16, 16, block_range(0, 2));
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    // The CPU's Q8_0 path quantizes activations to 8 bits (its tolerance
    // against the reference is 3e-2); the grid's does not.
    EXPECT_LT(relative_error(g[pos], c[pos]), 3e-2) << "position " << pos;
  }
}

// A Q8_0 KV cache: the grid quantizes each K and V head by the CPU cache's
// rule (the same bytes for the same floats: cuda_math_test), so on an F32
// model (no activation quantization on either side) the two devices agree
// up to the K/V floats' summation-order differences, which now and then
// move a code by one step (1e-3, where F32 caches agree to 1e-4), and KV
// written by one reads back on the other.
TEST(GridDevice, AQ8_0CacheHoldsTheCpusBytesAndAgreesWithIt) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir);
  ASSERT_NE(model, nullptr);
  auto grid = make_test_grid(*model, GgmlType::kQ8_0);
  auto cpu = make_test_device(*model, {.num_kv_blocks = 64, .kv_dtype = GgmlType::kQ8_0,
                                       .limits = {.max_rows = 64, .max_outputs = 16, .max_seqs = 8}});
  ASSERT_NE(grid, nullptr);
  ASSERT_NE(cpu, nullptr);
  const ConformanceRun on_grid = run_mixed_plans(*grid, {.seed = 4});
  expect_same_outputs(run_mixed_plans(*cpu, {.seed = 4}), on_grid, 1e-3);
  auto to = make_test_grid(*model, GgmlType::kQ8_0);
  ASSERT_NE(to, nullptr);
  expect_kv_moves_between_devices(*cpu, *to, run_mixed_plans(*cpu, {.seed = 5}), 6, 1e-3);
}

TEST(GridDevice, AKvPoolFromFreeMemoryLeavesTheReserveAndTakesItsShare) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(kv_blocks_for_free_memory(kKvFreeMemoryReserveBytes, 1024), 0);       // nothing past the reserve
  EXPECT_EQ(kv_blocks_for_free_memory(kKvFreeMemoryReserveBytes - 1, 1024), 0);
  EXPECT_EQ(kv_blocks_for_free_memory(kKvFreeMemoryReserveBytes + 10 * kGiB, kGiB), 9);  // 90% of 10 GiB
  EXPECT_EQ(kv_blocks_for_free_memory(100 * kGiB, 0), 0);
  // An H200 with 123 GiB free after an 8B model's 16 GiB of weights, 2 MiB
  // blocks (32 layers x K and V x 8 KV heads x 16 tokens x 128 F16 dims):
  // 90% of 122 GiB, 56,217 blocks, 899,472 tokens.
  EXPECT_EQ(kv_blocks_for_free_memory(123 * kGiB, 2 * 1048576), 56217);
}

// The host backend with a device memory of `free_bytes` free: what
// CudaGridBackend reports from cudaMemGetInfo.
class BackendWithFreeMemory final : public cuda::GridBackend {
 public:
  explicit BackendWithFreeMemory(int64_t free_bytes) : free_(free_bytes) {}
  const char* name() const override { return "host with free memory"; }
  Result<void*> allocate(size_t bytes) override { return host_->allocate(bytes); }
  void release(void* ptr) override { host_->release(ptr); }
  Result<void*> allocate_host(size_t bytes) override { return host_->allocate_host(bytes); }
  void release_host(void* ptr) override { host_->release_host(ptr); }
  Status to_device(void* dst, const void* src, size_t bytes) override { return host_->to_device(dst, src, bytes); }
  Status to_host(void* dst, const void* src, size_t bytes) override { return host_->to_host(dst, src, bytes); }
  Status launch(const cuda::GridStep& step) override { return host_->launch(step); }
  Status wait(uint64_t ticket) override { return host_->wait(ticket); }
  double measure_bandwidth(int repeats) override { return host_->measure_bandwidth(repeats); }
  std::optional<int64_t> free_memory_bytes() const override { return free_; }

 private:
  std::unique_ptr<cuda::GridBackend> host_ = cuda::make_host_grid_backend();
  int64_t free_;
};

// No pool size given: the pool is what the free memory holds, and the
// device serves from it.
TEST(GridDevice, WithoutAPoolSizeThePoolIsWhatFreeMemoryHolds) {
  TempDir dir;
  auto llama = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir);
  ASSERT_NE(llama, nullptr);
  GridDeviceOptions o = test_grid_options(GgmlType::kF16);
  o.num_kv_blocks = 0;
  const int64_t free = kKvFreeMemoryReserveBytes + (int64_t{48} << 20);
  auto d = GridDevice::create(*llama, std::make_unique<BackendWithFreeMemory>(free), o);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const int32_t want = kv_blocks_for_free_memory(free, (*d)->info().kv_block_bytes);
  EXPECT_GT(want, 0);
  EXPECT_EQ((*d)->info().num_kv_blocks, want);
  const std::vector<TokenId> tokens = fixed_prompt(20, 600);
  EXPECT_EQ(logits_at_every_position(**d, tokens, 20, 20, block_range(want - 2, 2)).size(), tokens.size());
  auto none = GridDevice::create(*llama, std::make_unique<BackendWithFreeMemory>(kKvFreeMemoryReserveBytes), o);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("holds no KV block"), std::string::npos) << none.status().to_string();
}

TEST(GridDevice, TheHostBackendCannotSizeItsPoolFromFreeMemory) {
  TempDir dir;
  auto llama = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir);
  ASSERT_NE(llama, nullptr);
  GridDeviceOptions o;
  o.num_kv_blocks = 0;
  auto d = GridDevice::create(*llama, cuda::make_host_grid_backend(), o);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("cannot size the KV pool itself"), std::string::npos) << d.status().to_string();
}

TEST(GridDevice, RefusesWhatItDoesNotRunByName) {
  TempDir dir;
  RandomModelSpec moe = small_model_spec(Arch::kMixtral, GgmlType::kF32);
  moe.num_experts = 4, moe.num_experts_used = 2, moe.expert_feed_forward_length = 128;
  auto model = make_and_load(moe, dir);
  ASSERT_NE(model, nullptr);
  auto d = GridDevice::create(*model, cuda::make_host_grid_backend(), {});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("experts"), std::string::npos) << d.status().to_string();

  TempDir dir2;
  auto llama = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir2);
  ASSERT_NE(llama, nullptr);
  GridDeviceOptions bf16;
  bf16.kv_dtype = GgmlType::kBF16;
  d = GridDevice::create(*llama, cuda::make_host_grid_backend(), bf16);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("bf16 KV cache"), std::string::npos) << d.status().to_string();

  auto dev = make_test_grid(*llama);
  ASSERT_NE(dev, nullptr);
  StepPlan fed;
  fed.inputs = {FeedFromRow{0}};
  fed.positions = {0};
  fed.seqs.push_back(StepSeq{0, 1, 0, {BlockId(0)}, std::nullopt});
  auto t = dev->launch(fed);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("fed from output 0 of a step that had 0"), std::string::npos)
      << t.status().to_string();
  StepPlan hidden;
  hidden.inputs = {FeedToken{3}};
  hidden.positions = {0};
  hidden.seqs.push_back(StepSeq{0, 1, 0, {BlockId(0)}, std::nullopt});
  hidden.outputs = {{0, OutputKind::kHidden}};
  t = dev->launch(hidden);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("hidden state"), std::string::npos) << t.status().to_string();
}

}  // namespace
}  // namespace met::testing
