// ReferenceForward: the slow, plain definition of a llama-family forward pass
// for tests: every weight dequantized to float once (through src/tensor's
// reference decoders, not the backend's kernels), dense causal attention over
// all positions in double, RoPE written out from its definition. The
// optimized CpuDevice path is checked against it. A MoE layer routes in
// double too: softmax over the router logits, the k most probable experts
// (the lower index on ties), weights renormalised where the arch does, a
// SwiGLU FFN per chosen expert, the weighted sum, plus the shared expert
// scaled by the sigmoid of its gate. gpt-oss: biases on q/k/v/o, the router
// and the experts; a head's sink logit joins its softmax denominator; a
// windowed layer's query at t sees keys s with t - s < window (rope base
// rope.freq_base_swa); top-k over the biased logits, then a softmax over
// those k; the clamped SwiGLU.
// qwen35/qwen35moe: recurrent layers run the gated delta net token by token
// (reference_recurrent.h: projections, causal short conv from a zero state
// and SiLU, L2-normalised q and k, the gated delta rule from a zero state,
// the per-head RMS norm gated by silu(z), ssm_out); attention layers split
// wq's rows per head into the query and its gate, rotate the first rope_dims
// of each head NeoX-wise (what IMROPE does for text when every pair is in a
// section) and scale the attention output by sigmoid(gate) before wo;
// post_attention_norm feeds the FFN. The first MTP block (mtp_logits): per
// position t, eh_proj · [enorm(embedding of next[t]); hnorm(output_norm(h_t))]
// through its layer (attending over positions 0..t of those inputs),
// shared_head_norm and the head; mtp_chain_logits feeds it its own output.
// granitehybrid/nemotron_h: Mamba2 layers token by token
// (reference_mamba2.h); plain attention, rotated (normal rope) only where
// hp.uses_rope, scaled by attention_scale when set; granite's embedding,
// residual and logit scales; nemotron_h's FFN-only layers run down ·
// relu(up · attn_norm(x))², its other layers have no FFN; granitehybrid's
// MoE adds its shared expert's output whole (no gate).
// gemma4 (reference_gemma4.cc): each layer at its own head size and KV
// heads, attending with scale 1 over its own keys or, for a shared-KV layer,
// those of its source layer; q/k norms with their weights, V normed per head
// without one (K's projection where there is no attn_v); the global layers'
// rope with rope_freqs, the windowed ones' with their own base and
// dimensions; after each FFN the per-layer embedding's block and the layer
// output scale; the per-layer inputs from the scaled embeddings.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <span>
#include <vector>

#include "core/ids.h"
#include "model/model.h"
#include "testing/reference_math.h"

namespace met::testing {

class ReferenceForward {
 public:
  explicit ReferenceForward(const Model& model);
  // Logits (vocab floats) after each of `tokens` (positions 0, 1, …). For a
  // MoE model, `routing_margins` (if given) gets per position how close its
  // logits came to a different expert choice: the smallest gap between the
  // k-th and (k+1)-th router logit of its routing, over every layer.
  // Infinity for a dense model. A fast path whose weights are quantized may
  // route differently where the margin is small.
  std::vector<std::vector<float>> logits(std::span<const TokenId> tokens,
                                         std::vector<double>* routing_margins = nullptr) const;
  // The final hidden state after each of `tokens` (output_norm applied:
  // what the head reads, and what an embedding pools).
  Rows hidden(std::span<const TokenId> tokens) const;
  // The first MTP block's logits at each position t of `tokens`, given the
  // token after t (next[t]). REQUIRES: the model has an MTP block.
  std::vector<std::vector<float>> mtp_logits(std::span<const TokenId> tokens, std::span<const TokenId> next) const;
  // A chain from the last position T - 1 (ForwardPass's StepSeq::mtp_chain):
  // the block's logits at positions T, T + 1, … where position T - 1 + j
  // reads eh_proj · [enorm(embedding of fed[j - 1]); hnorm(shared_head_norm(
  // the block's output at T - 2 + j))] (fed[0]: the block's guess at T - 1).
  std::vector<std::vector<float>> mtp_chain_logits(std::span<const TokenId> tokens, std::span<const TokenId> next,
                                                   std::span<const TokenId> fed) const;

 private:
  struct Layer {
    std::vector<float> attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm, ffn_norm, w_gate, w_up, w_down;
    // MoE layers: the router and the 3-D expert tensors, flattened.
    std::vector<float> router, gate_exps, up_exps, down_exps;
    std::vector<float> shexp_gate_inp, shexp_gate, shexp_up, shexp_down;
    // gpt-oss.
    std::vector<float> bo, sinks, router_b, gate_exps_b, up_exps_b, down_exps_b;
    size_t window = 0;
    // gemma3, olmo2: each block's output norm; smollm3: layers without rope.
    std::vector<float> attn_post_norm, ffn_post_norm;
    bool rope = true;
    // Gated delta layers (qwen35).
    bool recurrent = false;
    std::vector<float> wqkv, wgate, ssm_conv, ssm_dt, ssm_a, ssm_beta, ssm_alpha, ssm_norm, ssm_out;
    std::vector<float> ssm_ba;  // qwen3next: beta and alpha packed (empty elsewhere)
    // Mamba2 layers (granitehybrid, nemotron_h; also ssm_conv, ssm_dt, ssm_a,
    // ssm_norm, ssm_out above); nemotron_h's FFN-only layers.
    bool mamba2 = false;
    bool ffn_only = false;
    std::vector<float> ssm_in, ssm_conv_b, ssm_d;
    // gemma4.
    uint32_t index = 0;
    std::vector<float> out_scale, pe_gate, pe_proj, pe_post_norm;
  };
  Layer load_layer(uint32_t i) const;
  void split_fused(Layer& l) const;
  // The residual stream after every trunk layer.
  Rows trunk(std::span<const TokenId> tokens, std::vector<double>* routing_margins) const;
  // The MTP block's input rows for positions 0..T-1 (mtp_logits), and its
  // head's logits for an output row of its layer.
  Rows mtp_inputs(std::span<const TokenId> tokens, std::span<const TokenId> next) const;
  std::vector<float> mtp_head(const std::vector<double>& x) const;
  // x through layer l (its mixer, then its FFN).
  void run_layer(const Layer& l, Rows& x, std::vector<double>& margin) const;
  // x += attention of layer l over all positions.
  void attention(const Layer& l, Rows& x) const;
  // x += the gated delta net of layer l over all positions, token by token
  // (reference_recurrent.cc).
  void gated_delta(const Layer& l, Rows& x) const;
  // x += the Mamba2 mixer of layer l over all positions, token by token
  // (reference_mamba2.cc).
  void mamba2(const Layer& l, Rows& x) const;
  // gemma4's trunk (reference_gemma4.cc) and its parts.
  Rows gemma4_trunk(std::span<const TokenId> tokens) const;
  Rows per_layer_inputs(std::span<const TokenId> tokens, const Rows& x) const;
  // x += layer l's attention; its keys and values (normed, rotated) are
  // added to keys[l.index] and values[l.index] when it keeps KV.
  void gemma4_attention(const Layer& l, Rows& x, std::vector<Rows>& keys, std::vector<Rows>& values) const;
  void per_layer_block(const Layer& l, const std::vector<double>& inputs, std::vector<double>& x) const;
  // x += out (normalised by post_norm first when not empty), scaled by
  // granite's residual_scale when set.
  void add_residual(std::vector<double>& x, const std::vector<double>& out,
                    const std::vector<float>& post_norm = {}) const;
  // rms_norm(x) by `norm`, or x itself when `norm` is empty (olmo2).
  std::vector<double> pre_norm(const std::vector<double>& x, const std::vector<float>& norm) const;
  // The k experts a router chose with their weights.
  std::vector<std::pair<size_t, double>> route(const Layer& l, const std::vector<double>& xn,
                                               double& margin) const;
  // margin: lowered to this layer's routing margin for the row.
  std::vector<double> ffn(const Layer& l, const std::vector<double>& xn, double& margin) const;
  std::vector<double> moe_ffn(const Layer& l, const std::vector<double>& xn, double& margin) const;
  const Model& model_;
  std::vector<float> token_embd_, output_norm_, output_;
  std::vector<float> per_layer_token_embd_, per_layer_model_proj_, per_layer_proj_norm_;  // gemma4
  std::vector<Layer> layers_;
  struct Mtp {
    Layer block;
    std::vector<float> eh_proj, enorm, hnorm, shared_head_norm, embed, head;
  };
  Mtp mtp_;
};

// One vector from a sequence's hidden states (core/pooling.h): their mean,
// the first (CLS) or the last. REQUIRES: rows not empty, p not kNone.
std::vector<double> pool_rows(const Rows& rows, Pooling p);

}  // namespace met::testing
