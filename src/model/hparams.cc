// Hyper-parameter reading. Tested by tests/model/hparams_test.cc.
#include "model/hparams.h"

namespace met {
namespace {

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
  const uint32_t ff_default = hp.expert_used_count == 0 ? 0 : hp.feed_forward_length / hp.expert_used_count;
  MET_ASSIGN_OR_RETURN(hp.expert_feed_forward_length, arch_u32_or(md, "expert_feed_forward_length", ff_default));
  MET_ASSIGN_OR_RETURN(hp.expert_shared_feed_forward_length,
                       arch_u32_or(md, "expert_shared_feed_forward_length", 0));
  return ok_status();
}

// gpt-oss's windowed layers (llama.cpp reads these keys for no other arch
// met runs).
Status read_sliding_window(const GgufMetadata& md, ModelHParams& hp) {
  hp.rope_freq_base_swa = hp.rope_freq_base;
  if (hp.arch != "gpt-oss") return ok_status();
  MET_ASSIGN_OR_RETURN(hp.sliding_window, arch_u32(md, "attention.sliding_window"));
  MET_ASSIGN_OR_RETURN(hp.swa_pattern, arch_u32_or(md, "attention.sliding_window_pattern", 2));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base_swa, arch_f32_or(md, "rope.freq_base_swa", hp.rope_freq_base));
  if (hp.sliding_window == 0) return invalid_argument("{}.attention.sliding_window is 0", hp.arch);
  return ok_status();
}

}  // namespace

Result<ModelHParams> read_hparams(const GgufMetadata& md) {
  ModelHParams hp;
  MET_ASSIGN_OR_RETURN(hp.arch, md.architecture());
  MET_ASSIGN_OR_RETURN(hp.num_layers, arch_u32(md, "block_count"));
  MET_ASSIGN_OR_RETURN(hp.embedding_length, arch_u32(md, "embedding_length"));
  MET_ASSIGN_OR_RETURN(hp.feed_forward_length, arch_u32_or(md, "feed_forward_length", 0));
  MET_ASSIGN_OR_RETURN(hp.num_heads, arch_u32(md, "attention.head_count"));
  MET_ASSIGN_OR_RETURN(hp.num_kv_heads, arch_u32_or(md, "attention.head_count_kv", hp.num_heads));
  MET_ASSIGN_OR_RETURN(hp.context_length, arch_u32_or(md, "context_length", 0));
  const uint32_t default_head_dim = hp.num_heads == 0 ? 0 : hp.embedding_length / hp.num_heads;
  MET_ASSIGN_OR_RETURN(hp.head_dim, arch_u32_or(md, "attention.key_length", default_head_dim));
  MET_ASSIGN_OR_RETURN(hp.rope_dims, arch_u32_or(md, "rope.dimension_count", hp.head_dim));
  MET_ASSIGN_OR_RETURN(hp.rms_norm_eps, arch_f32_or(md, "attention.layer_norm_rms_epsilon", 1e-5f));
  MET_ASSIGN_OR_RETURN(hp.rope_freq_base, arch_f32_or(md, "rope.freq_base", 10000.0f));
  MET_ASSIGN_OR_RETURN(hp.rope_scaling, read_rope_scaling(md));
  MET_RETURN_IF_ERROR(read_experts(md, hp));
  MET_RETURN_IF_ERROR(read_sliding_window(md, hp));
  if (md.contains("tokenizer.ggml.tokens")) {
    MET_ASSIGN_OR_RETURN(const GgufArray* tokens, md.get_array("tokenizer.ggml.tokens"));
    hp.vocab_size = static_cast<uint32_t>(tokens->size());
  }
  MET_RETURN_IF_ERROR(validate(hp));
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
