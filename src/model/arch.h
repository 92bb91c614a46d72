// Arch: the model architectures met runs, and for each the tensors a GGUF file
// of it holds (names and ggml shapes, shape[0] the input dimension). The loader
// checks files against this list; make-model writes files from it.
// `mistral` is stored as GGUF architecture `llama` (as llama.cpp's converter
// writes Mistral models); qwen2 adds Q/K/V biases; qwen3 adds Q/K RMSNorm.
// Mixture of experts: `qwen3moe` is qwen3 attention with routed experts;
// `mixtral` is stored as `llama` with `expert_count` > 0. A MoE layer has the
// router `ffn_gate_inp` [embd, experts] and the 3-D expert tensors
// `ffn_{gate,up}_exps` [embd, expert_ff, experts], `ffn_down_exps`
// [expert_ff, embd, experts] instead of ffn_{gate,up,down}; with
// expert_shared_feed_forward_length > 0 also the qwen3.5-style shared expert
// `ffn_{gate,up,down}_shexp` and its gate vector `ffn_gate_inp_shexp` [embd].
// `gpt-oss` (llama.cpp's LLM_ARCH_OPENAI_MOE): biases on q/k/v/o, per-head
// `attn_sinks` [heads], `post_attention_norm` as the FFN's input norm, and
// routed experts with biases on the router (`ffn_gate_inp.bias` [experts])
// and the experts (`ffn_{gate,up}_exps.bias` [expert_ff, experts],
// `ffn_down_exps.bias` [embd, experts]); always an untied output.
// `qwen35` / `qwen35moe` (hybrid recurrent, llama.cpp's names): every layer
// has `attn_norm` and `post_attention_norm` (the FFN's input norm). A
// recurrent layer (hp.layer_is_recurrent) is a gated delta net: `attn_qkv`
// [embd, conv_dim], `attn_gate` [embd, value_dim], `ssm_conv1d` [d_conv,
// conv_dim], `ssm_dt.bias` and `ssm_a` [v_heads], `ssm_beta` and `ssm_alpha`
// [embd, v_heads], `ssm_norm` [state_size], `ssm_out` [value_dim, embd]. Any
// other layer is gated attention: `attn_q` [embd, 2 q_dim] (per head, its
// query then its gate), `attn_k`, `attn_v`, `attn_output`, per-head
// `attn_q_norm`/`attn_k_norm`. The FFN is dense (qwen35) or routed experts
// plus the required shared expert (qwen35moe). Each of the
// nextn_predict_layers MTP blocks (blk.num_layers …) is an attention layer
// with its FFN plus `nextn.eh_proj` [2 embd, embd], `nextn.enorm`,
// `nextn.hnorm` and `nextn.shared_head_norm` [embd] (the optional
// `nextn.embed_tokens` and `nextn.shared_head_head` are not listed: Qwen3.5's
// MTP shares the model's embedding and head). `qwen3next` is qwen35moe with
// `ssm_beta` and `ssm_alpha` packed into `ssm_ba` [embd, 2 v_heads] (per key
// head, its value heads' betas then their alphas), value heads grouped by
// key head (hp.key_head) and plain NeoX rope (no sections).
// `granitehybrid` / `nemotron_h` (Mamba2 hybrids, llama.cpp's names): every
// layer has `attn_norm`. A Mamba2 layer (hp.layer_is_recurrent): `ssm_in`
// [embd, mamba_in_proj_dim] (rows z, then x B C, then dt), `ssm_conv1d`
// [d_conv, conv_dim] and its `.bias` [conv_dim] (optional in llama.cpp,
// always written here), `ssm_dt.bias` [heads], `ssm_a` and `ssm_d` [1,
// heads] (no `.weight`), `ssm_norm` [d_inner / groups, groups], `ssm_out`
// [d_inner, embd]. Other layers are plain attention (`attn_q`, `attn_k`,
// `attn_v`, `attn_output`). granitehybrid: every layer then has `ffn_norm`
// and a SwiGLU FFN, or routed experts with an optional shared expert that
// has no `ffn_gate_inp_shexp`. nemotron_h: a layer has one of the three (Mamba2,
// attention, or hp.layer_is_ffn_only: `ffn_up` and `ffn_down`, relu² and no
// gate, read through attn_norm).
// Dense transformers beyond llama's tensors: `granite` and `smollm3` have
// llama's tensors; `gemma3` adds per-head `attn_q_norm`/`attn_k_norm`
// [head_dim] and post-norms on both blocks, `post_attention_norm` (the
// attention's output, before the residual add) and `post_ffw_norm` (the
// FFN's); `gemma2` is gemma3 without the q/k norms, its output always the
// token embedding; `olmo2` has those post-norms and no pre-norms (no attn_norm or
// ffn_norm), and q/k norms over the whole of Q and K ([q_dim], [kv_dim]).
// `phi3` fuses Q, K and V into `attn_qkv` [embd, q_dim + 2 kv_dim] and gate
// and up into `ffn_up` [embd, 2 ff] (gate rows first); LongRoPE models add
// the global `rope_factors_long` and `rope_factors_short` [rope_dims / 2].
// `gemma4` (llama.cpp's names): `per_layer_token_embd` [n_layer * pl, vocab],
// `per_layer_model_proj` [embd, n_layer * pl] and `per_layer_proj_norm` [pl]
// when embedding_length_per_layer (pl) > 0; per layer gemma3's tensors at
// that layer's sizes (hp.layer_head_dim, layer_kv_heads, layer_ffn_length),
// `layer_output_scale` [1], and with pl > 0 `inp_gate` [embd, pl], `proj`
// [pl, embd] and `post_norm` [embd]. A shared-KV layer (!hp.layer_has_kv)
// lists no attn_k, attn_v or attn_k_norm; a global layer lists no attn_v
// (llama.cpp uses K as V then: met's test models run both ways). The
// proportional-rope `rope_freqs` [head_dim_full / 2] is optional and not
// listed.
// Encoders (the BERT family; no head, output_norm or output.weight): `bert`
// has token_embd, `token_types` [embd, token_type_count] (optional in
// llama.cpp, always written here), `position_embd` [embd, context_length],
// `token_embd_norm` weight and bias, and per layer attn_q/k/v and
// attn_output each with its bias, `attn_output_norm` and
// `layer_output_norm` (LayerNorm weight and bias, after each residual add),
// ffn_up and ffn_down with biases (a GELU FFN). `nomic-bert` has no
// position_embd (rotary positions), the fused `attn_qkv` [embd, 3 embd]
// without biases, and a SwiGLU FFN (ffn_up, ffn_gate, ffn_down, no biases).
// Threading: pure functions. Tested by tests/model/arch_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/hparams.h"

namespace met {

enum class Arch {
  kLlama,
  kMistral,
  kQwen2,
  kQwen3,
  kQwen3Moe,
  kMixtral,
  kGptOss,
  kQwen35,
  kQwen35Moe,
  kQwen3Next,
  kGraniteHybrid,
  kNemotronH,
  kGemma3,
  kGranite,
  kSmollm3,
  kOlmo2,
  kPhi3,
  kGemma2,
  kGemma4,
  kBert,
  kNomicBert,
};

enum class TensorRole {
  kMatrix,  // a weight matrix: quantizable
  kNorm,    // a norm scale vector: stays F32
  kBias,    // a bias vector: stays F32
  kRouter,  // an expert router (ffn_gate_inp, ffn_gate_inp_shexp): stays F32, as llama-quantize keeps it
  kConv,    // a short convolution's kernel (ssm_conv1d): stays F32, as llama-quantize keeps it
  kDecay,   // a gated delta or Mamba2 layer's ssm_a (-exp(A_log), negative): stays F32
  kSkip,    // a Mamba2 layer's ssm_d (the D skip, per head): stays F32
};

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> shape;
  TensorRole role;
};

std::optional<Arch> parse_arch(std::string_view name);
std::string_view arch_name(Arch arch);
// The `general.architecture` value files of this arch carry.
std::string_view gguf_arch_name(Arch arch);

// Every tensor of a model of `arch` with `hp`, in llama.cpp's order. Without
// `output.weight` when `tied_output` (the embedding is reused).
std::vector<TensorSpec> arch_tensors(Arch arch, const ModelHParams& hp, bool tied_output);
// Whether `arch` has gated delta layers (qwen35, qwen35moe, qwen3next).
bool arch_is_hybrid(Arch arch);
// Whether `arch` has Mamba2 layers (granitehybrid, nemotron_h).
bool arch_is_mamba_hybrid(Arch arch);
// Whether `arch` is an encoder (bert, nomic-bert): attention not causal, no head.
bool arch_is_encoder(Arch arch);
// An encoder's tensors (arch_tensors for one), in llama.cpp's converter's order.
std::vector<TensorSpec> encoder_tensors(Arch arch, const ModelHParams& hp);

}  // namespace met
