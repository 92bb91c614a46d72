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
// Threading: plain value. Tested by tests/model/hparams_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "gguf/gguf_value.h"

namespace met {

enum class RopeScalingKind { kNone, kLinear, kYarn };

struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::kNone;
  float factor = 1.0f;
  uint32_t original_context_length = 0;
};

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

  bool is_moe() const { return expert_count > 0; }
  // Whether layer `i` attends through the sliding window.
  bool layer_is_swa(uint32_t i) const {
    return sliding_window > 0 && (swa_pattern == 0 || i % swa_pattern < swa_pattern - 1);
  }
  // Positions a windowed layer reads (0: the layer reads every position).
  uint32_t layer_window(uint32_t i) const { return layer_is_swa(i) ? sliding_window : 0; }

  uint32_t q_dim() const { return num_heads * head_dim; }
  uint32_t kv_dim() const { return num_kv_heads * head_dim; }
};

// Reads and validates the hyper-parameters (heads divide evenly, counts > 0).
Result<ModelHParams> read_hparams(const GgufMetadata& metadata);

std::string_view rope_scaling_name(RopeScalingKind kind);

}  // namespace met
