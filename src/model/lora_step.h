// LoraStep: a step's LoRA adapters as linear() applies them. Each row of the
// step runs with its seq's adapter (StepSeq::adapter_slot, resolved through
// the adapters the device's slots held when the step was launched), and so
// does each output row (the head's products run over the outputs); rows
// with an adapter are grouped by adapter into segments, so an adapter's
// matrices are streamed once per group (Punica/S-LoRA's SGMV). Scratch for
// x·Aᵀ of up to kMaxProducts products per linear() call is sized once.
// Invariants: begin() allocates nothing; a row's adapter is its seq's.
// Threading: begin() on one thread before the step's job; the job's threads
// read it. Tested through tests/model/lora_forward_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/lora_adapter.h"
#include "backend/step_plan.h"

namespace met {

// Indices (rows or outputs) grouped by the adapter they run with.
struct LoraRows {
  struct Segment {
    const LoraAdapter* adapter = nullptr;
    int32_t begin = 0;  // into order
    int32_t end = 0;
  };
  std::vector<const LoraAdapter*> adapter;  // per index; null: the base model
  std::vector<int32_t> order;               // indices with an adapter, grouped by it
  std::vector<Segment> segments;
  int32_t num_indices = 0;

  std::span<const int32_t> indices(const Segment& s) const {
    return std::span<const int32_t>(order).subspan(static_cast<size_t>(s.begin), static_cast<size_t>(s.end - s.begin));
  }
};

// What one linear() call applies: its products' adapters' pairs for
// `layer`, over `rows`' grouping, with x·Aᵀ of product j for index i at
// t + j * t_product_stride + i * t_stride.
struct LoraCall {
  const LoraRows* rows = nullptr;  // null: no adapters
  int32_t layer = 0;
  float* t = nullptr;
  int64_t t_stride = 0;
  int64_t t_product_stride = 0;
};

class LoraStep {
 public:
  static constexpr int kMaxProducts = 3;  // q/k/v

  LoraStep() = default;
  // Room for `max_rows` rows, `max_outputs` outputs and adapters of rank up
  // to `max_rank` (0: no adapters run).
  LoraStep(int32_t max_rows, int32_t max_outputs, int32_t max_rank);

  int32_t max_rank() const { return max_rank_; }
  // The step's groupings: `slots[s]` is the adapter of slot s. REQUIRES:
  // every seq's adapter_slot is kNoAdapterSlot or a slot with an adapter.
  void begin(const StepPlan& plan, std::span<const LoraAdapter* const> slots);
  bool active() const { return !rows_.segments.empty(); }
  // The call for `layer`'s products over the step's rows, or over its
  // outputs (the head); one with no rows when no row runs an adapter.
  LoraCall rows_call(int32_t layer) const;
  LoraCall outputs_call() const;

 private:
  static void group(LoraRows& g);
  int32_t max_rank_ = 0;
  LoraRows rows_, outputs_;
  mutable std::vector<float> t_;  // the calls' scratch, written by linear()
  int64_t t_product_stride_ = 0;
};

}  // namespace met
