// What the GridDevice tests share (host backend, and CudaGridBackend in the
// gpu tests): one device configuration, and the check that the grid
// program's logits follow the reference forward and do not depend on how a
// sequence is cut into steps.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <cstdint>
#include <memory>

#include "backend/cuda/grid_backend.h"
#include "model/grid_device.h"
#include "model/model.h"
#include "model/random_model.h"

namespace met::testing {

// 64 KV blocks of `kv`, steps of up to 64 rows, 32 outputs and 8 seqs, a
// context of 1,024.
GridDeviceOptions test_grid_options(GgmlType kv);

// A GridDevice for `model` on `backend` (null: the host's); EXPECTs that
// creation succeeds.
std::unique_ptr<GridDevice> make_test_grid(const Model& model, GgmlType kv = GgmlType::kF32,
                                           std::unique_ptr<cuda::GridBackend> backend = nullptr);

// One llama layer 1,024 wide (the FFN too), so every matrix of a Q8_0, Q4_K
// or Q6_K model (the embedding and the head included) fills whole GEMV
// tiles and GridDevice tiles it (weight_tiling.h).
RandomModelSpec wide_model_spec(GgmlType dtype);

// The first `num_tokens` of fixed_prompt on `dev`, `prefill` of them in
// chunks of `chunk` and the rest one a step, give logits within 1e-4 of the
// reference forward at every position; the first `singles` positions run
// one a step on `fresh` give the same bits.
void expect_grid_logits(Device& dev, Device& fresh, const Model& model, int32_t num_tokens, int32_t prefill,
                        int32_t chunk, int32_t singles);

}  // namespace met::testing
