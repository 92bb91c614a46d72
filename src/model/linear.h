// linear: y_j = x · W_j^T for one or more weight matrices sharing the input x
// (rows × cols floats), run by every thread of a WorkerPool job: the rows of
// x are prepared once per distinct weight type (split by rows), then each
// product's output columns are split between the threads, so every weight
// row is read once per call for the whole batch; the columns go out in
// shrinking ranges claimed by whichever thread is free
// (ThreadCtx::claim_range), so a core the host slows down does less of the
// step instead of holding it up, and the threads reach the closing barrier
// within about one column tile of each other. ActivationBuffers holds the
// prepared rows, sized once for the widest input and the most rows.
// With a LoraCall (lora_step.h), each product whose target the rows'
// adapters adapt adds scale · B·(A·x) per row: x·Aᵀ is computed beside the
// prepared rows (split by adapter group, product and block of A's rows,
// before the same barrier), and
// B's part is added by the thread that wrote those output columns, one
// pass per adapter's group of rows, so the call gains no barrier.
// Invariants: linear() allocates nothing; it ends with a barrier.
// Threading: linear() is called by every thread of one job.
// Tested through tests/model/cpu_device_test.cc and moe_ffn_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/kernels/matmul.h"
#include "backend/cpu/worker_pool.h"
#include "model/lora_step.h"

namespace met {

struct Product {
  const cpu::WeightMatrix* w;
  float* y;  // rows × w->rows
  LoraTarget lora = LoraTarget::kNone;  // the matrix adapters may update
};

class ActivationBuffers {
 public:
  static constexpr int kMaxSlots = 3;  // q/k/v or gate/up may each differ in dtype

  ActivationBuffers() = default;
  // Room for max_rows rows of up to max_cols inputs, for any weight type.
  ActivationBuffers(int64_t max_rows, int64_t max_cols);
  uint8_t* slot(int s) { return slots_[static_cast<size_t>(s)].data(); }

 private:
  std::vector<std::vector<uint8_t>> slots_;
};

// Bytes of one prepared row of up to `cols` inputs, whatever the weight type.
size_t max_activation_row_bytes(int64_t cols);

// REQUIRES: every product has w->cols == cols; at most kMaxSlots distinct
// weight types; rows and cols within the buffers' sizes; with `lora`, at
// most LoraStep::kMaxProducts products and its rows' grouping over `rows`.
// `where` names the products' phase in a PhaseProfile: the caller's line.
void linear(cpu::ThreadCtx& ctx, const float* x, int64_t rows, int64_t cols, std::span<const Product> products,
            ActivationBuffers& act, const LoraCall& lora = {},
            const cpu::CallSite& where = cpu::CallSite::here());

}  // namespace met
