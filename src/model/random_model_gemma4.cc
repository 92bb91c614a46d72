// gemma4's make-model parts. Tested by tests/model/dense_archs_test.cc.
#include "model/random_model_gemma4.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace met {

void apply_gemma4_preset(std::string_view name, RandomModelSpec& s) {
  s.sliding_window = 512;
  s.swa_pattern = 4;  // layers 3, 7, 11, … are global
  s.final_logit_softcap = 30.0f;
  s.shared_kv_layers = name == "medium" ? 8 : 4;
  s.per_layer_embd = name == "medium" ? 256 : name == "small" ? 128 : 64;
}

Status validate_gemma4_spec(const RandomModelSpec& s) {
  if (s.sliding_window == 0) return invalid_argument("gemma4 needs --sliding-window > 0");
  ModelHParams hp;
  set_gemma4_hparams(s, hp);
  if (std::find(hp.swa_layers.begin(), hp.swa_layers.end(), true) == hp.swa_layers.end()) {
    // llama.cpp's gemma4 KV cache asserts a windowed layer (GGML_ASSERT(is_swa_any())).
    return invalid_argument("gemma4: --swa-pattern {} leaves no windowed layer", s.swa_pattern);
  }
  for (const uint32_t kv : hp.kv_heads_per_layer) {
    if (kv == 0 || s.num_heads % kv != 0 || hp.num_kv_heads % kv != 0) {
      return invalid_argument("gemma4: KV heads {} (global {}) must divide --heads {} and each other",
                              s.num_kv_heads, hp.layer_kv_heads(s.num_layers - 1), s.num_heads);
    }
  }
  if (s.shared_kv_layers == 0) return ok_status();
  if (s.shared_kv_layers + 2 > s.num_layers) {
    return invalid_argument("gemma4: {} shared-KV layers leave fewer than 2 of {} with KV", s.shared_kv_layers,
                            s.num_layers);
  }
  for (uint32_t i = s.num_layers - s.shared_kv_layers; i < s.num_layers; ++i) {
    if (hp.layer_is_swa(hp.kv_source_layer(i)) != hp.layer_is_swa(i)) {
      return invalid_argument("gemma4: with {} layers, pattern {} and {} shared-KV layers, layer {} would read a "
                              "layer of the other kind",
                              s.num_layers, s.swa_pattern, s.shared_kv_layers, i);
    }
  }
  return ok_status();
}

void set_gemma4_hparams(const RandomModelSpec& s, ModelHParams& hp) {
  hp.arch = "gemma4";
  hp.num_layers = s.num_layers;
  hp.num_heads = s.num_heads;
  hp.embedding_length = s.embedding_length;
  hp.feed_forward_length = s.feed_forward_length;
  hp.head_dim_swa = s.head_dim != 0 ? s.head_dim : s.embedding_length / std::max(1u, s.num_heads);
  hp.head_dim_full = s.global_head_dim != 0 ? s.global_head_dim : 2 * hp.head_dim_swa;
  hp.head_dim = std::max(hp.head_dim_full, hp.head_dim_swa);
  hp.rope_dims = hp.head_dim_full;
  hp.rope_dims_swa = hp.head_dim_swa;
  hp.sliding_window = s.sliding_window;
  hp.swa_layers.resize(s.num_layers);
  const uint32_t global_kv = s.global_kv_heads != 0 ? s.global_kv_heads : std::max(1u, s.num_kv_heads / 2);
  hp.kv_heads_per_layer.resize(s.num_layers);
  for (uint32_t i = 0; i < s.num_layers; ++i) {
    hp.swa_layers[i] = s.swa_pattern == 0 || i % s.swa_pattern < s.swa_pattern - 1;
    hp.kv_heads_per_layer[i] = hp.swa_layers[i] ? s.num_kv_heads : global_kv;
  }
  hp.num_kv_heads = std::max(s.num_kv_heads, global_kv);
  hp.shared_kv_layers = s.shared_kv_layers;
  hp.embedding_length_per_layer = s.per_layer_embd;
  hp.rope_freq_base = 1000000.0f;
  hp.rope_freq_base_swa = 10000.0f;
  hp.swa_rope_unscaled = true;
  hp.rms_norm_eps = 1e-6f;
  hp.final_logit_softcap = s.final_logit_softcap;
  hp.embedding_scale = std::sqrt(static_cast<float>(hp.embedding_length));
  hp.attention_scale = 1.0f;
}

void write_gemma4_hparams(const ModelHParams& hp, GgufMetadata& md) {
  auto key = [](std::string_view suffix) { return fmt::format("gemma4.{}", suffix); };
  md.set(key("attention.key_length"), hp.head_dim_full);
  md.set(key("attention.value_length"), hp.head_dim_full);
  md.set(key("attention.key_length_swa"), hp.head_dim_swa);
  md.set(key("attention.value_length_swa"), hp.head_dim_swa);
  md.set(key("rope.dimension_count_swa"), hp.rope_dims_swa);
  md.set(key("attention.head_count_kv"), GgufValue::array(std::vector<uint32_t>(hp.kv_heads_per_layer)));
  md.set(key("attention.sliding_window"), hp.sliding_window);
  md.set(key("attention.sliding_window_pattern"), GgufValue(GgufArray{GgufType::kBool, hp.swa_layers}));
  md.set(key("rope.freq_base_swa"), hp.rope_freq_base_swa);
  md.set(key("attention.shared_kv_layers"), hp.shared_kv_layers);
  md.set(key("embedding_length_per_layer_input"), hp.embedding_length_per_layer);
  if (hp.final_logit_softcap != 0.0f) md.set(key("final_logit_softcapping"), hp.final_logit_softcap);
}

bool gemma4_has_global_layer(const ModelHParams& hp) {
  return std::find(hp.swa_layers.begin(), hp.swa_layers.end(), false) != hp.swa_layers.end();
}

std::vector<float> gemma4_rope_freqs(const ModelHParams& hp) {
  const uint32_t pairs = hp.head_dim_full / 2, rotated = std::max(1u, pairs / 4);
  std::vector<float> f(pairs, 1e30f);
  std::fill(f.begin(), f.begin() + rotated, 1.0f);
  return f;
}

}  // namespace met
