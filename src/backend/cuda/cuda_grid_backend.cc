// CudaGridBackend (see cuda_grid_backend.h). Decode-only steps (every row
// an output) replay a CUDA graph of their shape, captured lazily; other
// steps launch their kernels eagerly.
#include "backend/cuda/cuda_grid_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <tuple>

#include "backend/cuda/cuda_buffer.h"
#include "backend/cuda/cuda_forward.h"

namespace met::cuda {
namespace {

constexpr int kSlots = 2;  // steps in flight, as GridDevice keeps
constexpr size_t kMaxGraphs = 256;  // decode shapes kept captured; past it all are dropped and recaptured

// A decode-only step's shape: its kernels' launch sizes and, through the
// staging slot and argmax buffers, their pointers.
using GraphKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t>;  // slot, rows, outputs, partitions, seqs

class CudaGridBackend final : public GridBackend {
 public:
  ~CudaGridBackend() override {
    drop_graphs();
    if (copy_from_ != nullptr) cudaFree(copy_from_);
    if (copy_to_ != nullptr) cudaFree(copy_to_);
    for (int s = 0; s < kSlots; ++s) {
      if (start_[s] != nullptr) cudaEventDestroy(start_[s]);
      if (done_[s] != nullptr) cudaEventDestroy(done_[s]);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Status init(int index) {
    MET_RETURN_IF_ERROR(cuda_status(cudaSetDevice(index), "cudaSetDevice"));
    MET_RETURN_IF_ERROR(cuda_status(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    for (int s = 0; s < kSlots; ++s) {
      MET_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&start_[s]), "cudaEventCreate"));
      MET_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&done_[s]), "cudaEventCreate"));
    }
    return ok_status();
  }

  const char* name() const override { return "cuda"; }

  Result<void*> allocate(size_t bytes) override {
    void* p = nullptr;
    MET_RETURN_IF_ERROR(cuda_status(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc"));
    const Status zeroed = cuda_status(cudaMemset(p, 0, bytes), "cudaMemset");
    if (!zeroed.ok()) {
      cudaFree(p);
      return zeroed;
    }
    return p;
  }
  void release(void* ptr) override { cudaFree(ptr); }
  Result<void*> allocate_host(size_t bytes) override {
    void* p = nullptr;
    MET_RETURN_IF_ERROR(cuda_status(cudaMallocHost(&p, bytes == 0 ? 1 : bytes), "cudaMallocHost"));
    return p;
  }
  void release_host(void* ptr) override { cudaFreeHost(ptr); }
  Status to_device(void* dst, const void* src, size_t bytes) override {
    return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to the device");
  }
  Status to_host(void* dst, const void* src, size_t bytes) override {
    return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy to the host");
  }

  Status launch(const GridStep& step) override {
    const int s = static_cast<int>(step.ticket % kSlots);
    MET_RETURN_IF_ERROR(cuda_status(cudaEventRecord(start_[s], stream_), "cudaEventRecord"));
    MET_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(step.device_staging, step.host_staging,
                                                    static_cast<size_t>(step.staged_bytes), cudaMemcpyHostToDevice,
                                                    stream_),
                                    "step staging copy"));
    const StepCounts& n = step.counts;
    if (n.rows == n.outputs) {  // decode-only: replay a graph of its shape
      MET_RETURN_IF_ERROR(run_graph(step, s));
    } else {
      MET_RETURN_IF_ERROR(cuda_status(
          run_forward_on_stream(*step.model, step.scratch, step.view, n, stream_), "forward pass"));
    }
    MET_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(step.host_argmax, step.scratch.argmax,
                                                    static_cast<size_t>(n.outputs) * sizeof(int32_t),
                                                    cudaMemcpyDeviceToHost, stream_),
                                    "argmax copy"));
    if (step.host_logits != nullptr) {
      const size_t bytes = static_cast<size_t>(n.outputs) * static_cast<size_t>(step.model->vocab) * sizeof(float);
      MET_RETURN_IF_ERROR(cuda_status(
          cudaMemcpyAsync(step.host_logits, step.scratch.logits, bytes, cudaMemcpyDeviceToHost, stream_),
          "logits copy"));
    }
    return cuda_status(cudaEventRecord(done_[s], stream_), "cudaEventRecord");
  }

  Status wait(uint64_t ticket) override {
    const int s = static_cast<int>(ticket % kSlots);
    MET_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(done_[s]), "step"));
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, start_[s], done_[s]) == cudaSuccess) {
      busy_ns_.fetch_add(static_cast<int64_t>(static_cast<double>(ms) * 1e6), std::memory_order_relaxed);
    }
    return ok_status();
  }

  int64_t busy_ns() const override { return busy_ns_.load(std::memory_order_relaxed); }
  GraphStats graph_stats() const override { return graph_stats_; }

  std::optional<int64_t> free_memory_bytes() const override {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) return std::nullopt;
    return static_cast<int64_t>(free);
  }

  // Device-to-device copies of 512 MiB, timed by events.
  double measure_bandwidth(int repeats) override {
    constexpr size_t kBytes = size_t{512} << 20;
    if (copy_from_ == nullptr && (cudaMalloc(&copy_from_, kBytes) != cudaSuccess ||
                                  cudaMalloc(&copy_to_, kBytes) != cudaSuccess)) {
      return 0.0;
    }
    double best = 0.0;
    for (int i = 0; i < repeats; ++i) {
      float ms = 0.0f;
      if (cudaEventRecord(start_[0], stream_) != cudaSuccess ||
          cudaMemcpyAsync(copy_to_, copy_from_, kBytes, cudaMemcpyDeviceToDevice, stream_) != cudaSuccess ||
          cudaEventRecord(done_[0], stream_) != cudaSuccess || cudaEventSynchronize(done_[0]) != cudaSuccess ||
          cudaEventElapsedTime(&ms, start_[0], done_[0]) != cudaSuccess || ms <= 0.0f) {
        return best;
      }
      best = std::max(best, 2.0 * static_cast<double>(kBytes) / (static_cast<double>(ms) * 1e-3));
    }
    return best;
  }

 private:
  // The graph of the step's shape, captured the first time it is seen.
  Status run_graph(const GridStep& step, int slot) {
    const StepCounts& n = step.counts;
    const GraphKey key{slot, n.rows, n.outputs, n.partitions, n.seqs};
    auto it = graphs_.find(key);
    if (it == graphs_.end()) {
      if (graphs_.size() >= kMaxGraphs) drop_graphs();
      const auto start = std::chrono::steady_clock::now();
      cudaGraph_t graph = nullptr;
      MET_RETURN_IF_ERROR(cuda_status(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "capture"));
      const cudaError_t ran = run_forward_on_stream(*step.model, step.scratch, step.view, n, stream_);
      const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
      MET_RETURN_IF_ERROR(cuda_status(ran, "forward pass (capture)"));
      MET_RETURN_IF_ERROR(cuda_status(ended, "end capture"));
      cudaGraphExec_t exec = nullptr;
      const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
      cudaGraphDestroy(graph);
      MET_RETURN_IF_ERROR(cuda_status(made, "graph instantiate"));
      it = graphs_.emplace(key, exec).first;
      ++graph_stats_.captures;
      graph_stats_.capture_ns +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    }
    ++graph_stats_.replays;
    return cuda_status(cudaGraphLaunch(it->second, stream_), "graph launch");
  }

  void drop_graphs() {
    for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
    graphs_.clear();
  }

  void* copy_from_ = nullptr;  // measure_bandwidth's buffers
  void* copy_to_ = nullptr;
  std::map<GraphKey, cudaGraphExec_t> graphs_;
  GraphStats graph_stats_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_[kSlots] = {nullptr, nullptr};
  cudaEvent_t done_[kSlots] = {nullptr, nullptr};
  std::atomic<int64_t> busy_ns_{0};
};

}  // namespace

Result<std::unique_ptr<GridBackend>> make_cuda_grid_backend(int index) {
  int count = 0;
  MET_RETURN_IF_ERROR(cuda_status(cudaGetDeviceCount(&count), "cudaGetDeviceCount"));
  if (index < 0 || index >= count) return not_found("CUDA device {}: {} visible", index, count);
  auto backend = std::make_unique<CudaGridBackend>();
  MET_RETURN_IF_ERROR(backend->init(index));
  return std::unique_ptr<GridBackend>(std::move(backend));
}

}  // namespace met::cuda
