// ReferenceEncoder: the BERT family's forward (bert, nomic-bert) written out
// in double from its definition, for tests of the EncoderPass: a token's
// input is its embedding + token type 0's row + (bert) its position's row,
// LayerNormed; each layer computes Q, K and V (with biases where the file
// has them; nomic-bert rotates the halves of each head of Q and K by
// pos * base^(-2i/head_dim)), attends every query to every position of the
// sequence (softmax of q·k / sqrt(head_dim)), projects, adds the residual
// and LayerNorms; then the FFN (bert: gelu, tanh form, of up·x + b, then
// down with its bias; nomic-bert: silu(gate·x) * up·x, then down), the
// residual add and LayerNorm. Weights dequantized once by src/tensor's
// reference decoders.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/ids.h"
#include "model/model.h"
#include "testing/reference_math.h"

namespace met::testing {

class ReferenceEncoder {
 public:
  // REQUIRES: model.traits().encoder.
  explicit ReferenceEncoder(const Model& model);
  // The last layer's output for each of `tokens` (one whole sequence).
  Rows hidden(std::span<const TokenId> tokens) const;

 private:
  struct Layer {
    std::vector<float> wq, wk, wv, bq, bk, bv, wo, bo, attn_norm, attn_norm_b;
    std::vector<float> up, up_b, gate, down, down_b, out_norm, out_norm_b;
  };
  std::vector<float> tensor(const std::string& name) const;
  Rows attention(const Layer& l, const Rows& x) const;
  std::vector<double> ffn(const Layer& l, const std::vector<double>& x) const;
  std::vector<double> layer_norm(const std::vector<double>& x, const std::vector<float>& w,
                                 const std::vector<float>& b) const;

  const Model& model_;
  std::vector<float> token_embd_, token_types_, position_, norm_, norm_b_;
  std::vector<Layer> layers_;
};

}  // namespace met::testing
