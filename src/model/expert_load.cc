// ExpertLoad. Tested by tests/model/expert_load_test.cc.
#include "model/expert_load.h"

#include "core/check.h"

namespace met {

ExpertLoad::ExpertLoad(int32_t num_layers, int32_t num_experts)
    : num_layers_(num_layers),
      num_experts_(num_experts),
      counts_(std::make_unique<std::atomic<int64_t>[]>(static_cast<size_t>(num_layers) * num_experts)) {}

void ExpertLoad::add(int32_t layer, std::span<const int32_t> offsets) {
  MET_DCHECK(0 <= layer && layer < num_layers_);
  MET_DCHECK(offsets.size() == static_cast<size_t>(num_experts_) + 1);
  std::atomic<int64_t>* row = &counts_[static_cast<size_t>(layer) * num_experts_];
  for (int32_t e = 0; e < num_experts_; ++e) {
    const int32_t n = offsets[static_cast<size_t>(e) + 1] - offsets[static_cast<size_t>(e)];
    if (n == 0) continue;
    // The only writer: a load and a store, not a locked add.
    row[e].store(row[e].load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
}

void ExpertLoad::read(std::vector<int64_t>& out) const {
  out.resize(static_cast<size_t>(num_layers_) * num_experts_);
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
}

}  // namespace met
