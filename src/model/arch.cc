// Architecture tensor lists. Tested by tests/model/arch_test.cc.
#include "model/arch.h"

#include <fmt/format.h>

namespace met {

std::optional<Arch> parse_arch(std::string_view name) {
  for (Arch a : {Arch::kLlama, Arch::kMistral, Arch::kQwen2, Arch::kQwen3, Arch::kQwen3Moe, Arch::kMixtral,
                 Arch::kGptOss, Arch::kQwen35, Arch::kQwen35Moe, Arch::kQwen3Next, Arch::kGraniteHybrid,
                 Arch::kNemotronH, Arch::kGemma3, Arch::kGranite, Arch::kSmollm3, Arch::kOlmo2, Arch::kPhi3,
                 Arch::kGemma2, Arch::kGemma4, Arch::kBert, Arch::kNomicBert}) {
    if (arch_name(a) == name) return a;
  }
  return std::nullopt;
}

std::string_view arch_name(Arch arch) {
  switch (arch) {
    case Arch::kLlama: return "llama";
    case Arch::kMistral: return "mistral";
    case Arch::kQwen2: return "qwen2";
    case Arch::kQwen3: return "qwen3";
    case Arch::kQwen3Moe: return "qwen3moe";
    case Arch::kMixtral: return "mixtral";
    case Arch::kGptOss: return "gpt-oss";
    case Arch::kQwen35: return "qwen35";
    case Arch::kQwen35Moe: return "qwen35moe";
    case Arch::kQwen3Next: return "qwen3next";
    case Arch::kGraniteHybrid: return "granitehybrid";
    case Arch::kNemotronH: return "nemotron_h";
    case Arch::kGemma3: return "gemma3";
    case Arch::kGranite: return "granite";
    case Arch::kSmollm3: return "smollm3";
    case Arch::kOlmo2: return "olmo2";
    case Arch::kPhi3: return "phi3";
    case Arch::kGemma2: return "gemma2";
    case Arch::kGemma4: return "gemma4";
    case Arch::kBert: return "bert";
    case Arch::kNomicBert: return "nomic-bert";
  }
  return "unknown";
}

std::string_view gguf_arch_name(Arch arch) {
  return arch == Arch::kMistral || arch == Arch::kMixtral ? "llama" : arch_name(arch);
}

namespace {

// gated_shared: the shared expert has its gate vector ffn_gate_inp_shexp
// (granitehybrid's has none).
void add_moe_ffn(uint32_t layer, const ModelHParams& hp, bool biased, std::vector<TensorSpec>& t,
                 bool gated_shared = true) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, ff = hp.expert_feed_forward_length, n = hp.expert_count;
  t.push_back({name("ffn_gate_inp.weight"), {embd, n}, TensorRole::kRouter});
  t.push_back({name("ffn_gate_exps.weight"), {embd, ff, n}, TensorRole::kMatrix});
  t.push_back({name("ffn_down_exps.weight"), {ff, embd, n}, TensorRole::kMatrix});
  t.push_back({name("ffn_up_exps.weight"), {embd, ff, n}, TensorRole::kMatrix});
  if (biased) {
    t.push_back({name("ffn_gate_inp.bias"), {n}, TensorRole::kBias});
    t.push_back({name("ffn_gate_exps.bias"), {ff, n}, TensorRole::kBias});
    t.push_back({name("ffn_down_exps.bias"), {embd, n}, TensorRole::kBias});
    t.push_back({name("ffn_up_exps.bias"), {ff, n}, TensorRole::kBias});
  }
  const uint64_t sh = hp.expert_shared_feed_forward_length;
  if (sh == 0) return;
  if (gated_shared) t.push_back({name("ffn_gate_inp_shexp.weight"), {embd}, TensorRole::kRouter});
  t.push_back({name("ffn_gate_shexp.weight"), {embd, sh}, TensorRole::kMatrix});
  t.push_back({name("ffn_up_shexp.weight"), {embd, sh}, TensorRole::kMatrix});
  t.push_back({name("ffn_down_shexp.weight"), {sh, embd}, TensorRole::kMatrix});
}

void add_dense_ffn(uint32_t layer, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  t.push_back({name("ffn_gate.weight"), {embd, ff}, TensorRole::kMatrix});
  t.push_back({name("ffn_up.weight"), {embd, ff}, TensorRole::kMatrix});
  t.push_back({name("ffn_down.weight"), {ff, embd}, TensorRole::kMatrix});
}

// qwen35's gated attention: q and its gate in one matrix, per-head q/k norms.
void add_gated_attention(uint32_t layer, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
  t.push_back({name("attn_q.weight"), {embd, 2 * q_dim}, TensorRole::kMatrix});
  t.push_back({name("attn_k.weight"), {embd, kv_dim}, TensorRole::kMatrix});
  t.push_back({name("attn_v.weight"), {embd, kv_dim}, TensorRole::kMatrix});
  t.push_back({name("attn_output.weight"), {q_dim, embd}, TensorRole::kMatrix});
  t.push_back({name("attn_q_norm.weight"), {hp.head_dim}, TensorRole::kNorm});
  t.push_back({name("attn_k_norm.weight"), {hp.head_dim}, TensorRole::kNorm});
}

// qwen3next packs beta and alpha into one matrix, ssm_ba.
void add_gated_delta(uint32_t layer, const ModelHParams& hp, bool packed_ba, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, conv = hp.conv_dim(), value = hp.ssm_value_dim();
  const uint64_t v_heads = hp.ssm_time_step_rank;
  t.push_back({name("attn_qkv.weight"), {embd, conv}, TensorRole::kMatrix});
  t.push_back({name("attn_gate.weight"), {embd, value}, TensorRole::kMatrix});
  t.push_back({name("ssm_conv1d.weight"), {hp.ssm_conv_kernel, conv}, TensorRole::kConv});
  t.push_back({name("ssm_dt.bias"), {v_heads}, TensorRole::kBias});
  t.push_back({name("ssm_a"), {v_heads}, TensorRole::kDecay});
  if (packed_ba) {
    t.push_back({name("ssm_ba.weight"), {embd, 2 * v_heads}, TensorRole::kMatrix});
  } else {
    t.push_back({name("ssm_beta.weight"), {embd, v_heads}, TensorRole::kMatrix});
    t.push_back({name("ssm_alpha.weight"), {embd, v_heads}, TensorRole::kMatrix});
  }
  t.push_back({name("ssm_norm.weight"), {hp.ssm_state_size}, TensorRole::kNorm});
  t.push_back({name("ssm_out.weight"), {value, embd}, TensorRole::kMatrix});
}

// An MTP block's own tensors (its layer's are the trunk layers').
void add_mtp_tensors(uint32_t layer, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.nextn.{}", layer, what); };
  const uint64_t embd = hp.embedding_length;
  t.push_back({name("eh_proj.weight"), {2 * embd, embd}, TensorRole::kMatrix});
  t.push_back({name("enorm.weight"), {embd}, TensorRole::kNorm});
  t.push_back({name("hnorm.weight"), {embd}, TensorRole::kNorm});
  t.push_back({name("shared_head_norm.weight"), {embd}, TensorRole::kNorm});
}

// qwen35/qwen35moe/qwen3next: trunk layers (gated delta or gated attention),
// then the MTP blocks.
void add_hybrid_layers(Arch arch, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  const uint64_t embd = hp.embedding_length;
  for (uint32_t i = 0; i < hp.num_layers + hp.nextn_predict_layers; ++i) {
    auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
    t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
    t.push_back({name("post_attention_norm.weight"), {embd}, TensorRole::kNorm});
    if (hp.layer_is_recurrent(i)) {
      add_gated_delta(i, hp, arch == Arch::kQwen3Next, t);
    } else {
      add_gated_attention(i, hp, t);
    }
    if (hp.is_moe()) {
      add_moe_ffn(i, hp, false, t);
    } else {
      add_dense_ffn(i, hp, t);
    }
    if (i >= hp.num_layers) add_mtp_tensors(i, hp, t);
  }
}

void add_mamba2(uint32_t layer, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, conv = hp.conv_dim(), inner = hp.ssm_inner_size;
  const uint64_t heads = hp.ssm_time_step_rank, groups = hp.ssm_group_count;
  t.push_back({name("ssm_in.weight"), {embd, hp.mamba_in_proj_dim()}, TensorRole::kMatrix});
  t.push_back({name("ssm_conv1d.weight"), {hp.ssm_conv_kernel, conv}, TensorRole::kConv});
  t.push_back({name("ssm_conv1d.bias"), {conv}, TensorRole::kBias});
  t.push_back({name("ssm_dt.bias"), {heads}, TensorRole::kBias});
  t.push_back({name("ssm_a"), {1, heads}, TensorRole::kDecay});
  t.push_back({name("ssm_d"), {1, heads}, TensorRole::kSkip});
  t.push_back({name("ssm_norm.weight"), {inner / groups, groups}, TensorRole::kNorm});
  t.push_back({name("ssm_out.weight"), {inner, embd}, TensorRole::kMatrix});
}

void add_plain_attention(uint32_t layer, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
  t.push_back({name("attn_q.weight"), {embd, q_dim}, TensorRole::kMatrix});
  t.push_back({name("attn_k.weight"), {embd, kv_dim}, TensorRole::kMatrix});
  t.push_back({name("attn_v.weight"), {embd, kv_dim}, TensorRole::kMatrix});
  t.push_back({name("attn_output.weight"), {q_dim, embd}, TensorRole::kMatrix});
}

// granitehybrid/nemotron_h: per layer its norm, then its mixer and (granite)
// its FFN, or (nemotron_h's FFN-only layers) the relu² FFN alone.
void add_mamba_hybrid_layers(Arch arch, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
    t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
    if (hp.layer_is_ffn_only(i)) {
      t.push_back({name("ffn_down.weight"), {ff, embd}, TensorRole::kMatrix});
      t.push_back({name("ffn_up.weight"), {embd, ff}, TensorRole::kMatrix});
      continue;
    }
    if (hp.layer_is_recurrent(i)) {
      add_mamba2(i, hp, t);
    } else {
      add_plain_attention(i, hp, t);
    }
    if (arch == Arch::kNemotronH) continue;
    t.push_back({name("ffn_norm.weight"), {embd}, TensorRole::kNorm});
    if (hp.is_moe()) {
      add_moe_ffn(i, hp, false, t, /*gated_shared=*/false);
    } else {
      add_dense_ffn(i, hp, t);
    }
  }
}

// gemma2 and gemma3 (pre- and post-norms; gemma3 per-head q/k norms) and
// olmo2 (post-norms only, q/k norms over all heads), in llama.cpp's order.
void add_sandwich_layer(Arch arch, uint32_t i, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
  const uint64_t embd = hp.embedding_length;
  const bool gemma = arch == Arch::kGemma3 || arch == Arch::kGemma2;
  if (gemma) t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
  add_plain_attention(i, hp, t);
  if (arch != Arch::kGemma2) {
    t.push_back({name("attn_q_norm.weight"), {gemma ? hp.head_dim : hp.q_dim()}, TensorRole::kNorm});
    t.push_back({name("attn_k_norm.weight"), {gemma ? hp.head_dim : hp.kv_dim()}, TensorRole::kNorm});
  }
  t.push_back({name("post_attention_norm.weight"), {embd}, TensorRole::kNorm});
  if (gemma) t.push_back({name("ffn_norm.weight"), {embd}, TensorRole::kNorm});
  add_dense_ffn(i, hp, t);
  t.push_back({name("post_ffw_norm.weight"), {embd}, TensorRole::kNorm});
}

// phi3: fused QKV and gate-up.
void add_phi3_layer(uint32_t i, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
  const uint64_t qkv = uint64_t{hp.q_dim()} + 2 * uint64_t{hp.kv_dim()};
  t.push_back({name("attn_qkv.weight"), {embd, qkv}, TensorRole::kMatrix});
  t.push_back({name("attn_output.weight"), {hp.q_dim(), embd}, TensorRole::kMatrix});
  t.push_back({name("ffn_norm.weight"), {embd}, TensorRole::kNorm});
  t.push_back({name("ffn_down.weight"), {ff, embd}, TensorRole::kMatrix});
  t.push_back({name("ffn_up.weight"), {embd, 2 * ff}, TensorRole::kMatrix});
}

// gemma4: per-layer embeddings' global tensors.
void add_gemma4_globals(const ModelHParams& hp, std::vector<TensorSpec>& t) {
  const uint64_t embd = hp.embedding_length, pl = hp.embedding_length_per_layer;
  if (pl == 0) return;
  const uint64_t all = pl * hp.num_layers;
  t.push_back({"per_layer_token_embd.weight", {all, hp.vocab_size}, TensorRole::kMatrix});
  t.push_back({"per_layer_model_proj.weight", {embd, all}, TensorRole::kMatrix});
  t.push_back({"per_layer_proj_norm.weight", {pl}, TensorRole::kNorm});
}

// gemma4: one layer at its own sizes (see arch.h).
void add_gemma4_layer(uint32_t i, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
  const uint64_t embd = hp.embedding_length, hd = hp.layer_head_dim(i), ff = hp.layer_ffn_length(i);
  const uint64_t q_dim = hd * hp.num_heads, kv_dim = hd * hp.layer_kv_heads(i);
  t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
  t.push_back({name("attn_q.weight"), {embd, q_dim}, TensorRole::kMatrix});
  if (hp.layer_has_kv(i)) t.push_back({name("attn_k.weight"), {embd, kv_dim}, TensorRole::kMatrix});
  if (hp.layer_has_kv(i) && hp.layer_is_swa(i)) {
    t.push_back({name("attn_v.weight"), {embd, kv_dim}, TensorRole::kMatrix});
  }
  t.push_back({name("attn_output.weight"), {q_dim, embd}, TensorRole::kMatrix});
  t.push_back({name("attn_q_norm.weight"), {hd}, TensorRole::kNorm});
  if (hp.layer_has_kv(i)) t.push_back({name("attn_k_norm.weight"), {hd}, TensorRole::kNorm});
  t.push_back({name("post_attention_norm.weight"), {embd}, TensorRole::kNorm});
  t.push_back({name("layer_output_scale.weight"), {1}, TensorRole::kNorm});
  t.push_back({name("ffn_norm.weight"), {embd}, TensorRole::kNorm});
  t.push_back({name("ffn_gate.weight"), {embd, ff}, TensorRole::kMatrix});
  t.push_back({name("ffn_up.weight"), {embd, ff}, TensorRole::kMatrix});
  t.push_back({name("ffn_down.weight"), {ff, embd}, TensorRole::kMatrix});
  t.push_back({name("post_ffw_norm.weight"), {embd}, TensorRole::kNorm});
  const uint64_t pl = hp.embedding_length_per_layer;
  if (pl == 0) return;
  t.push_back({name("inp_gate.weight"), {embd, pl}, TensorRole::kMatrix});
  t.push_back({name("proj.weight"), {pl, embd}, TensorRole::kMatrix});
  t.push_back({name("post_norm.weight"), {embd}, TensorRole::kNorm});
}

}  // namespace

bool arch_is_mamba_hybrid(Arch arch) { return arch == Arch::kGraniteHybrid || arch == Arch::kNemotronH; }

bool arch_is_hybrid(Arch arch) {
  return arch == Arch::kQwen35 || arch == Arch::kQwen35Moe || arch == Arch::kQwen3Next;
}

std::vector<TensorSpec> arch_tensors(Arch arch, const ModelHParams& hp, bool tied_output) {
  if (arch_is_encoder(arch)) return encoder_tensors(arch, hp);
  const uint64_t embd = hp.embedding_length;
  const uint64_t q_dim = hp.q_dim();
  const uint64_t kv_dim = hp.kv_dim();
  std::vector<TensorSpec> t;
  t.push_back({"token_embd.weight", {embd, hp.vocab_size}, TensorRole::kMatrix});
  t.push_back({"output_norm.weight", {embd}, TensorRole::kNorm});
  // gemma2's output is always its token embedding (llama.cpp's loader reads no output.weight).
  if (!tied_output && arch != Arch::kGemma2) t.push_back({"output.weight", {embd, hp.vocab_size}, TensorRole::kMatrix});
  if (arch_is_hybrid(arch)) {
    add_hybrid_layers(arch, hp, t);
    return t;
  }
  if (arch_is_mamba_hybrid(arch)) {
    add_mamba_hybrid_layers(arch, hp, t);
    return t;
  }
  if (arch == Arch::kGemma4) {
    add_gemma4_globals(hp, t);
    for (uint32_t i = 0; i < hp.num_layers; ++i) add_gemma4_layer(i, hp, t);
    return t;
  }
  if (arch == Arch::kPhi3) {
    for (uint32_t i = 0; i < hp.num_layers; ++i) add_phi3_layer(i, hp, t);
    return t;
  }
  if (arch == Arch::kGemma2 || arch == Arch::kGemma3 || arch == Arch::kOlmo2) {
    for (uint32_t i = 0; i < hp.num_layers; ++i) add_sandwich_layer(arch, i, hp, t);
    return t;
  }
  // Dense and MoE transformers: the trunk's layers, then any MTP blocks
  // (met's test models: llama.cpp reads nextn for qwen35-class files only).
  for (uint32_t i = 0; i < hp.num_layers + hp.nextn_predict_layers; ++i) {
    auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
    if (i >= hp.num_layers) add_mtp_tensors(i, hp, t);
    t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
    t.push_back({name("attn_q.weight"), {embd, q_dim}, TensorRole::kMatrix});
    t.push_back({name("attn_k.weight"), {embd, kv_dim}, TensorRole::kMatrix});
    t.push_back({name("attn_v.weight"), {embd, kv_dim}, TensorRole::kMatrix});
    if (arch == Arch::kQwen2 || arch == Arch::kGptOss) {
      t.push_back({name("attn_q.bias"), {q_dim}, TensorRole::kBias});
      t.push_back({name("attn_k.bias"), {kv_dim}, TensorRole::kBias});
      t.push_back({name("attn_v.bias"), {kv_dim}, TensorRole::kBias});
    }
    if (arch == Arch::kQwen3 || arch == Arch::kQwen3Moe) {
      t.push_back({name("attn_q_norm.weight"), {hp.head_dim}, TensorRole::kNorm});
      t.push_back({name("attn_k_norm.weight"), {hp.head_dim}, TensorRole::kNorm});
    }
    t.push_back({name("attn_output.weight"), {q_dim, embd}, TensorRole::kMatrix});
    if (arch == Arch::kGptOss) {
      t.push_back({name("attn_output.bias"), {embd}, TensorRole::kBias});
      t.push_back({name("attn_sinks.weight"), {hp.num_heads}, TensorRole::kBias});
    }
    t.push_back({name(arch == Arch::kGptOss ? "post_attention_norm.weight" : "ffn_norm.weight"), {embd},
                 TensorRole::kNorm});
    if (hp.is_moe()) {
      add_moe_ffn(i, hp, arch == Arch::kGptOss, t);
      continue;
    }
    add_dense_ffn(i, hp, t);
  }
  return t;
}

}  // namespace met
