// Hidden outputs. Tested through tests/model/forward_pass_test.cc.
#include "model/hidden_outputs.h"

#include "core/check.h"

namespace met {

void size_hidden_result(const StepPlan& plan, int32_t hidden_size, StepResult& result) {
  result.hidden_size = hidden_size;
  const bool any = std::any_of(plan.outputs.begin(), plan.outputs.end(),
                               [](const OutputRow& o) { return is_hidden_output(o.kind); });
  if (any) {
    result.hidden.resize(plan.outputs.size() * static_cast<size_t>(hidden_size));
  } else {
    result.hidden.clear();
  }
}

const StepSeq& seq_ending_at(const StepPlan& plan, int32_t row) {
  const auto it = std::find_if(plan.seqs.begin(), plan.seqs.end(),
                               [&](const StepSeq& s) { return s.row_begin + s.num_rows - 1 == row; });
  MET_CHECK(it != plan.seqs.end(), "hidden output: row {} ends no seq", row);
  return *it;
}

}  // namespace met
