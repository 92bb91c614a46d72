// Hidden outputs (OutputKind::kHidden, kHiddenSum): how a step's final
// hidden states come back for embeddings, shared by the decoder's
// ForwardPass and the EncoderPass. A kHidden output gives its row's hidden
// state; a kHiddenSum output the sum over every row of its seq in the step
// (mean pooling: the host adds a prompt's chunks and divides).
// Threading: write_hidden_outputs from every thread of one job, each
// taking its share of the outputs; it ends with a barrier. Tested through
// tests/model/forward_pass_test.cc and tests/model/encoder_pass_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/kernels/ops.h"
#include "backend/cpu/worker_pool.h"
#include "backend/step_plan.h"

namespace met {

// Sizes result.hidden for the plan's hidden outputs (empty when none).
void size_hidden_result(const StepPlan& plan, int32_t hidden_size, StepResult& result);

// The seq whose last row is `row`. REQUIRES: one is (validate_plan).
const StepSeq& seq_ending_at(const StepPlan& plan, int32_t row);

// Writes every hidden output. `row_hidden(r)` gives row r's hidden state
// (width floats; it may compute it into scratch of row r's own); for a
// kHidden output `out_rows` + o * width is used instead when not null (the
// rows the head already normalised).
template <class RowHidden>
void write_hidden_outputs(cpu::ThreadCtx& ctx, const StepPlan& plan, const float* out_rows, int64_t width,
                          StepResult& result, RowHidden row_hidden) {
  if (result.hidden.empty()) return;
  const auto [o0, o1] = ctx.split(static_cast<int64_t>(plan.outputs.size()));
  for (int64_t o = o0; o < o1; ++o) {
    const OutputRow& out = plan.outputs[static_cast<size_t>(o)];
    float* h = &result.hidden[static_cast<size_t>(o * width)];
    if (out.kind == OutputKind::kHidden) {
      const float* from = out_rows != nullptr ? out_rows + o * width : row_hidden(int64_t{out.row});
      std::copy(from, from + width, h);
    } else if (out.kind == OutputKind::kHiddenSum) {
      const StepSeq& s = seq_ending_at(plan, out.row);
      std::fill(h, h + width, 0.0f);
      for (int32_t r = s.row_begin; r < s.row_begin + s.num_rows; ++r) cpu::add(h, row_hidden(int64_t{r}), width, h);
    }
  }
  ctx.barrier();
}

}  // namespace met
