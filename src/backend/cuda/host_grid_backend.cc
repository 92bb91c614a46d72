// HostGridBackend (see grid_backend.h): the grid program on the host.
#include <cstdlib>
#include <cstring>

#include "backend/cpu/memory_bandwidth.h"
#include "backend/cuda/grid_backend.h"
#include "backend/cuda/host_exec.h"

namespace met::cuda {
namespace {

class HostGridBackend final : public GridBackend {
 public:
  const char* name() const override { return "host"; }
  Result<void*> allocate(size_t bytes) override {
    void* p = std::calloc(bytes == 0 ? 1 : bytes, 1);
    if (p == nullptr) return out_of_range("grid device: {} bytes of host memory refused", bytes);
    return p;
  }
  void release(void* ptr) override { std::free(ptr); }
  Result<void*> allocate_host(size_t bytes) override { return allocate(bytes); }
  void release_host(void* ptr) override { std::free(ptr); }
  Status to_device(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return ok_status();
  }
  Status to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return ok_status();
  }
  Status launch(const GridStep& step) override {
    std::memcpy(step.device_staging, step.host_staging, static_cast<size_t>(step.staged_bytes));
    HostExec exec;
    run_forward(exec, *step.model, step.scratch, step.view, step.counts);
    std::memcpy(step.host_argmax, step.scratch.argmax, static_cast<size_t>(step.counts.outputs) * sizeof(int32_t));
    if (step.host_logits != nullptr) {
      std::memcpy(step.host_logits, step.scratch.logits,
                  static_cast<size_t>(step.counts.outputs) * static_cast<size_t>(step.model->vocab) * sizeof(float));
    }
    return ok_status();
  }
  Status wait(uint64_t /*ticket*/) override { return ok_status(); }
  double measure_bandwidth(int repeats) override {
    if (probe_ == nullptr) probe_ = std::make_unique<cpu::ReadBandwidthProbe>(1, size_t{256} << 20);
    return probe_->measure(repeats);
  }

 private:
  std::unique_ptr<cpu::ReadBandwidthProbe> probe_;
};

}  // namespace

std::unique_ptr<GridBackend> make_host_grid_backend() { return std::make_unique<HostGridBackend>(); }

}  // namespace met::cuda
