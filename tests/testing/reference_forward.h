// ReferenceForward: the slow, plain definition of a llama-family forward pass
// for tests: every weight dequantized to float once (through src/tensor's
// reference decoders, not the backend's kernels), dense causal attention over
// all positions in double, RoPE written out from its definition. The
// optimized CpuDevice path is checked against it.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <span>
#include <vector>

#include "core/ids.h"
#include "model/model.h"

namespace met::testing {

class ReferenceForward {
 public:
  explicit ReferenceForward(const Model& model);
  // Logits (vocab floats) after each of `tokens` (positions 0, 1, …).
  std::vector<std::vector<float>> logits(std::span<const TokenId> tokens) const;

 private:
  struct Layer {
    std::vector<float> attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm, ffn_norm, w_gate, w_up, w_down;
  };
  const Model& model_;
  std::vector<float> token_embd_, output_norm_, output_;
  std::vector<Layer> layers_;
};

}  // namespace met::testing
