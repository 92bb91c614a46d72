// A step's LoRA groupings. Tested through tests/model/lora_forward_test.cc.
#include "model/lora_step.h"

#include <algorithm>

namespace met {

LoraStep::LoraStep(int32_t max_rows, int32_t max_outputs, int32_t max_rank) : max_rank_(max_rank) {
  if (max_rank <= 0) return;
  for (auto [g, n] : {std::pair{&rows_, max_rows}, std::pair{&outputs_, max_outputs}}) {
    g->adapter.resize(static_cast<size_t>(n));
    g->order.reserve(static_cast<size_t>(n));
    g->segments.reserve(static_cast<size_t>(n));
  }
  t_.resize(static_cast<size_t>(kMaxProducts) * static_cast<size_t>(std::max(max_rows, max_outputs)) *
            static_cast<size_t>(max_rank));
  t_product_stride_ = static_cast<int64_t>(std::max(max_rows, max_outputs)) * max_rank;
}

void LoraStep::begin(const StepPlan& plan, std::span<const LoraAdapter* const> slots) {
  rows_.segments.clear();
  outputs_.segments.clear();
  if (max_rank_ <= 0) return;
  bool any = false;
  rows_.num_indices = plan.num_rows();
  for (const StepSeq& s : plan.seqs) {
    const LoraAdapter* a = s.adapter_slot == kNoAdapterSlot ? nullptr : slots[static_cast<size_t>(s.adapter_slot)];
    any = any || a != nullptr;
    std::fill_n(rows_.adapter.begin() + s.row_begin, s.num_rows, a);
  }
  if (!any) return;
  outputs_.num_indices = static_cast<int32_t>(plan.outputs.size());
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    outputs_.adapter[o] = rows_.adapter[static_cast<size_t>(plan.outputs[o].row)];
  }
  group(rows_);
  group(outputs_);
}

// Stable grouping by adapter, in order of each adapter's first index: few
// adapters per step, so a pass per adapter.
void LoraStep::group(LoraRows& g) {
  g.order.clear();
  g.segments.clear();
  for (int32_t i = 0; i < g.num_indices; ++i) {
    const LoraAdapter* a = g.adapter[static_cast<size_t>(i)];
    if (a == nullptr) continue;
    bool seen = false;
    for (const LoraRows::Segment& s : g.segments) seen = seen || s.adapter == a;
    if (seen) continue;
    const auto begin = static_cast<int32_t>(g.order.size());
    for (int32_t j = i; j < g.num_indices; ++j) {
      if (g.adapter[static_cast<size_t>(j)] == a) g.order.push_back(j);
    }
    g.segments.push_back({a, begin, static_cast<int32_t>(g.order.size())});
  }
}

LoraCall LoraStep::rows_call(int32_t layer) const {
  if (rows_.segments.empty()) return {};
  return {&rows_, layer, t_.data(), max_rank_, t_product_stride_};
}

LoraCall LoraStep::outputs_call() const {
  if (outputs_.segments.empty()) return {};
  return {&outputs_, 0, t_.data(), max_rank_, t_product_stride_};
}

}  // namespace met
