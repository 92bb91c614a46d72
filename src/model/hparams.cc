// Hyper-parameter reading. Tested by tests/model/hparams_test.cc.
#include "model/hparams.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/short_conv.h"

namespace met {
namespace {

// Architectures with gated delta layers, whose keys read_hybrid reads.
bool is_hybrid_arch(std::string_view arch) { return arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next"; }
// The gated delta archs whose FFN is routed experts with a required shared expert.
bool is_hybrid_moe_arch(std::string_view arch) { return arch == "qwen35moe" || arch == "qwen3next"; }
// Architectures with Mamba2 layers, whose keys read_mamba_hybrid reads.
bool is_mamba_arch(std::string_view arch) { return arch == "granitehybrid" || arch == "nemotron_h"; }

Result<uint32_t> arch_u32(const GgufMetadata& md, std::string_view suffix) {
  MET_ASSIGN_OR_RETURN(std::string key, md.arch_key(suffix));
  return md.get_u32(key);
}

Result<uint32_t> arch_u32_or(const GgufMetadata& md, std::string_view suffix, uint32_t fallback) {
  MET_ASSIGN_OR_RETURN(std::string key, md.arch_key(suffix));
  return md.get_u32_or(key, fallback);
}

Result<float> arch_f32_or(const GgufMetadata& md, std::string_view suffix, float fallback) {
  MET_ASSIGN_OR_RETURN(std::string key, md.arch_key(suffix));
  return md.get_f32_or(key, fallback);
}

Result<RopeScaling> read_rope_scaling(const GgufMetadata& md) {
  RopeScaling rs;
  MET_ASSIGN_OR_RETURN(std::string type_key, md.arch_key("rope.scaling.type"));
  MET_ASSIGN_OR_RETURN(std::string type, md.get_string_or(type_key, "none"));
  MET_ASSIGN_OR_RETURN(rs.factor, arch_f32_or(md, "rope.scaling.factor", 1.0f));
  MET_ASSIGN_OR_RETURN(rs.original_context_length,
                       arch_u32_or(md, "rope.scaling.original_context_length", 0));
  MET_ASSIGN_OR_RETURN(rs.attn_factor, arch_f32_or(md, "rope.scaling.attn_factor", 1.0f));
  if (type == "none") {
    rs.kind = RopeScalingKind::kNone;
  } else if (type == "linear") {
    rs.kind = RopeScalingKind::kLinear;
  } else if (type == "yarn") {
    rs.kind = RopeScalingKind::kYarn;
  } else {
    return unimplemented("metadata key '{}': rope scaling '{}' is not supported", type_key, type);
  }
  if (!(rs.factor > 0.0f)) {
    return invalid_argument("rope scaling factor {} must be positive", rs.factor);
  }
  return rs;
}

Status validate(const ModelHParams& hp) {
  if (hp.num_layers == 0) return invalid_argument("{}.block_count is 0", hp.arch);
  if (hp.embedding_length == 0) return invalid_argument("{}.embedding_length is 0", hp.arch);
  if (hp.num_heads == 0) return invalid_argument("{}.attention.head_count is 0", hp.arch);
  if (hp.num_kv_heads == 0 || hp.num_heads % hp.num_kv_heads != 0) {
    return invalid_argument("{}.attention.head_count_kv {} does not divide head_count {}", hp.arch,
                            hp.num_kv_heads, hp.num_heads);
  }
  if (hp.head_dim == 0) return invalid_argument("{}: head dimension is 0", hp.arch);
  if (hp.rope_dims > hp.head_dim || hp.rope_dims % 2 != 0) {
    return invalid_argument("{}.rope.dimension_count {} must be even and at most the head dimension {}",
                            hp.arch, hp.rope_dims, hp.head_dim);
  }
  if (hp.expert_used_count > hp.expert_count || (hp.expert_count > 0) != (hp.expert_used_count > 0)) {
    return invalid_argument("{}.expert_used_count {} must be in [1, expert_count {}]", hp.arch,
                            hp.expert_used_count, hp.expert_count);
  }
  if (hp.is_moe() && hp.expert_feed_forward_length == 0) {
    return invalid_argument("{}.expert_feed_forward_length is 0", hp.arch);
  }
  return ok_status();
}

Status read_experts(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(hp.expert_count, arch_u32_or(md, "expert_count", 0));
  MET_ASSIGN_OR_RETURN(hp.expert_used_count, arch_u32_or(md, "expert_used_count", 0));
  if (hp.expert_count == 0 && hp.arch == "qwen3next") {
    return invalid_argument("{}.expert_count is 0 (llama.cpp refuses a qwen3next model without experts)", hp.arch);
  }
  if (hp.expert_count == 0) return ok_status();
  if (hp.arch == "llama") {
    // llama.cpp's llama loader (mixtral) sizes experts by feed_forward_length
    // and has no shared expert; it reads neither key.
    hp.expert_feed_forward_length = hp.feed_forward_length;
    return ok_status();
  }
  if (hp.arch == "gpt-oss") {
    MET_ASSIGN_OR_RETURN(hp.expert_feed_forward_length, arch_u32(md, "expert_feed_forward_length"));
    return ok_status();
  }
  if (hp.arch == "granitehybrid") {
    // llama.cpp's granite-hybrid loader: experts feed_forward_length wide, an
    // optional shared expert (ungated).
    hp.expert_feed_forward_length = hp.feed_forward_length;
    MET_ASSIGN_OR_RETURN(hp.expert_shared_feed_forward_length,
                         arch_u32_or(md, "expert_shared_feed_forward_length", 0));
    return ok_status();
  }
  if (is_hybrid_moe_arch(hp.arch)) {
    // llama.cpp's qwen35moe and qwen3next loaders: the shared expert is
    // required, as wide as feed_forward_length unless its key says otherwise.
    MET_ASSIGN_OR_RETURN(hp.expert_shared_feed_forward_length,
                         arch_u32_or(md, "expert_shared_feed_forward_length", hp.feed_forward_length));
    if (hp.expert_shared_feed_forward_length == 0) {
      return invalid_argument("{0}.expert_shared_feed_forward_length is 0 ({0} needs its shared expert)", hp.arch);
    }
  }
  const uint32_t ff_default = hp.expert_used_count == 0 ? 0 : hp.feed_forward_length / hp.expert_used_count;
  MET_ASSIGN_OR_RETURN(hp.expert_feed_forward_length, arch_u32_or(md, "expert_feed_forward_length", ff_default));
  if (is_hybrid_moe_arch(hp.arch)) return ok_status();
  MET_ASSIGN_OR_RETURN(hp.expert_shared_feed_forward_length,
                       arch_u32_or(md, "expert_shared_feed_forward_length", 0));
  return ok_status();
}

// gemma3/olmo2: windowed layers only where the file has a window.
Status read_optional_window(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(hp.sliding_window, arch_u32_or(md, "attention.sliding_window", 0));
  if (hp.sliding_window == 0) return ok_status();
  const bool gemma = hp.arch == "gemma3";
  MET_ASSIGN_OR_RETURN(hp.swa_pattern, arch_u32_or(md, "attention.sliding_window_pattern", gemma ? 6 : 4));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base_swa,
                       arch_f32_or(md, "rope.freq_base_swa", gemma ? 10000.0f : hp.rope_freq_base));
  hp.swa_rope_unscaled = true;
  return ok_status();
}

// gemma2: windowed layers always, soft-capped scores and logits.
Status read_gemma2_window(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(hp.sliding_window, arch_u32_or(md, "attention.sliding_window", 4096));
  MET_ASSIGN_OR_RETURN(hp.swa_pattern, arch_u32_or(md, "attention.sliding_window_pattern", 2));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base_swa, arch_f32_or(md, "rope.freq_base_swa", hp.rope_freq_base));
  MET_ASSIGN_OR_RETURN(hp.attn_logit_softcap, arch_f32_or(md, "attn_logit_softcapping", 50.0f));
  MET_ASSIGN_OR_RETURN(hp.final_logit_softcap, arch_f32_or(md, "final_logit_softcapping", 30.0f));
  if (hp.attn_logit_softcap < 0.0f || hp.final_logit_softcap < 0.0f) {
    return invalid_argument("{}: soft-capping values must not be negative", hp.arch);
  }
  return ok_status();
}

// The windowed layers of gpt-oss (always), gemma2, gemma3 and olmo2.
Status read_sliding_window(const GgufMetadata& md, ModelHParams& hp) {
  hp.rope_freq_base_swa = hp.rope_freq_base;
  if (hp.arch == "gemma2") return read_gemma2_window(md, hp);
  if (hp.arch == "gemma3" || hp.arch == "olmo2") return read_optional_window(md, hp);
  if (hp.arch != "gpt-oss") return ok_status();
  MET_ASSIGN_OR_RETURN(hp.sliding_window, arch_u32(md, "attention.sliding_window"));
  MET_ASSIGN_OR_RETURN(hp.swa_pattern, arch_u32_or(md, "attention.sliding_window_pattern", 2));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base_swa, arch_f32_or(md, "rope.freq_base_swa", hp.rope_freq_base));
  if (hp.sliding_window == 0) return invalid_argument("{}.attention.sliding_window is 0", hp.arch);
  return ok_status();
}

// A per-layer flag: an array of `n` bools or integers (non-zero: set), or one
// bool or integer for every layer.
Result<std::vector<bool>> read_layer_flags(const GgufMetadata& md, const std::string& key, uint32_t n) {
  const GgufValue* value = md.find(key);
  if (value == nullptr) return not_found("missing metadata key '{}'", key);
  std::vector<bool> flags;
  if (const auto* b = std::get_if<bool>(&value->storage())) return std::vector<bool>(n, *b);
  if (std::holds_alternative<GgufArray>(value->storage())) {
    const GgufArray& array = std::get<GgufArray>(value->storage());
    if (const auto* bools = std::get_if<std::vector<bool>>(&array.items)) {
      flags = *bools;
    } else {
      MET_ASSIGN_OR_RETURN(std::vector<int64_t> ints, md.get_int_array(key));
      for (int64_t v : ints) flags.push_back(v != 0);
    }
    if (flags.size() != n) {
      return invalid_argument("metadata key '{}' has {} entries, expected block_count {}", key, flags.size(), n);
    }
    return flags;
  }
  MET_ASSIGN_OR_RETURN(uint32_t v, md.get_u32(key));
  return std::vector<bool>(n, v != 0);
}

// Four integers, or one for all four (llama.cpp's get_key_or_arr).
Result<std::array<uint32_t, 4>> read_u32x4(const GgufMetadata& md, const std::string& key) {
  std::array<uint32_t, 4> out{};
  const GgufValue* value = md.find(key);
  if (value != nullptr && !std::holds_alternative<GgufArray>(value->storage())) {
    MET_ASSIGN_OR_RETURN(uint32_t v, md.get_u32(key));
    out.fill(v);
    return out;
  }
  MET_ASSIGN_OR_RETURN(std::vector<int64_t> ints, md.get_int_array(key));
  if (ints.size() != 4) return invalid_argument("metadata key '{}' has {} entries, expected 4", key, ints.size());
  for (size_t i = 0; i < 4; ++i) {
    if (ints[i] < 0 || ints[i] > UINT32_MAX) return invalid_argument("metadata key '{}' has {}", key, ints[i]);
    out[i] = static_cast<uint32_t>(ints[i]);
  }
  return out;
}

// ggml's interleaved M-RoPE (IMROPE) gives rope pair i the sector i % (sum
// of sections); sector s takes the t, h or w position when s % 3 is 0, 1 or
// 2 and s < 3 x that section, else the e position (0 for text).
bool imrope_pair_rotates(const std::array<uint32_t, 4>& sec, uint32_t pair) {
  const uint32_t sector = pair % (sec[0] + sec[1] + sec[2] + sec[3]);
  return sector < 3 * sec[sector % 3];
}

Status validate_rope_sections(const ModelHParams& hp) {
  if (hp.arch == "qwen3next") return ok_status();  // plain NeoX rope, no sections
  const auto& s = hp.rope_sections;
  const std::string key = hp.arch + ".rope.dimension_sections";
  const uint32_t total = s[0] + s[1] + s[2] + s[3];
  if (s[0] + s[1] + s[2] == 0 || total > hp.head_dim) {
    return invalid_argument("{} [{}] must have a t, h or w section and sum to at most the head dimension {}", key,
                            fmt::join(s, ", "), hp.head_dim);
  }
  for (uint32_t pair = 0; pair < hp.rope_dims / 2; ++pair) {
    if (!imrope_pair_rotates(s, pair)) {
      return unimplemented("{} [{}] leaves rope pair {} of {}.rope.dimension_count {} unrotated; met runs only "
                           "sections that rotate every pair",
                           key, fmt::join(s, ", "), pair, hp.arch, hp.rope_dims);
    }
  }
  return ok_status();
}

Status validate_ssm(const ModelHParams& hp) {
  const std::string& a = hp.arch;
  if (hp.ssm_conv_kernel == 0) return invalid_argument("{}.ssm.conv_kernel is 0", a);
  if (hp.ssm_state_size == 0) return invalid_argument("{}.ssm.state_size is 0", a);
  if (hp.ssm_group_count == 0) return invalid_argument("{}.ssm.group_count is 0", a);
  if (hp.ssm_time_step_rank == 0 || hp.ssm_time_step_rank % hp.ssm_group_count != 0) {
    return invalid_argument("{}.ssm.time_step_rank {} must be a positive multiple of ssm.group_count {}", a,
                            hp.ssm_time_step_rank, hp.ssm_group_count);
  }
  if (hp.ssm_inner_size != hp.ssm_state_size * hp.ssm_time_step_rank) {
    return invalid_argument("{}.ssm.inner_size {} must be ssm.state_size {} x ssm.time_step_rank {}", a,
                            hp.ssm_inner_size, hp.ssm_state_size, hp.ssm_time_step_rank);
  }
  return validate_rope_sections(hp);
}

// The trunk's recurrent layers: the per-layer array if present, else every
// layer but each full_attention_interval-th.
Status read_recurrent_layers(const GgufMetadata& md, uint32_t block_count, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(std::string key, md.arch_key("attention.recurrent_layers"));
  if (md.contains(key)) {
    MET_ASSIGN_OR_RETURN(hp.recurrent_layers, read_layer_flags(md, key, block_count));
    hp.recurrent_layers.resize(hp.num_layers);  // MTP blocks are attention blocks
    return ok_status();
  }
  MET_ASSIGN_OR_RETURN(hp.full_attention_interval, arch_u32_or(md, "full_attention_interval", 4));
  if (hp.full_attention_interval == 0) return invalid_argument("{}.full_attention_interval is 0", hp.arch);
  hp.recurrent_layers.resize(hp.num_layers);
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    hp.recurrent_layers[i] = (i + 1) % hp.full_attention_interval != 0;
  }
  return ok_status();
}

// MTP blocks (nextn_predict_layers), the last of block_count: taken off
// num_layers.
Status take_nextn_layers(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(hp.nextn_predict_layers, arch_u32_or(md, "nextn_predict_layers", 0));
  if (hp.nextn_predict_layers >= hp.num_layers) {
    return invalid_argument("{}.nextn_predict_layers {} must be below block_count {}", hp.arch,
                            hp.nextn_predict_layers, hp.num_layers);
  }
  hp.num_layers -= hp.nextn_predict_layers;
  return ok_status();
}

// qwen35/qwen35moe/qwen3next: the gated delta sizes, MTP blocks (taken off
// num_layers), the recurrent layers and (not qwen3next) the rope sections.
Status read_hybrid(const GgufMetadata& md, ModelHParams& hp) {
  if (!is_hybrid_arch(hp.arch)) return ok_status();
  hp.ssm_kind = SsmKind::kGatedDelta;
  MET_ASSIGN_OR_RETURN(hp.ssm_conv_kernel, arch_u32(md, "ssm.conv_kernel"));
  MET_ASSIGN_OR_RETURN(hp.ssm_inner_size, arch_u32(md, "ssm.inner_size"));
  MET_ASSIGN_OR_RETURN(hp.ssm_state_size, arch_u32(md, "ssm.state_size"));
  MET_ASSIGN_OR_RETURN(hp.ssm_time_step_rank, arch_u32(md, "ssm.time_step_rank"));
  MET_ASSIGN_OR_RETURN(hp.ssm_group_count, arch_u32(md, "ssm.group_count"));
  const uint32_t block_count = hp.num_layers;
  MET_RETURN_IF_ERROR(take_nextn_layers(md, hp));
  MET_RETURN_IF_ERROR(read_recurrent_layers(md, block_count, hp));
  if (hp.arch == "qwen3next") {
    hp.ssm_grouped_v_heads = true;  // llama.cpp's qwen3next graph: q and k repeat-interleaved
    return ok_status();
  }
  MET_ASSIGN_OR_RETURN(std::string sections_key, md.arch_key("rope.dimension_sections"));
  MET_ASSIGN_OR_RETURN(hp.rope_sections, read_u32x4(md, sections_key));
  return ok_status();
}

// A per-layer count: an array of `n` integers, or one integer for every
// layer (llama.cpp's get_key_or_arr); `fallback` for every layer when absent.
Result<std::vector<uint32_t>> read_layer_u32s(const GgufMetadata& md, const std::string& key, uint32_t n,
                                              uint32_t fallback) {
  const GgufValue* value = md.find(key);
  if (value == nullptr) return std::vector<uint32_t>(n, fallback);
  if (!std::holds_alternative<GgufArray>(value->storage())) {
    MET_ASSIGN_OR_RETURN(uint32_t v, md.get_u32(key));
    return std::vector<uint32_t>(n, v);
  }
  MET_ASSIGN_OR_RETURN(std::vector<int64_t> ints, md.get_int_array(key));
  if (ints.size() != n) {
    return invalid_argument("metadata key '{}' has {} entries, expected block_count {}", key, ints.size(), n);
  }
  std::vector<uint32_t> out;
  for (int64_t v : ints) {
    if (v < 0 || v > UINT32_MAX) return invalid_argument("metadata key '{}' has {}", key, v);
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

// The one non-zero value of a per-layer array (0 when all are 0); met keeps
// one KV head count and one FFN width for every layer.
Result<uint32_t> common_nonzero(const std::vector<uint32_t>& values, const std::string& key) {
  uint32_t common = 0;
  for (uint32_t v : values) {
    if (v == 0 || v == common) continue;
    if (common != 0) {
      return unimplemented("metadata key '{}' has layers of {} and of {}: met runs one value for every layer",
                           key, common, v);
    }
    common = v;
  }
  return common;
}

// granitehybrid's scales and rope switch (llama.cpp's granite-hybrid loader).
Status read_granite_scales(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(hp.embedding_scale, arch_f32_or(md, "embedding_scale", 0.0f));
  MET_ASSIGN_OR_RETURN(hp.residual_scale, arch_f32_or(md, "residual_scale", 0.0f));
  MET_ASSIGN_OR_RETURN(hp.attention_scale, arch_f32_or(md, "attention.scale", 0.0f));
  MET_ASSIGN_OR_RETURN(hp.logit_scale, arch_f32_or(md, "logit_scale", 0.0f));
  MET_ASSIGN_OR_RETURN(std::string rope_key, md.arch_key("rope.scaling.finetuned"));
  MET_ASSIGN_OR_RETURN(hp.uses_rope, md.get_bool_or(rope_key, true));
  return ok_status();
}

Status read_gemma4(const GgufMetadata& md, ModelHParams& hp);

// What llama.cpp's granite, smollm3 and gemma3 loaders set beyond the
// common keys (see hparams.h).
Status read_dense_extras(const GgufMetadata& md, ModelHParams& hp) {
  if (hp.arch == "granite") return read_granite_scales(md, hp);
  if (hp.arch == "smollm3") {
    hp.no_rope_layer_step = 4;
    return ok_status();
  }
  if (hp.arch == "gemma4") return hp.num_layers == 0 || hp.num_heads == 0 ? ok_status() : read_gemma4(md, hp);
  const bool gemma2 = hp.arch == "gemma2";
  if ((hp.arch != "gemma3" && !gemma2) || hp.num_heads == 0 || hp.head_dim == 0) {
    return ok_status();  // validate() names the zeros
  }
  if (!gemma2) {
    MET_ASSIGN_OR_RETURN(hp.final_logit_softcap, arch_f32_or(md, "final_logit_softcapping", 0.0f));
  }
  hp.embedding_scale = std::sqrt(static_cast<float>(hp.embedding_length));
  const uint32_t big = gemma2 ? 46 : 62;  // the 27B's layers: its queries scale by 1/sqrt(embd / heads)
  const uint32_t scale_dim = hp.num_layers == big ? hp.embedding_length / hp.num_heads : hp.head_dim;
  hp.attention_scale = 1.0f / std::sqrt(static_cast<float>(scale_dim));
  return ok_status();
}

// gemma4's per-layer head_count_kv and feed_forward_length (arrays, or one
// value for all): num_kv_heads and feed_forward_length become the largest.
Status read_gemma4_layer_sizes(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(std::string kv_key, md.arch_key("attention.head_count_kv"));
  MET_ASSIGN_OR_RETURN(std::string ff_key, md.arch_key("feed_forward_length"));
  MET_ASSIGN_OR_RETURN(hp.kv_heads_per_layer, read_layer_u32s(md, kv_key, hp.num_layers, hp.num_heads));
  MET_ASSIGN_OR_RETURN(hp.ffn_per_layer, read_layer_u32s(md, ff_key, hp.num_layers, 0));
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    const uint32_t kv = hp.kv_heads_per_layer[i];
    if (kv == 0 || hp.num_heads % kv != 0) {
      return invalid_argument("{} of layer {} is {}: it must divide head_count {}", kv_key, i, kv, hp.num_heads);
    }
    if (hp.ffn_per_layer[i] == 0) return invalid_argument("{} of layer {} is 0", ff_key, i);
    hp.num_kv_heads = std::max(hp.num_kv_heads, kv);
    hp.feed_forward_length = std::max(hp.feed_forward_length, hp.ffn_per_layer[i]);
  }
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    if (hp.num_kv_heads % hp.kv_heads_per_layer[i] != 0) {  // the cache repeats a layer's heads to its width
      return unimplemented("{}: layer {}'s {} KV heads do not divide the {} of another layer", kv_key, i,
                           hp.kv_heads_per_layer[i], hp.num_kv_heads);
    }
  }
  return ok_status();
}

// gemma4's head sizes by kind: key_length (global layers), key_length_swa
// (windowed ones), each equal to its value_length; head_dim becomes the wider.
Status read_gemma4_heads(const GgufMetadata& md, ModelHParams& hp) {
  const std::string& a = hp.arch;
  const uint32_t head_default = hp.num_heads == 0 ? 0 : hp.embedding_length / hp.num_heads;
  hp.head_dim_full = hp.head_dim;
  MET_ASSIGN_OR_RETURN(const uint32_t v_full, arch_u32_or(md, "attention.value_length", head_default));
  MET_ASSIGN_OR_RETURN(hp.head_dim_swa, arch_u32(md, "attention.key_length_swa"));
  MET_ASSIGN_OR_RETURN(const uint32_t v_swa, arch_u32(md, "attention.value_length_swa"));
  if (v_full != hp.head_dim_full || v_swa != hp.head_dim_swa) {
    return invalid_argument("{0}.attention.value_length {1} and value_length_swa {2} must equal key_length {3} and "
                            "key_length_swa {4} (as llama.cpp requires)",
                            a, v_full, v_swa, hp.head_dim_full, hp.head_dim_swa);
  }
  if (hp.head_dim_swa == 0) return invalid_argument("{}.attention.key_length_swa is 0", a);
  MET_ASSIGN_OR_RETURN(hp.rope_dims_swa, arch_u32_or(md, "rope.dimension_count_swa", hp.rope_dims));
  if (hp.rope_dims_swa > hp.head_dim_swa || hp.rope_dims_swa % 2 != 0) {
    return invalid_argument("{}.rope.dimension_count_swa {} must be even and at most key_length_swa {}", a,
                            hp.rope_dims_swa, hp.head_dim_swa);
  }
  if (hp.rope_dims > hp.head_dim_full) {
    return invalid_argument("{}.rope.dimension_count {} is past key_length {}", a, hp.rope_dims, hp.head_dim_full);
  }
  hp.head_dim = std::max(hp.head_dim_full, hp.head_dim_swa);
  return ok_status();
}

// gemma4's shared-KV layers read the KV of llama.cpp's choice of layer,
// which must be of their kind (its heads are theirs).
Status validate_shared_kv(const ModelHParams& hp) {
  if (hp.shared_kv_layers == 0) return ok_status();
  if (hp.shared_kv_layers + 2 > hp.num_layers) {
    return invalid_argument("{}.attention.shared_kv_layers {} leaves fewer than 2 of {} layers with KV", hp.arch,
                            hp.shared_kv_layers, hp.num_layers);
  }
  for (uint32_t i = hp.num_layers - hp.shared_kv_layers; i < hp.num_layers; ++i) {
    const uint32_t from = hp.kv_source_layer(i);
    if (hp.layer_is_swa(from) != hp.layer_is_swa(i) || hp.layer_kv_heads(from) != hp.layer_kv_heads(i)) {
      return unimplemented("{}.attention.shared_kv_layers: layer {} would read the KV of layer {}, whose window "
                           "or KV heads differ",
                           hp.arch, i, from);
    }
  }
  return ok_status();
}

// gemma4 (llama.cpp's gemma4 loader; see hparams.h).
Status read_gemma4(const GgufMetadata& md, ModelHParams& hp) {
  MET_ASSIGN_OR_RETURN(hp.sliding_window, arch_u32(md, "attention.sliding_window"));
  MET_ASSIGN_OR_RETURN(std::string pattern_key, md.arch_key("attention.sliding_window_pattern"));
  MET_ASSIGN_OR_RETURN(hp.swa_layers, read_layer_flags(md, pattern_key, hp.num_layers));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base_swa, arch_f32_or(md, "rope.freq_base_swa", 10000.0f));
  hp.swa_rope_unscaled = true;  // llama.cpp's rope_freq_scale_train_swa: 1
  MET_ASSIGN_OR_RETURN(hp.final_logit_softcap, arch_f32_or(md, "final_logit_softcapping", 0.0f));
  MET_ASSIGN_OR_RETURN(hp.embedding_length_per_layer, arch_u32(md, "embedding_length_per_layer_input"));
  MET_ASSIGN_OR_RETURN(hp.shared_kv_layers, arch_u32_or(md, "attention.shared_kv_layers", 0));
  MET_RETURN_IF_ERROR(read_gemma4_heads(md, hp));
  hp.embedding_scale = std::sqrt(static_cast<float>(hp.embedding_length));
  hp.attention_scale = 1.0f;  // llama.cpp: f_attention_scale = 1
  return validate_shared_kv(hp);
}

// The BERT family (bert, nomic-bert) is not causal and norms with
// LayerNorm; any model may name its pooling.
Status read_embedding_keys(const GgufMetadata& md, ModelHParams& hp) {
  const bool encoder = hp.arch == "bert" || hp.arch == "nomic-bert";
  MET_ASSIGN_OR_RETURN(std::string causal_key, md.arch_key("attention.causal"));
  MET_ASSIGN_OR_RETURN(hp.causal_attention, md.get_bool_or(causal_key, !encoder));
  if (hp.causal_attention == encoder) {
    return unimplemented("metadata key '{}': {} attention is not supported for {}", causal_key,
                         encoder ? "causal" : "non-causal", hp.arch);
  }
  MET_ASSIGN_OR_RETURN(std::string pooling_key, md.arch_key("pooling_type"));
  if (md.contains(pooling_key)) {
    MET_ASSIGN_OR_RETURN(const uint32_t value, md.get_u32(pooling_key));
    hp.pooling = pooling_from_gguf(value);
    if (!hp.pooling.has_value()) {
      return unimplemented("metadata key '{}': pooling type {} is not supported (none 0, mean 1, cls 2, last 3)",
                           pooling_key, value);
    }
  }
  if (!encoder) return ok_status();
  MET_ASSIGN_OR_RETURN(std::string eps_key, md.arch_key("attention.layer_norm_epsilon"));
  MET_ASSIGN_OR_RETURN(hp.layer_norm_eps, md.get_f32(eps_key));
  MET_ASSIGN_OR_RETURN(hp.token_type_count, md.get_u32_or("tokenizer.ggml.token_type_count", 0));
  return ok_status();
}

// granitehybrid/nemotron_h: the Mamba2 sizes, the per-layer head_count_kv
// and feed_forward_length that say each layer's kind, granite's scales.
Status read_mamba_hybrid(const GgufMetadata& md, ModelHParams& hp) {
  hp.ssm_kind = SsmKind::kMamba2;
  MET_ASSIGN_OR_RETURN(hp.ssm_conv_kernel, arch_u32(md, "ssm.conv_kernel"));
  MET_ASSIGN_OR_RETURN(hp.ssm_inner_size, arch_u32(md, "ssm.inner_size"));
  MET_ASSIGN_OR_RETURN(hp.ssm_state_size, arch_u32(md, "ssm.state_size"));
  MET_ASSIGN_OR_RETURN(hp.ssm_time_step_rank, arch_u32(md, "ssm.time_step_rank"));
  MET_ASSIGN_OR_RETURN(hp.ssm_group_count, arch_u32(md, "ssm.group_count"));
  const uint32_t n = hp.num_layers;
  if (n == 0) return ok_status();  // validate() names block_count
  MET_ASSIGN_OR_RETURN(std::string kv_key, md.arch_key("attention.head_count_kv"));
  MET_ASSIGN_OR_RETURN(std::string ff_key, md.arch_key("feed_forward_length"));
  MET_ASSIGN_OR_RETURN(std::vector<uint32_t> kv, read_layer_u32s(md, kv_key, n, hp.num_heads));
  MET_ASSIGN_OR_RETURN(std::vector<uint32_t> ff, read_layer_u32s(md, ff_key, n, 0));
  MET_ASSIGN_OR_RETURN(hp.num_kv_heads, common_nonzero(kv, kv_key));
  MET_ASSIGN_OR_RETURN(hp.feed_forward_length, common_nonzero(ff, ff_key));
  const bool nemotron = hp.arch == "nemotron_h";
  hp.recurrent_layers.resize(n);
  if (nemotron) hp.ffn_only_layers.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    hp.recurrent_layers[i] = kv[i] == 0 && (!nemotron || ff[i] == 0);
    if (nemotron) hp.ffn_only_layers[i] = ff[i] != 0;
  }
  if (hp.num_attention_layers() == 0) {
    return unimplemented("{} is 0 for every attention layer: met runs {} with at least one attention layer",
                         kv_key, hp.arch);
  }
  if (nemotron) {
    hp.uses_rope = false;  // llama.cpp: LLAMA_ROPE_TYPE_NONE
    return ok_status();
  }
  if (hp.feed_forward_length == 0) return invalid_argument("{} is 0", ff_key);
  return read_granite_scales(md, hp);
}

Status validate_mamba(const ModelHParams& hp) {
  const std::string& a = hp.arch;
  if (hp.ssm_conv_kernel == 0 || hp.ssm_conv_kernel > static_cast<uint32_t>(cpu::kMaxShortConvWidth)) {
    return invalid_argument("{}.ssm.conv_kernel {} must be in [1, {}]", a, hp.ssm_conv_kernel,
                            cpu::kMaxShortConvWidth);
  }
  if (hp.ssm_state_size == 0) return invalid_argument("{}.ssm.state_size is 0", a);
  if (hp.ssm_group_count == 0) return invalid_argument("{}.ssm.group_count is 0", a);
  if (hp.ssm_time_step_rank == 0 || hp.ssm_time_step_rank % hp.ssm_group_count != 0) {
    return invalid_argument("{}.ssm.time_step_rank {} must be a positive multiple of ssm.group_count {}", a,
                            hp.ssm_time_step_rank, hp.ssm_group_count);
  }
  if (hp.ssm_inner_size == 0 || hp.ssm_inner_size % hp.ssm_time_step_rank != 0) {
    return invalid_argument("{}.ssm.inner_size {} must be a positive multiple of ssm.time_step_rank {}", a,
                            hp.ssm_inner_size, hp.ssm_time_step_rank);
  }
  if (a == "granitehybrid" && hp.ssm_inner_size != 2 * hp.embedding_length) {
    return invalid_argument("{}.ssm.inner_size {} must be twice embedding_length {} (as llama.cpp requires)", a,
                            hp.ssm_inner_size, hp.embedding_length);
  }
  if (hp.is_moe() && a == "nemotron_h") {
    return unimplemented("{} with experts ({}.expert_count {}) is not supported", a, a, hp.expert_count);
  }
  return ok_status();
}

}  // namespace

uint32_t ModelHParams::num_attention_layers() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < num_layers; ++i) n += layer_is_recurrent(i) || layer_is_ffn_only(i) ? 0 : 1;
  return n;
}

uint32_t ModelHParams::num_recurrent_layers() const {
  uint32_t n = 0;
  for (bool r : recurrent_layers) n += r ? 1 : 0;
  return n;
}

Result<ModelHParams> read_hparams(const GgufMetadata& md) {
  ModelHParams hp;
  MET_ASSIGN_OR_RETURN(hp.arch, md.architecture());
  MET_ASSIGN_OR_RETURN(hp.num_layers, arch_u32(md, "block_count"));
  MET_ASSIGN_OR_RETURN(hp.embedding_length, arch_u32(md, "embedding_length"));
  MET_ASSIGN_OR_RETURN(hp.num_heads, arch_u32(md, "attention.head_count"));
  if (is_mamba_arch(hp.arch)) {
    MET_RETURN_IF_ERROR(read_mamba_hybrid(md, hp));  // per-layer feed_forward_length and head_count_kv
  } else if (hp.arch == "gemma4") {
    MET_RETURN_IF_ERROR(read_gemma4_layer_sizes(md, hp));
  } else {
    MET_ASSIGN_OR_RETURN(hp.feed_forward_length, arch_u32_or(md, "feed_forward_length", 0));
    MET_ASSIGN_OR_RETURN(hp.num_kv_heads, arch_u32_or(md, "attention.head_count_kv", hp.num_heads));
  }
  MET_ASSIGN_OR_RETURN(hp.context_length, arch_u32_or(md, "context_length", 0));
  const uint32_t default_head_dim = hp.num_heads == 0 ? 0 : hp.embedding_length / hp.num_heads;
  MET_ASSIGN_OR_RETURN(hp.head_dim, arch_u32_or(md, "attention.key_length", default_head_dim));
  MET_ASSIGN_OR_RETURN(hp.rope_dims, arch_u32_or(md, "rope.dimension_count", hp.head_dim));
  MET_ASSIGN_OR_RETURN(hp.rms_norm_eps, arch_f32_or(md, "attention.layer_norm_rms_epsilon", 1e-5f));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base, arch_f32_or(md, "rope.freq_base", 10000.0f));
  MET_ASSIGN_OR_RETURN(hp.rope_scaling, read_rope_scaling(md));
  MET_RETURN_IF_ERROR(read_experts(md, hp));
  MET_RETURN_IF_ERROR(read_sliding_window(md, hp));
  MET_RETURN_IF_ERROR(read_dense_extras(md, hp));
  MET_RETURN_IF_ERROR(read_embedding_keys(md, hp));
  MET_RETURN_IF_ERROR(read_hybrid(md, hp));
  // Dense and MoE transformers' MTP blocks (met's test models).
  if (!is_hybrid_arch(hp.arch) && !is_mamba_arch(hp.arch)) MET_RETURN_IF_ERROR(take_nextn_layers(md, hp));
  if (md.contains("tokenizer.ggml.tokens")) {
    MET_ASSIGN_OR_RETURN(const GgufArray* tokens, md.get_array("tokenizer.ggml.tokens"));
    hp.vocab_size = static_cast<uint32_t>(tokens->size());
  }
  MET_RETURN_IF_ERROR(validate(hp));
  if (is_hybrid_arch(hp.arch)) MET_RETURN_IF_ERROR(validate_ssm(hp));
  if (is_mamba_arch(hp.arch)) MET_RETURN_IF_ERROR(validate_mamba(hp));
  return hp;
}

std::string_view rope_scaling_name(RopeScalingKind kind) {
  switch (kind) {
    case RopeScalingKind::kNone: return "none";
    case RopeScalingKind::kLinear: return "linear";
    case RopeScalingKind::kYarn: return "yarn";
  }
  return "unknown";
}

}  // namespace met
