// ModelHParams: the hyper-parameters of a model, read from the GGUF metadata
// keys under `general.architecture` ("llama.block_count", …), with defaults
// where llama.cpp's conversion leaves a key out (rope base 10000, rope
// dimensions = head dimension). Errors name the key.
// Mixture of experts (llama.cpp's keys): `expert_count`, `expert_used_count`,
// `expert_feed_forward_length` (when absent: feed_forward_length /
// expert_used_count for qwen3moe, feed_forward_length otherwise, as
// llama.cpp's loaders default it) and `expert_shared_feed_forward_length`
// (0: no shared expert). llama.cpp's qwen3moe and llama (mixtral) loaders
// read neither `expert_weights_norm` nor `expert_gating_func`: they always
// use a softmax router with renormalised top-k weights, and so does met.
// gpt-oss requires `expert_feed_forward_length` and
// `attention.sliding_window`; `attention.sliding_window_pattern` (default 2)
// makes layer i windowed when i % pattern < pattern - 1 (0: every layer), and
// `rope.freq_base_swa` (default rope.freq_base) is the windowed layers' rope
// base, as llama.cpp's gpt-oss loader reads them.
// Hybrid recurrent models (qwen35, qwen35moe; llama.cpp's keys): the gated
// delta net sizes `ssm.conv_kernel`, `ssm.inner_size` (value dim),
// `ssm.state_size` (head dim of keys and values), `ssm.time_step_rank`
// (value heads) and `ssm.group_count` (key heads), all required;
// `nextn_predict_layers` MTP blocks appended after the trunk (block_count
// counts them, num_layers does not); trunk layer i is recurrent by the
// per-layer `attention.recurrent_layers` (an array of block_count bools or
// integers, or one value for all) or else when (i + 1) %
// `full_attention_interval` (default 4) != 0; `rope.dimension_sections`
// (required, 4 integers) are the interleaved M-RoPE sections: for text every
// position component is the token's position, so a rope pair in a t/h/w
// section rotates as NeoX rope does and one in none of them would not
// rotate at all; met refuses such sections by name. qwen35moe's shared
// expert is required (`expert_shared_feed_forward_length` defaults to
// feed_forward_length, as llama.cpp's loader does).
// Mamba2 hybrids (granitehybrid, nemotron_h; llama.cpp's keys): the same five
// `ssm.*` keys, all required, mean Mamba2's sizes: d_conv, d_inner, d_state,
// heads (time_step_rank) and groups; `feed_forward_length`,
// `attention.head_count` and `attention.head_count_kv` may be per-layer
// arrays (llama.cpp's get_key_or_arr). granitehybrid: layer i is Mamba2 when
// its head_count_kv is 0, else attention; every layer has its FFN; the
// optional `embedding_scale`, `residual_scale`, `attention.scale` and
// `logit_scale` (0: none) and `rope.scaling.finetuned` (default true: rope on
// the attention layers; Granite 4.0-H writes false). nemotron_h: layer i is
// Mamba2 when its head_count_kv and feed_forward_length are both 0, an FFN
// alone when its feed_forward_length is not 0, else attention; no rope.
// met keeps one KV head count and one FFN width: the non-zero entries of each
// array must agree (the error names the key). granitehybrid's MoE: experts
// feed_forward_length wide, `expert_shared_feed_forward_length` (default 0)
// an ungated shared expert, as llama.cpp's loader reads them; MoE nemotron_h
// is refused.
// Dense transformers (llama.cpp's loaders): granite reads granite's four
// scales; smollm3 leaves rope out of every fourth layer (no_rope_layer_step);
// gemma3 scales the embeddings by sqrt(embedding_length) and the queries by
// 1/sqrt(head_dim) (1/sqrt(embedding_length / head_count) for its 62-layer
// 27B), reads `final_logit_softcapping` (optional); gemma3 and olmo2 window
// their layers only where `attention.sliding_window` is present and > 0,
// with `sliding_window_pattern` (default 6, olmo2 4) and `rope.freq_base_swa`
// (default 10000, olmo2 rope.freq_base), those layers' rope unscaled.
// gemma2 (llama.cpp's loader): every other layer windowed (pattern 2) by
// `attention.sliding_window` (default 4096) with rope.freq_base_swa (default
// rope.freq_base, scaled as the others), `attn_logit_softcapping` (default
// 50) and `final_logit_softcapping` (default 30), gemma3's scales (its 27B
// has 46 layers).
// gemma4 (llama.cpp's gemma4 loader): layer i is windowed by
// `attention.sliding_window_pattern` (an array of block_count bools, or one
// for all; required) with `attention.sliding_window` (required); windowed
// layers have heads of `attention.key_length_swa` (required, = value_length_swa)
// and rope over `rope.dimension_count_swa` (default rope.dimension_count),
// the others of `attention.key_length` (= value_length); `head_count_kv` and
// `feed_forward_length` may be per-layer arrays; the last
// `attention.shared_kv_layers` (default 0) layers keep no KV and read that of
// layer n - shared - 2 (windowed) or n - shared - 1 (global), as llama.cpp's
// KV cache reuses them (met refuses a file where that layer is of the other
// kind); `embedding_length_per_layer_input` (required; 0: no per-layer
// embeddings); `rope.freq_base_swa` (default 10000, unscaled);
// `final_logit_softcapping` (optional); gemma3's sqrt(embd) embedding scale
// and a query scale of 1. head_dim and num_kv_heads are then the widest
// layer's and the most any layer has (the KV cache's rows: see
// forward_pass_gemma4.cc), feed_forward_length the widest layer's;
// layer_head_dim(i), layer_kv_heads(i) and layer_ffn_length(i) are each
// layer's own.
// Threading: plain value. Tested by tests/model/hparams_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/pooling.h"
#include "core/status.h"
#include "gguf/gguf_value.h"

namespace met {

enum class RopeScalingKind { kNone, kLinear, kYarn };

struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::kNone;
  float factor = 1.0f;
  uint32_t original_context_length = 0;
  float attn_factor = 1.0f;  // rope.scaling.attn_factor: cos and sin are scaled by it (phi3's LongRoPE)
};

// The recurrent layers' kind (the architecture decides).
enum class SsmKind : uint8_t { kNone, kGatedDelta, kMamba2 };

struct ModelHParams {
  std::string arch;
  uint32_t num_layers = 0;
  uint32_t embedding_length = 0;
  uint32_t feed_forward_length = 0;
  uint32_t num_heads = 0;
  uint32_t num_kv_heads = 0;
  uint32_t head_dim = 0;         // key_length; embedding_length / num_heads by default
  uint32_t rope_dims = 0;        // rope.dimension_count; head_dim by default
  uint32_t context_length = 0;   // the training context
  uint32_t vocab_size = 0;       // tokens in the vocab (0 if the file has none)
  float rms_norm_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  RopeScaling rope_scaling;
  uint32_t expert_count = 0;        // 0: a dense model
  uint32_t expert_used_count = 0;   // top-k per token
  uint32_t expert_feed_forward_length = 0;
  uint32_t expert_shared_feed_forward_length = 0;
  uint32_t sliding_window = 0;      // 0: no windowed layers
  uint32_t swa_pattern = 0;         // windowed layers: i % swa_pattern < swa_pattern - 1 (0: all)
  float rope_freq_base_swa = 10000.0f;
  // Hybrid recurrent models (0 elsewhere). Gated delta / Mamba2 meanings.
  SsmKind ssm_kind = SsmKind::kNone;
  uint32_t ssm_conv_kernel = 0;     // d_conv: taps of the short convolution
  uint32_t ssm_inner_size = 0;      // value dim = ssm_state_size * ssm_time_step_rank / d_inner
  uint32_t ssm_state_size = 0;      // head dim of the delta rule's keys and values / d_state
  uint32_t ssm_time_step_rank = 0;  // value heads / Mamba2 heads
  uint32_t ssm_group_count = 0;     // key heads (value head h reads key_head(h)) / B, C groups
  bool ssm_grouped_v_heads = false;  // qwen3next: a key head's value heads are adjacent (see key_head)
  uint32_t full_attention_interval = 0;  // as read (0 where the per-layer array decided, or none)
  uint32_t nextn_predict_layers = 0;     // MTP blocks after the trunk (blk.num_layers …)
  std::array<uint32_t, 4> rope_sections{};  // interleaved M-RoPE sections (all 0: none)
  std::vector<bool> recurrent_layers;       // per trunk layer (empty: no recurrent layers)
  std::vector<bool> ffn_only_layers;        // nemotron_h: per trunk layer, an FFN without a mixer
  // Granite's scales (0: none, as llama.cpp reads them) and whether the
  // attention layers rotate (granitehybrid's rope.scaling.finetuned).
  float embedding_scale = 0.0f;  // the token embeddings are multiplied by it
  float residual_scale = 0.0f;   // each block's output is, before the residual add
  float attention_scale = 0.0f;  // replaces 1/sqrt(head_dim) on the scores
  float logit_scale = 0.0f;      // the logits are divided by it
  bool uses_rope = true;
  uint32_t no_rope_layer_step = 0;   // smollm3: layer i has no rope when (i + 1) % step == 0
  float final_logit_softcap = 0.0f;  // gemma2/3: logits = cap * tanh(logits / cap) (0: none)
  float attn_logit_softcap = 0.0f;   // gemma2: scores = cap * tanh(scores / cap) (0: none)
  bool swa_rope_unscaled = false;    // gemma3, olmo2: windowed layers rope without the file's scaling
  // gemma4's per-layer shapes (see above; empty or 0 elsewhere).
  std::vector<bool> swa_layers;            // per layer: windowed (replaces swa_pattern)
  uint32_t head_dim_full = 0;              // attention.key_length: the global layers' heads
  uint32_t head_dim_swa = 0;               // attention.key_length_swa: the windowed layers' heads
  uint32_t rope_dims_swa = 0;              // rope.dimension_count_swa
  std::vector<uint32_t> kv_heads_per_layer;  // head_count_kv per layer (empty: num_kv_heads)
  std::vector<uint32_t> ffn_per_layer;       // feed_forward_length per layer (empty: feed_forward_length)
  uint32_t shared_kv_layers = 0;           // the last this many layers read an earlier layer's KV
  uint32_t embedding_length_per_layer = 0;  // per-layer embedding width (0: none)
  // Embedding models: the file's pooling ({arch}.pooling_type; nullopt: the
  // key is absent), whether attention is causal ({arch}.attention.causal;
  // false for the BERT family, whose rows read their whole sequence), the
  // LayerNorm epsilon of the BERT family ({arch}.attention.layer_norm_epsilon)
  // and its token types (tokenizer.ggml.token_type_count: rows of token_types).
  std::optional<Pooling> pooling;
  bool causal_attention = true;
  float layer_norm_eps = 1e-12f;
  uint32_t token_type_count = 0;

  bool is_moe() const { return expert_count > 0; }
  // Whether layer `i`'s attention rotates its queries and keys.
  bool layer_uses_rope(uint32_t i) const {
    return uses_rope && !(no_rope_layer_step > 0 && (i + 1) % no_rope_layer_step == 0);
  }
  // Whether layer `i` attends through the sliding window.
  bool layer_is_swa(uint32_t i) const {
    if (!swa_layers.empty()) return sliding_window > 0 && i < swa_layers.size() && swa_layers[i];
    return sliding_window > 0 && (swa_pattern == 0 || i % swa_pattern < swa_pattern - 1);
  }
  // Layer `i`'s head size, KV heads, rope dimensions and FFN width (gemma4's
  // differ by layer; every other arch's are the model's).
  uint32_t layer_head_dim(uint32_t i) const {
    if (head_dim_swa == 0) return head_dim;
    return layer_is_swa(i) ? head_dim_swa : head_dim_full;
  }
  uint32_t layer_kv_heads(uint32_t i) const {
    return i < kv_heads_per_layer.size() ? kv_heads_per_layer[i] : num_kv_heads;
  }
  uint32_t layer_rope_dims(uint32_t i) const {
    return rope_dims_swa != 0 && layer_is_swa(i) ? rope_dims_swa : rope_dims;
  }
  uint32_t layer_ffn_length(uint32_t i) const {
    return i < ffn_per_layer.size() ? ffn_per_layer[i] : feed_forward_length;
  }
  // Whether layer `i` keeps KV of its own (not one of the shared-KV layers).
  bool layer_has_kv(uint32_t i) const { return i + shared_kv_layers < num_layers; }
  // The layer whose KV layer `i` reads: itself, or for a shared-KV layer
  // the last layer with KV of its kind (llama.cpp's reuse rule).
  uint32_t kv_source_layer(uint32_t i) const {
    if (layer_has_kv(i)) return i;
    return num_layers - shared_kv_layers - (layer_is_swa(i) ? 2 : 1);
  }
  // Positions a windowed layer reads (0: the layer reads every position).
  uint32_t layer_window(uint32_t i) const { return layer_is_swa(i) ? sliding_window : 0; }

  uint32_t q_dim() const { return num_heads * head_dim; }
  uint32_t kv_dim() const { return num_kv_heads * head_dim; }

  // Whether trunk layer `i` is a recurrent layer (gated delta or Mamba2).
  bool layer_is_recurrent(uint32_t i) const { return i < recurrent_layers.size() && recurrent_layers[i]; }
  uint32_t num_recurrent_layers() const;
  bool is_hybrid() const { return num_recurrent_layers() > 0; }
  bool layer_is_ffn_only(uint32_t i) const { return i < ffn_only_layers.size() && ffn_only_layers[i]; }
  // Trunk layers that keep KV: neither recurrent nor an FFN alone.
  uint32_t num_attention_layers() const;
  // Mamba2: values per head (d_inner / heads).
  uint32_t mamba_head_dim() const { return ssm_time_step_rank == 0 ? 0 : ssm_inner_size / ssm_time_step_rank; }
  // Mamba2's in_proj rows: z (d_inner), x B C (conv_dim) and dt (heads).
  uint32_t mamba_in_proj_dim() const { return ssm_inner_size + conv_dim() + ssm_time_step_rank; }
  // The key head gated delta value head `h` reads: h % key heads (qwen35's
  // tiled order), or h / (value heads per key head) (qwen3next's grouped order).
  uint32_t key_head(uint32_t h) const {
    return ssm_grouped_v_heads ? h / (ssm_time_step_rank / ssm_group_count) : h % ssm_group_count;
  }
  // Gated delta sizes: keys (q and k each) and values of all heads.
  uint32_t ssm_key_dim() const { return ssm_group_count * ssm_state_size; }
  uint32_t ssm_value_dim() const { return ssm_inner_size; }
  // Channels of the short convolution: q, k and v (Mamba2: x, B and C).
  uint32_t conv_dim() const { return 2 * ssm_group_count * ssm_state_size + ssm_inner_size; }
  // Floats of one recurrent layer's state for one sequence: the last
  // d_conv - 1 inputs of every channel, and a state_size² matrix per value
  // head (Mamba2: d_state per value of d_inner).
  uint64_t conv_state_floats() const {
    return ssm_conv_kernel == 0 ? 0 : uint64_t{ssm_conv_kernel - 1} * conv_dim();
  }
  uint64_t ssm_state_floats() const {
    if (ssm_kind == SsmKind::kMamba2) return uint64_t{ssm_inner_size} * ssm_state_size;
    return uint64_t{ssm_time_step_rank} * ssm_state_size * ssm_state_size;
  }
  // Bytes of one sequence's state over every recurrent layer (float32).
  uint64_t recurrent_state_bytes() const {
    return uint64_t{num_recurrent_layers()} * (conv_state_floats() + ssm_state_floats()) * sizeof(float);
  }
};

// Reads and validates the hyper-parameters (heads divide evenly, counts > 0).
Result<ModelHParams> read_hparams(const GgufMetadata& metadata);

std::string_view rope_scaling_name(RopeScalingKind kind);

}  // namespace met
