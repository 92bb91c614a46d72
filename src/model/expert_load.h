// ExpertLoad: per MoE layer and routed expert, how many (token, choice) pairs
// the forward pass has routed there since it was made: the counts behind
// /metrics' met:moe_expert_tokens_total. The forward adds each layer's group
// sizes (MoeFfn::group_offsets) once per step; nothing is counted per token.
// Invariants: counts only grow; layer-major (layer * num_experts + expert).
// Threading: add() from one thread at a time (thread 0 of the forward job;
// jobs are ordered by the worker pool), as a relaxed load and store per
// expert: no read-modify-write, no lock, the cost of a plain counter.
// read() from any thread, relaxed: each count is one it held, not all from
// one instant. Tested by tests/model/expert_load_test.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace met {

class ExpertLoad {
 public:
  ExpertLoad() = default;  // no layers: a dense model
  ExpertLoad(int32_t num_layers, int32_t num_experts);

  int32_t num_layers() const { return num_layers_; }
  int32_t num_experts() const { return num_experts_; }

  // Adds one step's groups of `layer`: expert e took offsets[e + 1] -
  // offsets[e] pairs (offsets as cpu::group_by_expert writes them).
  // REQUIRES: 0 <= layer < num_layers(); offsets.size() == num_experts() + 1.
  void add(int32_t layer, std::span<const int32_t> offsets);

  // out = every count, layer-major (num_layers() × num_experts(); empty
  // for a dense model).
  void read(std::vector<int64_t>& out) const;

 private:
  int32_t num_layers_ = 0;
  int32_t num_experts_ = 0;
  std::unique_ptr<std::atomic<int64_t>[]> counts_;
};

}  // namespace met
