// The devices an engine's model can run on, by the name `--device` gives:
// "cpu" (CpuDevice), "cuda" (GridDevice on CUDA device 0, in a MET_CUDA
// build), "grid-host" (GridDevice on the host backend: the CUDA device's
// program run on the host, slowly, to test it without a GPU). Used by
// CpuEngine and by `met bench`.
// Threading: any thread. Tested by tests/server/serve_grid_device_test.cc
// and tests/cli (bench --device).
#pragma once

#include <memory>
#include <string>

#include "backend/device.h"
#include "core/status.h"
#include "model/cpu_device.h"
#include "model/model.h"

namespace met {

// The device `name` for `model`, sized by `options` (a grid device takes
// its KV type, pool and limits; LoRA adapters and MTP run on the CPU only).
Result<std::unique_ptr<Device>> make_engine_device(const std::string& name, const Model& model,
                                                   const CpuDeviceOptions& options);

// How a model that device `name` runs is loaded: packed for the CPU's
// kernels, or (a device with weights of its own) as the file's rows.
WeightPacking weight_packing_for(const std::string& name);

// Whether device `name` sizes its KV pool from its own free memory when no
// size is given (a GPU's), instead of the engine's host-memory default.
bool sizes_kv_pool_itself(const std::string& name);

}  // namespace met
