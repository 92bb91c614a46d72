// The devices by name (see device_factory.h).
#include "engine/device_factory.h"

#include "backend/cuda/grid_backend.h"
#include "model/grid_device.h"
#if defined(MET_HAVE_CUDA)
#include "backend/cuda/cuda_grid_backend.h"
#endif

namespace met {

Result<std::unique_ptr<Device>> make_engine_device(const std::string& name, const Model& model,
                                                   const CpuDeviceOptions& options) {
  if (name == "cpu") {
    MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuDevice> d, CpuDevice::create(model, options));
    return std::unique_ptr<Device>(std::move(d));
  }
  if (options.num_adapter_slots > 0 || options.forward.mtp) {
    return unimplemented("LoRA adapters and MTP drafts run on the CPU device only");
  }
  std::unique_ptr<cuda::GridBackend> backend;
  if (name == "grid-host") {
    backend = cuda::make_host_grid_backend();
  } else if (name == "cuda") {
#if defined(MET_HAVE_CUDA)
    MET_ASSIGN_OR_RETURN(backend, cuda::make_cuda_grid_backend(0));
#else
    return unimplemented("this met was built without CUDA (cmake -DMET_CUDA=ON)");
#endif
  } else {
    return invalid_argument("not cpu, cuda or grid-host");
  }
  GridDeviceOptions grid;
  grid.kv_dtype = options.kv_dtype;
  grid.num_kv_blocks = options.num_kv_blocks;
  grid.limits = options.limits;
  MET_ASSIGN_OR_RETURN(std::unique_ptr<GridDevice> d, GridDevice::create(model, std::move(backend), grid));
  return std::unique_ptr<Device>(std::move(d));
}

bool sizes_kv_pool_itself(const std::string& name) { return name == "cuda"; }

WeightPacking weight_packing_for(const std::string& name) {
  return name == "cpu" ? WeightPacking::kForCpu : WeightPacking::kNone;
}

}  // namespace met
