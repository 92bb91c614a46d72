// Random-weight model files. Tested by tests/model/random_model_test.cc.
#include "model/random_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gguf/gguf_writer.h"
#include "model/file_type.h"
#include "model/random_model_gemma4.h"
#include "model/random_tensor_fill.h"
#include "tensor/quantize.h"

namespace met {
namespace {

// The SSM sizes every recurrent architecture writes (ssm.*).
void write_ssm_keys(const ModelHParams& hp, GgufMetadata& md) {
  auto key = [&hp](std::string_view suffix) { return fmt::format("{}.{}", hp.arch, suffix); };
  md.set(key("ssm.conv_kernel"), hp.ssm_conv_kernel);
  md.set(key("ssm.inner_size"), hp.ssm_inner_size);
  md.set(key("ssm.state_size"), hp.ssm_state_size);
  md.set(key("ssm.time_step_rank"), hp.ssm_time_step_rank);
  md.set(key("ssm.group_count"), hp.ssm_group_count);
}

// qwen35/qwen35moe/qwen3next's keys, as llama.cpp's loaders read them
// (qwen3next's rope has no sections).
void write_hybrid_hparams(const ModelHParams& hp, GgufMetadata& md) {
  auto key = [&hp](std::string_view suffix) { return fmt::format("{}.{}", hp.arch, suffix); };
  write_ssm_keys(hp, md);
  md.set(key("full_attention_interval"), hp.full_attention_interval);
  if (!hp.ssm_grouped_v_heads) {
    std::vector<int32_t> sections(hp.rope_sections.begin(), hp.rope_sections.end());
    md.set(key("rope.dimension_sections"), GgufValue::array(std::move(sections)));
  }
  if (hp.nextn_predict_layers > 0) md.set(key("nextn_predict_layers"), hp.nextn_predict_layers);
}

// granite's and granitehybrid's multipliers (0: none, not written).
void write_granite_scales(const ModelHParams& hp, GgufMetadata& md) {
  auto key = [&hp](std::string_view suffix) { return fmt::format("{}.{}", hp.arch, suffix); };
  if (hp.embedding_scale != 0.0f) md.set(key("embedding_scale"), hp.embedding_scale);
  if (hp.residual_scale != 0.0f) md.set(key("residual_scale"), hp.residual_scale);
  if (hp.attention_scale != 0.0f) md.set(key("attention.scale"), hp.attention_scale);
  if (hp.logit_scale != 0.0f) md.set(key("logit_scale"), hp.logit_scale);
}

// granitehybrid/nemotron_h's keys, as llama.cpp's loaders read them: the
// per-layer head_count_kv (0: Mamba2) and, for nemotron_h, feed_forward_length
// (0 but for the FFN-only layers), as its converter writes them.
void write_mamba_hparams(const ModelHParams& hp, GgufMetadata& md) {
  auto key = [&hp](std::string_view suffix) { return fmt::format("{}.{}", hp.arch, suffix); };
  write_ssm_keys(hp, md);
  std::vector<int32_t> kv, ff;
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    const bool attention = !hp.layer_is_recurrent(i) && !hp.layer_is_ffn_only(i);
    kv.push_back(attention ? static_cast<int32_t>(hp.num_kv_heads) : 0);
    ff.push_back(hp.layer_is_ffn_only(i) ? static_cast<int32_t>(hp.feed_forward_length) : 0);
  }
  md.set(key("attention.head_count_kv"), GgufValue::array(std::move(kv)));
  if (hp.arch == "nemotron_h") {
    md.set(key("feed_forward_length"), GgufValue::array(std::move(ff)));
    return;
  }
  md.set(key("rope.scaling.finetuned"), hp.uses_rope);
  write_granite_scales(hp, md);
}

void write_hparams(const RandomModelSpec& spec, const ModelHParams& hp, GgufMetadata& md) {
  const std::string arch(gguf_arch_name(spec.arch));
  auto key = [&arch](std::string_view suffix) { return fmt::format("{}.{}", arch, suffix); };
  md.set("general.architecture", arch);
  md.set("general.name", fmt::format("met random {}", arch_name(spec.arch)));
  md.set("general.basename", std::string(arch_name(spec.arch)));
  md.set(key("context_length"), hp.context_length);
  md.set(key("embedding_length"), hp.embedding_length);
  md.set(key("block_count"), hp.num_layers + hp.nextn_predict_layers);
  md.set(key("feed_forward_length"), hp.feed_forward_length);
  md.set(key("attention.head_count"), hp.num_heads);
  md.set(key("attention.head_count_kv"), hp.num_kv_heads);
  md.set(key("rope.dimension_count"), hp.rope_dims);
  md.set(key("rope.freq_base"), hp.rope_freq_base);
  md.set(key("attention.layer_norm_rms_epsilon"), hp.rms_norm_eps);
  md.set(key("vocab_size"), hp.vocab_size);
  if (hp.pooling.has_value()) md.set(key("pooling_type"), static_cast<uint32_t>(*hp.pooling));
  if (!hp.causal_attention) {
    md.set(key("attention.causal"), false);
    md.set(key("attention.layer_norm_epsilon"), hp.layer_norm_eps);
  }
  if (spec.arch == Arch::kQwen3 || spec.arch == Arch::kQwen3Moe || spec.arch == Arch::kGptOss ||
      spec.arch == Arch::kGemma2 || spec.arch == Arch::kGemma3 || arch_is_hybrid(spec.arch) ||
      arch_is_mamba_hybrid(spec.arch)) {
    md.set(key("attention.key_length"), hp.head_dim);
    md.set(key("attention.value_length"), hp.head_dim);
  }
  if (arch_is_hybrid(spec.arch)) write_hybrid_hparams(hp, md);
  if (!arch_is_hybrid(spec.arch) && hp.nextn_predict_layers > 0) {
    md.set(key("nextn_predict_layers"), hp.nextn_predict_layers);  // met's dense test models
  }
  if (arch_is_mamba_hybrid(spec.arch)) write_mamba_hparams(hp, md);
  if (spec.arch == Arch::kGranite) write_granite_scales(hp, md);
  if (spec.longrope) {
    md.set(key("rope.scaling.original_context_length"), hp.rope_scaling.original_context_length);
    md.set(key("rope.scaling.attn_factor"), hp.rope_scaling.attn_factor);
  }
  if (hp.sliding_window > 0) {
    md.set(key("attention.sliding_window"), hp.sliding_window);
    md.set(key("attention.sliding_window_pattern"), hp.swa_pattern);
    if (spec.arch != Arch::kGptOss) md.set(key("rope.freq_base_swa"), hp.rope_freq_base_swa);
  }
  if (hp.final_logit_softcap != 0.0f || spec.arch == Arch::kGemma2) {
    md.set(key("final_logit_softcapping"), hp.final_logit_softcap);
  }
  if (spec.arch == Arch::kGemma2) md.set(key("attn_logit_softcapping"), hp.attn_logit_softcap);
  if (spec.arch == Arch::kGemma4) write_gemma4_hparams(hp, md);
  if (!hp.is_moe()) return;
  md.set(key("expert_count"), hp.expert_count);
  md.set(key("expert_used_count"), hp.expert_used_count);
  if (spec.arch == Arch::kMixtral) return;  // its experts are feed_forward_length wide
  md.set(key("expert_feed_forward_length"), hp.expert_feed_forward_length);
  if (hp.expert_shared_feed_forward_length > 0) {
    md.set(key("expert_shared_feed_forward_length"), hp.expert_shared_feed_forward_length);
  }
}

// Whether `s` has routed experts: a MoE arch, or a granitehybrid given some.
bool spec_is_moe(const RandomModelSpec& s) {
  return arch_is_moe(s.arch) || (s.arch == Arch::kGraniteHybrid && s.num_experts > 0);
}

Status validate_experts(const RandomModelSpec& s) {
  if (!spec_is_moe(s)) {
    if (s.num_experts != 0 || s.num_experts_used != 0 || s.shared_expert_feed_forward_length != 0) {
      return invalid_argument("--experts, --experts-used and --shared-expert-ff need a MoE --arch "
                              "(qwen3moe, mixtral, gpt-oss, qwen35moe, qwen3next, granitehybrid)");
    }
    return ok_status();
  }
  if (s.num_experts == 0 || s.num_experts > 512) {
    return invalid_argument("--experts {} must be in [1, 512] for {}", s.num_experts, arch_name(s.arch));
  }
  if (s.num_experts_used == 0 || s.num_experts_used > s.num_experts) {
    return invalid_argument("--experts-used {} must be in [1, --experts {}]", s.num_experts_used, s.num_experts);
  }
  if (s.expert_feed_forward_length == 0) return invalid_argument("--expert-ff must be positive");
  if ((s.arch == Arch::kMixtral || s.arch == Arch::kGptOss) && s.shared_expert_feed_forward_length != 0) {
    return invalid_argument("--shared-expert-ff: {} has no shared expert", arch_name(s.arch));
  }
  if (has_gated_shared_expert(s.arch) && s.shared_expert_feed_forward_length == 0) {
    return invalid_argument("--shared-expert-ff must be positive: {} always has its shared expert",
                            arch_name(s.arch));
  }
  return ok_status();
}

Status validate_hybrid(const RandomModelSpec& s) {
  if (s.mtp_copies_last_layer && s.nextn_predict_layers == 0) {
    return invalid_argument("--mtp-copy-last-layer needs an MTP block (--mtp-layers 1, qwen35's presets)");
  }
  if (!arch_is_hybrid(s.arch)) {
    const bool sandwich = s.arch == Arch::kGemma2 || s.arch == Arch::kGemma3 || s.arch == Arch::kOlmo2;
    if (s.nextn_predict_layers != 0 && (arch_is_mamba_hybrid(s.arch) || s.arch == Arch::kGptOss || sandwich)) {
      return invalid_argument("--mtp-layers: {} models get no MTP block", arch_name(s.arch));
    }
    return ok_status();
  }
  if (s.ssm_conv_kernel == 0 || s.ssm_state_size == 0 || s.ssm_group_count == 0 || s.full_attention_interval == 0) {
    return invalid_argument("--conv-kernel, --ssm-state, --ssm-groups and --full-attn-interval must be positive");
  }
  if (s.ssm_time_step_rank == 0 || s.ssm_time_step_rank % s.ssm_group_count != 0) {
    return invalid_argument("--ssm-heads {} must be a positive multiple of --ssm-groups {}", s.ssm_time_step_rank,
                            s.ssm_group_count);
  }
  const uint32_t head_dim = s.head_dim != 0 ? s.head_dim : s.embedding_length / s.num_heads;
  if (head_dim % 8 != 0) {
    return invalid_argument("head dimension {} must be a multiple of 8 (rope over a quarter of it, in pairs)",
                            head_dim);
  }
  return ok_status();
}

// The layers' kinds from a valid spec's pattern: recurrent ('M') and FFN
// alone ('-'); the rest attention.
void pattern_layers(const RandomModelSpec& s, std::vector<bool>& recurrent, std::vector<bool>& ffn_only) {
  recurrent.assign(s.num_layers, false);
  if (s.arch == Arch::kNemotronH) ffn_only.assign(s.num_layers, false);
  for (uint32_t i = 0; i < s.num_layers; ++i) {
    const char c = s.layer_pattern[i % s.layer_pattern.size()];
    recurrent[i] = c == 'M';
    if (c == '-' && !ffn_only.empty()) ffn_only[i] = true;
  }
}

Status validate_mamba_hybrid(const RandomModelSpec& s) {
  if (!arch_is_mamba_hybrid(s.arch)) return ok_status();
  const std::string allowed = s.arch == Arch::kNemotronH ? "M*-" : "M*";
  bool attention = false;
  for (uint32_t i = 0; i < s.num_layers && !s.layer_pattern.empty(); ++i) {
    attention = attention || s.layer_pattern[i % s.layer_pattern.size()] == '*';
  }
  if (s.layer_pattern.empty() || s.layer_pattern.find_first_not_of(allowed) != std::string::npos || !attention) {
    return invalid_argument("--pattern '{}' must be made of '{}' and give one of the {} layers attention ('*')",
                            s.layer_pattern, allowed, s.num_layers);
  }
  const uint32_t inner = s.ssm_inner_size != 0 ? s.ssm_inner_size : 2 * s.embedding_length;
  if (s.ssm_conv_kernel == 0 || s.ssm_conv_kernel > 8 || s.ssm_state_size == 0 || s.ssm_group_count == 0) {
    return invalid_argument("--conv-kernel must be in [1, 8]; --ssm-state and --ssm-groups must be positive");
  }
  if (s.ssm_time_step_rank == 0 || s.ssm_time_step_rank % s.ssm_group_count != 0 ||
      inner % s.ssm_time_step_rank != 0) {
    return invalid_argument("--ssm-heads {} must be a multiple of --ssm-groups {} and divide d_inner {}",
                            s.ssm_time_step_rank, s.ssm_group_count, inner);
  }
  if (s.arch == Arch::kGraniteHybrid && inner != 2 * s.embedding_length) {
    return invalid_argument("granitehybrid's d_inner {} must be twice --embd {} (llama.cpp requires it)", inner,
                            s.embedding_length);
  }
  return ok_status();
}

// Granite 4.0-H / Nemotron-H-like shapes for the Mamba2 hybrids.
std::optional<RandomModelSpec> mamba_preset(std::string_view name, Arch arch) {
  RandomModelSpec s;
  s.arch = arch;
  s.head_dim = 64;
  const bool granite = arch == Arch::kGraniteHybrid;
  if (name == "tiny") {  // ~16M granitehybrid, ~13M nemotron_h
    s.num_layers = granite ? 8 : 9, s.num_heads = 4, s.num_kv_heads = 2, s.context_length = 4096;
    s.feed_forward_length = granite ? 768 : 1024, s.ssm_state_size = 64, s.ssm_time_step_rank = 8;
    s.layer_pattern = granite ? "MMM*" : "M-M-M-M*-", s.ssm_group_count = granite ? 1 : 2;
  } else if (name == "small") {  // ~135M, ~114M
    s.num_layers = granite ? 12 : 18, s.embedding_length = 768, s.num_heads = 12, s.num_kv_heads = 4;
    s.feed_forward_length = granite ? 2048 : 3072, s.vocab_size = 24576, s.context_length = 8192;
    s.ssm_state_size = 128, s.ssm_time_step_rank = 24, s.ssm_group_count = granite ? 1 : 4;
    s.layer_pattern = granite ? "MMMMM*" : "M-M-M-M*-";
  } else if (name == "medium") {  // ~495M (Granite 4.0-H's proportions at 1024 wide), ~345M
    s.num_layers = granite ? 24 : 36, s.embedding_length = 1024, s.num_heads = 16, s.num_kv_heads = 4;
    s.feed_forward_length = 4096, s.vocab_size = 32000, s.context_length = 32768;
    s.ssm_state_size = 128, s.ssm_time_step_rank = 32, s.ssm_group_count = granite ? 1 : 8;
    s.layer_pattern = granite ? "MMMMMMM*" : "M-M-M-M*-";
  } else {
    return std::nullopt;
  }
  if (granite) {  // Granite 4.0-H's multipliers
    s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 6.0f;
    s.attention_scale = 1.0f / static_cast<float>(s.head_dim);
  }
  return s;
}

// What the dense archs beyond llama's shape have in their real models:
// gemma3's windowed layers (5 of every 6, a 512 window at these sizes),
// olmo2's window pattern, and
// granite's multipliers (Granite 3.x's).
void set_dense_arch_defaults(RandomModelSpec& s) {
  if (arch_is_encoder(s.arch)) {  // BERT-base-like heads (no GQA), 512 positions
    s.num_kv_heads = s.num_heads;
    s.context_length = 512;
    s.pooling = s.arch == Arch::kBert ? Pooling::kCls : Pooling::kMean;
  }
  if (s.arch == Arch::kGemma3) {
    s.sliding_window = 512;
    s.swa_pattern = 6;
  }
  if (s.arch == Arch::kOlmo2) s.swa_pattern = 4;  // Olmo 3's, where a window is given
  if (s.arch == Arch::kGemma2) {  // Gemma 2's
    s.sliding_window = 4096, s.swa_pattern = 2;
    s.attn_logit_softcap = 50.0f, s.final_logit_softcap = 30.0f;
  }
  if (s.arch == Arch::kGranite) {
    s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 8.0f;
    s.attention_scale = 0.015625f;
  }
}

// Qwen3.5-like shapes for the hybrid archs; one MTP block.
std::optional<RandomModelSpec> hybrid_preset(std::string_view name, Arch arch) {
  RandomModelSpec s;
  s.arch = arch;
  s.nextn_predict_layers = 1;
  if (name == "tiny") {  // ~17M parameters (qwen35)
    s.num_heads = 4, s.num_kv_heads = 2, s.head_dim = 64, s.context_length = 4096;
    return s;
  }
  if (name == "small") {  // ~122M
    s.num_layers = 12, s.embedding_length = 768, s.num_heads = 6, s.num_kv_heads = 2, s.head_dim = 128;
    s.feed_forward_length = 1536, s.vocab_size = 24576, s.context_length = 8192;
    s.ssm_state_size = 128, s.ssm_group_count = 4, s.ssm_time_step_rank = 8;
    return s;
  }
  if (name == "medium") {  // ~505M: Qwen3.5-0.8B's trunk with half its key heads and a 32K vocab
    s.num_layers = 24, s.embedding_length = 1024, s.num_heads = 8, s.num_kv_heads = 2, s.head_dim = 256;
    s.feed_forward_length = 3072, s.vocab_size = 32000, s.context_length = 32768;
    s.ssm_state_size = 128, s.ssm_group_count = 8, s.ssm_time_step_rank = 16;
    return s;
  }
  return std::nullopt;
}

}  // namespace

bool arch_is_moe(Arch arch) {
  return arch == Arch::kQwen3Moe || arch == Arch::kMixtral || arch == Arch::kGptOss || has_gated_shared_expert(arch);
}

bool has_gated_shared_expert(Arch arch) { return arch == Arch::kQwen35Moe || arch == Arch::kQwen3Next; }

std::array<uint32_t, 4> imrope_sections(uint32_t rope_dims) {
  const uint32_t pairs = rope_dims / 2;
  return {(pairs + 2) / 3, (pairs + 1) / 3, pairs / 3, 0};
}

void apply_moe_preset(std::string_view name, RandomModelSpec& s) {
  if (!arch_is_moe(s.arch)) return;
  const bool tiny = name == "tiny";
  if (s.num_experts == 0) s.num_experts = tiny ? 8 : name == "small" ? 16 : 32;
  if (s.num_experts_used == 0) s.num_experts_used = std::min(s.num_experts, tiny ? 2u : 4u);
  if (s.expert_feed_forward_length == 0) s.expert_feed_forward_length = std::max(1u, s.feed_forward_length / 4);
  if (has_gated_shared_expert(s.arch) && s.shared_expert_feed_forward_length == 0) {
    s.shared_expert_feed_forward_length = s.expert_feed_forward_length;
  }
}

std::optional<RandomModelSpec> random_model_preset(std::string_view name, Arch arch) {
  if (arch_is_hybrid(arch)) return hybrid_preset(name, arch);
  if (arch_is_mamba_hybrid(arch)) return mamba_preset(name, arch);
  RandomModelSpec s;
  s.arch = arch;
  set_dense_arch_defaults(s);
  if (arch == Arch::kGemma4) apply_gemma4_preset(name, s);
  if (name == "tiny") return s;  // ~14.7M parameters
  const bool encoder = arch_is_encoder(arch);
  if (name == "small") {         // ~113M (encoders: bge-small's shape)
    s.num_layers = 12, s.embedding_length = 768, s.num_heads = 12, s.num_kv_heads = 4;
    s.feed_forward_length = 2048, s.vocab_size = 24576, s.context_length = 4096;
    if (encoder) s.embedding_length = 384, s.num_heads = s.num_kv_heads = 12, s.feed_forward_length = 1536;
    if (encoder) s.vocab_size = 30522, s.context_length = 512;
    return s;
  }
  if (name == "medium") {  // ~506M (encoders: bge-base's shape)
    s.num_layers = 28, s.embedding_length = 1024, s.num_heads = 16, s.num_kv_heads = 8;
    s.feed_forward_length = 4096, s.vocab_size = 32000, s.context_length = 4096;
    if (encoder) s.num_layers = 12, s.embedding_length = 768, s.num_heads = s.num_kv_heads = 12;
    if (encoder) s.feed_forward_length = 3072, s.vocab_size = 30522, s.context_length = 512;
    return s;
  }
  return std::nullopt;
}

Status validate_spec(const RandomModelSpec& s) {
  if (s.num_layers == 0 || s.embedding_length == 0 || s.feed_forward_length == 0 ||
      s.context_length == 0 || s.num_heads == 0 || s.num_kv_heads == 0) {
    return invalid_argument("--layers, --embd, --ff, --ctx, --heads and --kv-heads must be positive");
  }
  if (!(s.branch_scale > 0.0f && s.branch_scale <= 1.0f)) {
    return invalid_argument("--branch-scale {} must be in (0, 1]", s.branch_scale);
  }
  if (s.successor_head && (s.tied_output || arch_is_encoder(s.arch))) {
    return invalid_argument("--successor-head needs an output.weight of its own (not with --tie-embeddings or an "
                            "encoder)");
  }
  if (s.longrope && s.arch != Arch::kPhi3) return invalid_argument("--longrope is for --arch phi3");
  if (s.llama3_rope && s.arch != Arch::kLlama) {
    return invalid_argument("--llama3-rope is for --arch llama (llama.cpp reads rope_freqs.weight there)");
  }
  if (s.head_dim == 0 && s.embedding_length % s.num_heads != 0) {
    return invalid_argument("--embd {} is not a multiple of --heads {}", s.embedding_length, s.num_heads);
  }
  const uint32_t head_dim = s.head_dim != 0 ? s.head_dim : s.embedding_length / s.num_heads;
  if (head_dim % 2 != 0) return invalid_argument("head dimension {} must be even for RoPE", head_dim);
  if (s.num_heads % s.num_kv_heads != 0) {
    return invalid_argument("--kv-heads {} does not divide --heads {}", s.num_kv_heads, s.num_heads);
  }
  if (arch_is_encoder(s.arch) && (s.num_kv_heads != s.num_heads || s.tied_output || s.nextn_predict_layers > 0)) {
    return invalid_argument("{} has as many key/value heads as heads, no output to tie and no MTP block",
                            arch_name(s.arch));
  }
  if (s.vocab_size < kMinSyntheticVocab) {
    return invalid_argument("--vocab {} is below the minimum of {}", s.vocab_size, kMinSyntheticVocab);
  }
  if (!llama_file_type(s.dtype) || !can_quantize(s.dtype)) {
    return invalid_argument("--dtype {} is not one make-model writes", ggml_type_name(s.dtype));
  }
  if (s.sliding_window != 0 && s.arch != Arch::kGptOss && s.arch != Arch::kGemma2 && s.arch != Arch::kGemma3 &&
      s.arch != Arch::kOlmo2 && s.arch != Arch::kGemma4) {
    return invalid_argument("--sliding-window needs --arch gpt-oss, gemma2, gemma3 or olmo2");
  }
  const bool gemma = s.arch == Arch::kGemma2 || s.arch == Arch::kGemma3 || s.arch == Arch::kGemma4;
  if (s.final_logit_softcap != 0.0f && !gemma) {
    return invalid_argument("--logit-softcap needs --arch gemma2, gemma3 or gemma4");
  }
  const bool gemma4_fields = s.global_head_dim != 0 || s.global_kv_heads != 0 || s.shared_kv_layers != 0 ||
                             s.per_layer_embd != 0;
  if (gemma4_fields && s.arch != Arch::kGemma4) {
    return invalid_argument("global head sizes, shared-KV layers and per-layer embeddings need --arch gemma4");
  }
  if (s.arch == Arch::kGemma4) MET_RETURN_IF_ERROR(validate_gemma4_spec(s));
  if (s.attn_logit_softcap != 0.0f && s.arch != Arch::kGemma2) {
    return invalid_argument("--attn-softcap needs --arch gemma2");
  }
  if (s.final_logit_softcap < 0.0f || s.attn_logit_softcap < 0.0f) {
    return invalid_argument("--logit-softcap and --attn-softcap must not be negative");
  }
  MET_RETURN_IF_ERROR(validate_hybrid(s));
  MET_RETURN_IF_ERROR(validate_mamba_hybrid(s));
  return validate_experts(s);
}

namespace {

// Qwen3.5's: rope over a quarter of the head with every pair in a section
// (qwen3next: plain NeoX rope, value heads grouped by key head), rope base
// 1e7, the gated delta sizes and the recurrent layer pattern.
void set_hybrid_hparams(const RandomModelSpec& s, ModelHParams& hp) {
  hp.ssm_kind = SsmKind::kGatedDelta;
  hp.rope_dims = hp.head_dim / 4;
  hp.ssm_grouped_v_heads = s.arch == Arch::kQwen3Next;
  if (!hp.ssm_grouped_v_heads) hp.rope_sections = imrope_sections(hp.rope_dims);
  hp.rope_freq_base = 10000000.0f;
  hp.rope_freq_base_swa = hp.rope_freq_base;
  hp.ssm_conv_kernel = s.ssm_conv_kernel;
  hp.ssm_state_size = s.ssm_state_size;
  hp.ssm_group_count = s.ssm_group_count;
  hp.ssm_time_step_rank = s.ssm_time_step_rank;
  hp.ssm_inner_size = s.ssm_state_size * s.ssm_time_step_rank;
  hp.full_attention_interval = s.full_attention_interval;
  hp.recurrent_layers.resize(hp.num_layers);
  for (uint32_t i = 0; i < hp.num_layers; ++i) hp.recurrent_layers[i] = (i + 1) % s.full_attention_interval != 0;
}

// The Mamba2 sizes, the layer kinds from the pattern, granite's multipliers.
void set_mamba_hparams(const RandomModelSpec& s, ModelHParams& hp) {
  hp.ssm_kind = SsmKind::kMamba2;
  hp.ssm_conv_kernel = s.ssm_conv_kernel;
  hp.ssm_state_size = s.ssm_state_size;
  hp.ssm_group_count = s.ssm_group_count;
  hp.ssm_time_step_rank = s.ssm_time_step_rank;
  hp.ssm_inner_size = s.ssm_inner_size != 0 ? s.ssm_inner_size : 2 * s.embedding_length;
  pattern_layers(s, hp.recurrent_layers, hp.ffn_only_layers);
  hp.uses_rope = s.arch == Arch::kGraniteHybrid && s.attention_rope;
  if (s.arch != Arch::kGraniteHybrid) return;
  hp.embedding_scale = s.embedding_scale;
  hp.residual_scale = s.residual_scale;
  hp.attention_scale = s.attention_scale;
  hp.logit_scale = s.logit_scale;
}

// gemma3, granite, smollm3 and olmo2 as their llama.cpp loaders read them
// back (read_hparams derives gemma3's scales from its shape).
void set_dense_hparams(const RandomModelSpec& s, ModelHParams& hp) {
  if (s.arch == Arch::kGemma2 || s.arch == Arch::kGemma3 || s.arch == Arch::kOlmo2) {
    hp.sliding_window = s.sliding_window;
    hp.swa_pattern = s.swa_pattern;
    hp.swa_rope_unscaled = s.arch != Arch::kGemma2 && s.sliding_window > 0;
    if (s.arch == Arch::kGemma3) hp.rope_freq_base_swa = 10000.0f;
  }
  if (s.arch == Arch::kGemma2 || s.arch == Arch::kGemma3) {
    hp.rms_norm_eps = 1e-6f;
    hp.final_logit_softcap = s.final_logit_softcap;
    hp.attn_logit_softcap = s.attn_logit_softcap;
    hp.embedding_scale = std::sqrt(static_cast<float>(hp.embedding_length));
    hp.attention_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  }
  if (s.arch == Arch::kGranite) {
    hp.embedding_scale = s.embedding_scale;
    hp.residual_scale = s.residual_scale;
    hp.attention_scale = s.attention_scale;
    hp.logit_scale = s.logit_scale;
  }
  if (s.arch == Arch::kSmollm3) hp.no_rope_layer_step = 4;
  if (s.longrope) {
    hp.rope_scaling.original_context_length =
        s.longrope_original_context != 0 ? s.longrope_original_context : std::max(1u, hp.context_length / 4);
    const double scale = static_cast<double>(hp.context_length) / hp.rope_scaling.original_context_length;
    hp.rope_scaling.attn_factor = static_cast<float>(
        std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(hp.rope_scaling.original_context_length))));
  }
}

}  // namespace

ModelHParams spec_hparams(const RandomModelSpec& s) {
  ModelHParams hp;
  hp.arch = std::string(gguf_arch_name(s.arch));
  hp.num_layers = s.num_layers;
  hp.embedding_length = s.embedding_length;
  hp.feed_forward_length = s.feed_forward_length;
  hp.num_heads = s.num_heads;
  hp.num_kv_heads = s.num_kv_heads;
  hp.head_dim = s.head_dim != 0 ? s.head_dim : s.embedding_length / s.num_heads;
  hp.rope_dims = hp.head_dim;
  hp.context_length = s.context_length;
  hp.vocab_size = s.vocab_size;
  const bool llama2_like = s.arch == Arch::kLlama;
  hp.rope_freq_base = llama2_like ? 10000.0f : s.arch == Arch::kGptOss ? 150000.0f : 1000000.0f;
  hp.rope_freq_base_swa = hp.rope_freq_base;
  if (s.arch == Arch::kGptOss) {
    hp.sliding_window = s.sliding_window == 0 ? 128 : s.sliding_window;
    hp.swa_pattern = s.swa_pattern;
  }
  const bool qwen = s.arch == Arch::kQwen2 || s.arch == Arch::kQwen3 || s.arch == Arch::kQwen3Moe ||
                    arch_is_hybrid(s.arch);
  hp.rms_norm_eps = qwen ? 1e-6f : 1e-5f;
  set_dense_hparams(s, hp);
  hp.pooling = s.pooling;
  if (arch_is_encoder(s.arch)) {
    hp.causal_attention = false;
    hp.layer_norm_eps = 1e-12f;
    hp.token_type_count = 2;
    hp.rope_freq_base = 1000.0f;  // nomic-embed's; bert has no rope
  }
  if (arch_is_hybrid(s.arch)) set_hybrid_hparams(s, hp);
  hp.nextn_predict_layers = s.nextn_predict_layers;
  if (arch_is_mamba_hybrid(s.arch)) set_mamba_hparams(s, hp);
  if (spec_is_moe(s)) {
    hp.expert_count = s.num_experts;
    hp.expert_used_count = s.num_experts_used;
    hp.expert_feed_forward_length = s.expert_feed_forward_length;
    hp.expert_shared_feed_forward_length = s.shared_expert_feed_forward_length;
    // mixtral's and granitehybrid's experts are feed_forward_length wide.
    if (s.arch == Arch::kMixtral || s.arch == Arch::kGraniteHybrid) {
      hp.feed_forward_length = s.expert_feed_forward_length;
    }
  }
  if (s.arch == Arch::kGemma4) set_gemma4_hparams(s, hp);
  return hp;
}

std::vector<float> llama3_rope_factors(uint32_t rope_dims, float freq_base, float factor, float low, float high,
                                       float original_context) {
  std::vector<float> factors(rope_dims / 2);
  const double low_wavelength = original_context / low, high_wavelength = original_context / high;
  for (uint32_t i = 0; i < rope_dims / 2; ++i) {
    const double freq = std::pow(static_cast<double>(freq_base), -2.0 * i / rope_dims);
    const double wavelength = 2.0 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelength > low_wavelength) {
      f = factor;
    } else if (wavelength >= high_wavelength) {
      const double smooth = (original_context / wavelength - low) / (high - low);
      f = 1.0 / ((1.0 - smooth) / factor + smooth);
    }
    factors[i] = static_cast<float>(f);
  }
  return factors;
}

std::vector<float> longrope_factors(uint32_t rope_dims, bool long_factors) {
  const size_t n = rope_dims / 2;
  const float top = long_factors ? 4.0f : 1.2f;
  std::vector<float> f(n, 1.0f);
  for (size_t i = 1; i < n; ++i) f[i] = 1.0f + (top - 1.0f) * static_cast<float>(i) / static_cast<float>(n - 1);
  return f;
}

std::string_view chatml_template() {
  return "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
         "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
         "{{ '<|im_start|>assistant\\n' }}{% endif %}";
}

Result<RandomModelSummary> make_random_model(const RandomModelSpec& spec, const std::string& path,
                                             const ProgressFn& progress) {
  MET_RETURN_IF_ERROR(validate_spec(spec));
  const ModelHParams hp = spec_hparams(spec);
  SyntheticVocabOptions vopt;
  const bool qwen = spec.arch == Arch::kQwen2 || spec.arch == Arch::kQwen3 || spec.arch == Arch::kQwen3Moe ||
                    arch_is_hybrid(spec.arch);
  const bool gpt_oss = spec.arch == Arch::kGptOss;
  vopt.kind = spec.tokenizer.value_or(qwen || gpt_oss ? VocabKind::kBpe : VocabKind::kSpm);
  vopt.size = spec.vocab_size;
  vopt.seed = spec.seed;
  vopt.bpe_pre = qwen ? "qwen2" : gpt_oss ? "gpt-4o" : "llama-bpe";
  vopt.control_tokens = spec.control_tokens;
  // Phi-3's vocab has it, and llama.cpp's loader looks it up in any model named phi3.
  if (spec.arch == Arch::kPhi3) vopt.control_tokens.push_back("<|endoftext|>");
  MET_ASSIGN_OR_RETURN(SyntheticVocab vocab, make_synthetic_vocab(vopt));
  if (arch_is_encoder(spec.arch)) {
    if (vopt.kind != VocabKind::kSpm) {
      return invalid_argument("{} takes a WordPiece vocab, made from --tokenizer spm", arch_name(spec.arch));
    }
    vocab = as_wordpiece(std::move(vocab));
  }

  GgufWriter writer;
  write_hparams(spec, hp, writer.metadata());
  writer.set("general.file_type", *llama_file_type(spec.dtype));
  writer.set("general.quantization_version", uint32_t{2});
  write_vocab_metadata(vocab, writer.metadata());
  if (!arch_is_encoder(spec.arch)) {  // an encoder is never chatted with
    writer.set("tokenizer.chat_template",
               spec.chat_template.empty() ? std::string(chatml_template()) : spec.chat_template);
  }

  RandomModelSummary summary;
  const std::vector<TensorSpec> specs = arch_tensors(spec.arch, hp, spec.tied_output);
  const std::vector<uint64_t> seeds = tensor_seeds(spec, hp, specs);
  const std::string eh_proj = fmt::format("blk.{}.nextn.eh_proj.weight", hp.num_layers);
  const auto embd_index = static_cast<size_t>(
      std::find_if(specs.begin(), specs.end(), [](const TensorSpec& t) { return t.name == "token_embd.weight"; }) -
      specs.begin());
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& t = specs[i];
    const GgmlType type = storage_type(t, spec.dtype, summary.fallbacks);
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    summary.num_params += n;
    const int threads = std::max(1, spec.num_threads);
    auto fill = spec.mtp_copies_last_layer && t.name == eh_proj ? embedding_path_fill(t, type)
                : spec.successor_head && t.name == "output.weight" && embd_index < specs.size()
                    ? successor_head_fill(t, type, seeds[embd_index], threads)
                    : tensor_fill(t, type, seeds[i], threads, is_branch_output(t.name) ? spec.branch_scale : 1.0f);
    auto counted = [fill, i, total = specs.size(), &progress](std::span<uint8_t> out) -> Status {
      MET_RETURN_IF_ERROR(fill(out));
      if (progress) progress(i + 1, total);
      return ok_status();
    };
    MET_RETURN_IF_ERROR(writer.add_tensor(t.name, t.shape, type, counted));
  }
  for (const bool long_factors : {true, false}) {
    if (!spec.longrope) break;
    const std::vector<float> factors = longrope_factors(hp.rope_dims, long_factors);
    const char* name = long_factors ? "rope_factors_long.weight" : "rope_factors_short.weight";
    MET_RETURN_IF_ERROR(writer.add_tensor(name, {factors.size()}, GgmlType::kF32,
                                          [factors](std::span<uint8_t> out) {
                                            std::memcpy(out.data(), factors.data(), out.size());
                                            return ok_status();
                                          }));
  }
  if (spec.arch == Arch::kGemma4 && gemma4_has_global_layer(hp)) {
    const std::vector<float> factors = gemma4_rope_freqs(hp);
    MET_RETURN_IF_ERROR(writer.add_tensor("rope_freqs.weight", {factors.size()}, GgmlType::kF32,
                                          [factors](std::span<uint8_t> out) {
                                            std::memcpy(out.data(), factors.data(), out.size());
                                            return ok_status();
                                          }));
  }
  if (spec.llama3_rope) {
    const std::vector<float> factors = llama3_rope_factors(hp.rope_dims, hp.rope_freq_base);
    MET_RETURN_IF_ERROR(writer.add_tensor("rope_freqs.weight", {factors.size()}, GgmlType::kF32,
                                          [factors](std::span<uint8_t> out) {
                                            std::memcpy(out.data(), factors.data(), out.size());
                                            return ok_status();
                                          }));
  }
  MET_RETURN_IF_ERROR(writer.write_file(path));
  std::error_code ec;
  summary.file_bytes = std::filesystem::file_size(path, ec);
  return summary;
}

}  // namespace met
