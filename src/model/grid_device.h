// GridDevice: the Device that runs a Model's steps as the grid forward pass
// (backend/cuda/forward_program.h) on a GridBackend: on a GPU through
// CudaGridBackend (CudaDevice, MET_CUDA builds), or on the host, where the
// very program the GPU runs is checked against CpuDevice and the reference
// forward. The model's weights go to the backend as the file's bytes (F32,
// F16, BF16, Q8_0, Q4_K and Q6_K matrices; Q8_0 and K-quant rows that fill
// whole tiles are tiled for the GEMV, weight_tiling.h; norms as F32); the
// KV pool is the CPU backend's block layout (F32, F16 or Q8_0 rows), so spill
// images move between the two. launch() packs the plan into a staging
// slot (plan_staging.h, one per step in flight, two at most) and hands it
// to the backend; a row fed from the previous step reads that step's
// argmax where the backend left it (double-buffered), without a round trip
// through the host.
// Supported: llama-family decoders (llama, mistral, qwen2's q/k/v biases,
// qwen3's per-head q/k norms) without windows, experts, recurrent layers,
// scales or soft-caps; LoRA, MTP and hidden outputs are not run. Anything
// else is refused at create() naming it.
// Invariants: steps run in launch order; a ticket is awaited once, oldest
// first; KV block I/O only while no step is in flight.
// Threading: one owner thread (the engine), as Device says.
// Tested by tests/model/grid_device_test.cc and device_conformance_test.cc.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "backend/cuda/grid_backend.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cuda/plan_staging.h"
#include "backend/device.h"
#include "model/forward_pass.h"
#include "model/model.h"

namespace met {

// A KV pool sized from free device memory leaves this much free (for the
// CUDA context's own allocations, cuBLAS workspaces, graphs), and takes at
// most this share of the rest.
inline constexpr int64_t kKvFreeMemoryReserveBytes = int64_t{1} << 30;
inline constexpr double kKvFreeMemoryShare = 0.9;

// Blocks of `block_bytes` in `free_bytes` of device memory, after the
// reserve and within the share; 0 when not even one fits.
int32_t kv_blocks_for_free_memory(int64_t free_bytes, int64_t block_bytes);

struct GridDeviceOptions {
  GgmlType kv_dtype = GgmlType::kF16;  // F16, F32 or Q8_0
  // 0: as many as the backend's free memory holds once the weights and
  // buffers are in (kv_blocks_for_free_memory); a backend without a memory
  // of its own (the host) refuses 0.
  int32_t num_kv_blocks = 256;
  ForwardLimits limits;
  int32_t max_context = 0;        // 0: the model's context length
  int32_t banned_per_output = 64; // banned ids an output may carry on average
};

class GridDevice final : public Device {
 public:
  static Result<std::unique_ptr<GridDevice>> create(const Model& model, std::unique_ptr<cuda::GridBackend> backend,
                                                    const GridDeviceOptions& options);
  ~GridDevice() override;
  GridDevice(const GridDevice&) = delete;
  GridDevice& operator=(const GridDevice&) = delete;

  const DeviceInfo& info() const override { return info_; }
  Result<Ticket> launch(const StepPlan& plan) override;
  Status await_result(Ticket ticket, StepResult& out) override;
  Status read_kv_block(BlockId block, std::span<uint8_t> bytes) override;
  Status write_kv_block(BlockId block, std::span<const uint8_t> bytes) override;
  int64_t busy_ns() const override { return backend_->busy_ns(); }
  const char* backend_name() const { return backend_->name(); }
  cuda::GraphStats graph_stats() const { return backend_->graph_stats(); }
  // The backend's memory bandwidth now (GridBackend::measure_bandwidth).
  double measure_bandwidth(int repeats) { return backend_->measure_bandwidth(repeats); }

 private:
  // A step launched and not yet awaited (at most two: slot ticket % 2).
  struct InFlight {
    bool busy = false;
    uint64_t ticket = 0;
    std::vector<OutputKind> kinds;  // per output; capacity reserved at create
  };
  // Device memory this device allocated, released at destruction.
  template <typename T>
  Result<T*> allocate(int64_t count);
  Result<const uint8_t*> upload(std::span<const uint8_t> bytes);
  // `bytes` (rows of `type`) in the GEMV's tiled layout where the type and
  // width have one (weight_tiling.h), or nullopt.
  Result<std::optional<cuda::MatrixRef>> upload_tiled(cuda::HdWeightType type, std::span<const uint8_t> bytes,
                                                      int64_t rows, int64_t cols);
  Result<cuda::MatrixRef> upload_matrix(const std::string& name, int64_t rows, int64_t cols);
  Result<const float*> upload_vector(const std::string& name, int64_t n);
  Status bind_weights();
  Status make_buffers(const GridDeviceOptions& options);
  Status check_plan(const StepPlan& plan) const;
  // The KV pool of `kv` (num_blocks 0: from the backend's free memory).
  Status make_kv_pool(cpu::KvLayout kv, int64_t block_bytes);
  // The program's view of a staging slot's copy on the device.
  cuda::StepView staged_view(const uint8_t* device_staging) const;

  explicit GridDevice(const Model& model, std::unique_ptr<cuda::GridBackend> backend)
      : model_(model), backend_(std::move(backend)) {}

  const Model& model_;
  std::unique_ptr<cuda::GridBackend> backend_;
  std::vector<void*> device_memory_;
  std::vector<void*> host_memory_;
  DeviceInfo info_;
  cuda::GridModel grid_;
  std::vector<cuda::GridLayer> layers_;
  cuda::GridScratch scratch_;
  int32_t* argmax_[2] = {nullptr, nullptr};  // device: step t writes argmax_[t % 2]
  int32_t* host_argmax_[2] = {nullptr, nullptr};
  float* host_logits_[2] = {nullptr, nullptr};
  uint8_t* device_staging_[2] = {nullptr, nullptr};
  cuda::StagingCapacity capacity_;
  cuda::StagingLayout layout_;
  std::unique_ptr<cuda::StagingRing> ring_;
  InFlight in_flight_[2];
  uint64_t next_ticket_ = 0;
  uint64_t next_await_ = 0;
  std::optional<int32_t> last_outputs_;  // outputs of the step launched last (none yet: empty)
};

}  // namespace met
