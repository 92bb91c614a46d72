// The Device conformance suite (testing/device_conformance.h) on the
// devices met has: CpuDevice on a made llama (F32, F16 and Q8_0 KV, one and
// two threads), FakeDevice, and GridDevice on the host backend (the program
// CudaDevice runs on a GPU). Each runs random mixed plans with every output
// checked, then each sequence alone must give the same outputs bit for bit;
// CpuDevice with one thread and with two must agree bit for bit; a
// sequence's KV blocks moved to another device decode on unchanged; and the
// CPU and the grid program agree across backends (argmax identical, logits
// within float summation error, KV moved from one to the other).
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <vector>
#include <string>

#include "model/grid_device.h"
#include "testing/device_conformance.h"
#include "testing/fake_device.h"
#include "testing/grid_test_support.h"
#include "testing/model_test_support.h"
#include "testing/temp_dir.h"

namespace met::testing {
namespace {

struct DeviceCase {
  std::string name;
  GgmlType weights = GgmlType::kF32;
  GgmlType kv = GgmlType::kF32;
  int threads = 2;
  bool fake = false;
  bool grid = false;  // GridDevice on the host backend: CudaDevice's program
};

void PrintTo(const DeviceCase& c, std::ostream* os) { *os << c.name; }

class DeviceConformance : public ::testing::TestWithParam<DeviceCase> {
 protected:
  void SetUp() override {
    if (GetParam().fake) return;
    model_ = make_and_load(small_model_spec(Arch::kLlama, GetParam().weights), dir_);
    ASSERT_NE(model_, nullptr);
  }

  std::unique_ptr<Device> make_device(int threads) const {
    if (GetParam().fake) {
      FakeDeviceOptions o;
      o.vocab_size = 512;
      return std::make_unique<FakeDevice>(o);
    }
    if (GetParam().grid) return make_test_grid(*model_, GetParam().kv);
    return make_test_device(*model_, {.num_threads = threads,
                                      .num_kv_blocks = 64,
                                      .kv_dtype = GetParam().kv,
                                      .limits = {.max_rows = 64, .max_outputs = 16, .max_seqs = 8}});
  }

  TempDir dir_;
  std::unique_ptr<Model> model_;
};

TEST_P(DeviceConformance, MixedPlansMeetTheContractAndEachSequenceAloneGivesTheSameOutputs) {
  // The grid program runs element by element on the host: one seed.
  const std::vector<uint32_t> seeds = GetParam().grid ? std::vector<uint32_t>{1} : std::vector<uint32_t>{1, 2, 3};
  for (const uint32_t seed : seeds) {
    auto dev = make_device(GetParam().threads);
    ASSERT_NE(dev, nullptr);
    const ConformanceRun run = run_mixed_plans(*dev, {.seed = seed});
    // The run exercised what it is for.
    EXPECT_GT(run.fed_rows, 0) << "seed " << seed;
    EXPECT_GT(run.mixed_steps, 0) << "seed " << seed;
    auto alone_dev = make_device(GetParam().threads);
    const ConformanceRun alone = replay_each_alone(*alone_dev, run);
    expect_same_outputs(run, alone, 0.0);
  }
}

TEST_P(DeviceConformance, KvBlocksMovedToAnotherDeviceDecodeOnUnchanged) {
  auto from = make_device(GetParam().threads);
  auto to = make_device(GetParam().threads == 1 ? 2 : 1);
  ASSERT_NE(from, nullptr);
  ASSERT_NE(to, nullptr);
  const ConformanceRun run = run_mixed_plans(*from, {.seed = 4});
  expect_kv_moves_between_devices(*from, *to, run, 6, 0.0);
}

TEST_P(DeviceConformance, OneThreadAndTwoGiveTheSameBits) {
  if (GetParam().fake || GetParam().grid) GTEST_SKIP() << "the device has no threads";
  auto one = make_device(1);
  auto two = make_device(2);
  const ConformanceRun a = run_mixed_plans(*one, {.seed = 9});
  const ConformanceRun b = run_mixed_plans(*two, {.seed = 9});
  expect_same_outputs(a, b, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceConformance,
                         ::testing::Values(DeviceCase{"CpuF32", GgmlType::kF32, GgmlType::kF32, 2},
                                           DeviceCase{"CpuQ8_0KvF16", GgmlType::kQ8_0, GgmlType::kF16, 1},
                                           DeviceCase{"CpuQ4_KKvQ8_0", GgmlType::kQ4_K, GgmlType::kQ8_0, 2},
                                           DeviceCase{"Fake", GgmlType::kF32, GgmlType::kF32, 1, true},
                                           DeviceCase{"GridQ8_0KvF16", GgmlType::kQ8_0, GgmlType::kF16, 1, false, true},
                                           DeviceCase{"GridQ4_KKvF32", GgmlType::kQ4_K, GgmlType::kF32, 1, false, true}),
                         [](const ::testing::TestParamInfo<DeviceCase>& param_info) { return param_info.param.name; });

// Across backends: CpuDevice and the grid program (what CudaDevice runs) on
// the same F32 model give the same argmax at every output of the same
// random mixed plans, logits within float summation error, and a
// sequence's KV written by the CPU decodes on in the grid device.
TEST(DeviceConformanceAcrossBackends, CpuAndGridAgreeOnMixedPlansAndMovedKv) {
  TempDir dir;
  auto model = make_and_load(small_model_spec(Arch::kLlama, GgmlType::kF32), dir);
  ASSERT_NE(model, nullptr);
  const TestDeviceOptions cpu_options{.num_kv_blocks = 64, .kv_dtype = GgmlType::kF32,
                                      .limits = {.max_rows = 64, .max_outputs = 16, .max_seqs = 8}};
  for (const uint32_t seed : {1u, 2u}) {
    auto cpu = make_test_device(*model, cpu_options);
    auto grid = make_test_grid(*model, GgmlType::kF32);
    ASSERT_NE(cpu, nullptr);
    ASSERT_NE(grid, nullptr);
    const ConformanceRun on_cpu = run_mixed_plans(*cpu, {.seed = seed});
    const ConformanceRun on_grid = run_mixed_plans(*grid, {.seed = seed});
    expect_same_outputs(on_cpu, on_grid, 1e-4);
    auto to = make_test_grid(*model, GgmlType::kF32);
    expect_kv_moves_between_devices(*cpu, *to, on_cpu, 6, 1e-4);
  }
}

}  // namespace
}  // namespace met::testing
