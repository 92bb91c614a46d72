// CudaDevice (GridDevice on CudaGridBackend) on a GPU: the reference
// forward's logits at every position for every weight type it reads, the
// conformance suite (every output checked, each sequence alone bit for bit,
// KV moved between devices, decode steps replayed as CUDA graphs), and
// across backends the CPU's argmax at every output of the same mixed plans
// with logits within float summation error, and the host grid program's;
// weights tiled for the GEMV; a Q8_0 KV cache.
// Label gpu: each test skips, saying why, where no CUDA device is visible.
#include <gtest/gtest.h>

#include <string>

#include "backend/cuda/cuda_grid_backend.h"
#include "model/grid_device.h"
#include "testing/device_conformance.h"
#include "testing/grid_test_support.h"
#include "testing/model_test_support.h"
#include "testing/temp_dir.h"

namespace met::testing {
namespace {

// The CUDA device, or null with the reason in `why`.
std::unique_ptr<GridDevice> make_cuda(const Model& model, GgmlType kv, std::string& why) {
  auto backend = cuda::make_cuda_grid_backend(0);
  if (!backend.ok()) {
    why = backend.status().to_string();
    return nullptr;
  }
  return make_test_grid(model, kv, std::move(backend).value());
}

#define MET_CUDA_DEVICE(var, model, kv)                      \
  std::string var##_why;                                     \
  auto var = make_cuda(model, kv, var##_why);                \
  if (var == nullptr && !var##_why.empty()) GTEST_SKIP() << "no CUDA device: " << var##_why; \
  ASSERT_NE(var, nullptr)

class CudaVsReference : public ::testing::TestWithParam<GgmlType> {};

TEST_P(CudaVsReference, LogitsAtEveryPositionMatchTheReference) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GetParam()), dir);
  ASSERT_NE(model, nullptr);
  MET_CUDA_DEVICE(dev, *model, GgmlType::kF32);
  MET_CUDA_DEVICE(fresh, *model, GgmlType::kF32);
  expect_grid_logits(*dev, *fresh, *model, 40, 30, 7, 40);
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaVsReference,
                         ::testing::Values(GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                                           GgmlType::kQ4_K, GgmlType::kQ6_K),
                         [](const ::testing::TestParamInfo<GgmlType>& param_info) {
                           return std::string(ggml_type_name(param_info.param));
                         });

// Every matrix tiled for the GEMV (a 1,024-wide model).
class CudaTiledVsReference : public ::testing::TestWithParam<GgmlType> {};

TEST_P(CudaTiledVsReference, LogitsAtEveryPositionMatchTheReference) {
  TempDir dir;
  auto model = make_and_load(wide_model_spec(GetParam()), dir);
  ASSERT_NE(model, nullptr);
  MET_CUDA_DEVICE(dev, *model, GgmlType::kF32);
  MET_CUDA_DEVICE(fresh, *model, GgmlType::kF32);
  expect_grid_logits(*dev, *fresh, *model, 40, 30, 7, 40);
}

INSTANTIATE_TEST_SUITE_P(TiledTypes, CudaTiledVsReference,
                         ::testing::Values(GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K),
                         [](const ::testing::TestParamInfo<GgmlType>& param_info) {
                           return std::string(ggml_type_name(param_info.param));
                         });

TEST(CudaConformance, MixedPlansMeetTheContractAndEachSequenceAloneGivesTheSameOutputs) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kQ8_0), dir);
  ASSERT_NE(model, nullptr);
  MET_CUDA_DEVICE(dev, *model, GgmlType::kF16);
  MET_CUDA_DEVICE(alone_dev, *model, GgmlType::kF16);
  const ConformanceRun run = run_mixed_plans(*dev, {.seed = 1});
  EXPECT_GT(run.fed_rows, 0);
  expect_same_outputs(run, replay_each_alone(*alone_dev, run), 0.0);
  // Its decode steps (one row, one output) ran as CUDA graphs.
  EXPECT_GT(alone_dev->graph_stats().captures, 0);
  EXPECT_GT(alone_dev->graph_stats().replays, alone_dev->graph_stats().captures);
  MET_CUDA_DEVICE(to, *model, GgmlType::kF16);
  expect_kv_moves_between_devices(*dev, *to, run, 6, 0.0);
}

TEST(CudaConformance, AttentionAcrossPartitionsMatchesTheReference) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF16), dir);
  ASSERT_NE(model, nullptr);
  MET_CUDA_DEVICE(dev, *model, GgmlType::kF32);
  MET_CUDA_DEVICE(fresh, *model, GgmlType::kF32);
  // 560 in chunks of 16 (whole), 40 one a step (split over three
  // partitions); the first 300 one a step on another device.
  expect_grid_logits(*dev, *fresh, *model, 600, 560, 16, 300);
}

TEST(CudaConformance, TheCpuAndTheHostGridAgreeWithIt) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir);
  ASSERT_NE(model, nullptr);
  MET_CUDA_DEVICE(gpu, *model, GgmlType::kF32);
  auto cpu = make_test_device(*model, {.num_kv_blocks = 64, .kv_dtype = GgmlType::kF32,
                                       .limits = {.max_rows = 64, .max_outputs = 16, .max_seqs = 8}});
  auto host = make_test_grid(*model, GgmlType::kF32);
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(host, nullptr);
  const ConformanceRun on_gpu = run_mixed_plans(*gpu, {.seed = 2});
  expect_same_outputs(run_mixed_plans(*cpu, {.seed = 2}), on_gpu, 1e-4);
  expect_same_outputs(run_mixed_plans(*host, {.seed = 2}), on_gpu, 1e-5);
  MET_CUDA_DEVICE(to, *model, GgmlType::kF32);
  expect_kv_moves_between_devices(*cpu, *to, run_mixed_plans(*cpu, {.seed = 3}), 6, 1e-4);
}

// A Q8_0 cache quantized on the GPU (a warp per block of 32) by the CPU
// cache's rule: the CPU and the host grid agree with it as their Q8_0
// caches agree with each other (grid_device_test), and its KV moves.
TEST(CudaConformance, AQ8_0CacheAgreesWithTheCpusAndTheHostGrids) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir);
  ASSERT_NE(model, nullptr);
  MET_CUDA_DEVICE(gpu, *model, GgmlType::kQ8_0);
  auto cpu = make_test_device(*model, {.num_kv_blocks = 64, .kv_dtype = GgmlType::kQ8_0,
                                       .limits = {.max_rows = 64, .max_outputs = 16, .max_seqs = 8}});
  auto host = make_test_grid(*model, GgmlType::kQ8_0);
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(host, nullptr);
  const ConformanceRun on_gpu = run_mixed_plans(*gpu, {.seed = 6});
  expect_same_outputs(run_mixed_plans(*cpu, {.seed = 6}), on_gpu, 1e-3);
  expect_same_outputs(run_mixed_plans(*host, {.seed = 6}), on_gpu, 1e-3);
  MET_CUDA_DEVICE(to, *model, GgmlType::kQ8_0);
  expect_kv_moves_between_devices(*cpu, *to, run_mixed_plans(*cpu, {.seed = 7}), 6, 1e-3);
}

}  // namespace
}  // namespace met::testing
