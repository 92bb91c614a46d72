// `met info` gathering and rendering. Tested by tests/cli/model_info_test.cc.
#include "cli/model_info.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "model/file_type.h"

namespace met {
namespace {

std::string human_bytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024.0 && u < 4) v /= 1024.0, ++u;
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string human_count(uint64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f}B", static_cast<double>(n) / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
  if (n >= 1'000) return fmt::format("{:.1f}K", static_cast<double>(n) / 1e3);
  return fmt::format("{}", n);
}

// Info reports what it can: a mistyped optional key reads as absent.
template <typename T>
T or_default(Result<T> r, T fallback) {
  return r.ok() ? std::move(r).value() : fallback;
}

void gather_vocab(const GgufMetadata& md, ModelInfo& info) {
  info.vocab_model = or_default(md.get_string_or("tokenizer.ggml.model", ""), std::string());
  info.vocab_pre = or_default(md.get_string_or("tokenizer.ggml.pre", ""), std::string());
  auto tokens = md.get_string_array("tokenizer.ggml.tokens");
  std::vector<std::string> texts = tokens.ok() ? std::move(tokens).value() : std::vector<std::string>{};
  info.vocab_size = texts.size();
  if (auto merges = md.get_array("tokenizer.ggml.merges"); merges.ok()) {
    info.num_merges = (*merges)->size();
  }
  static const std::pair<const char*, const char*> kRoles[] = {
      {"bos", "bos"}, {"eos", "eos"}, {"eot", "eot"}, {"eom", "eom"}, {"unk", "unknown"},
      {"pad", "padding"}, {"sep", "seperator"}, {"mask", "mask"}};
  for (const auto& [role, key_part] : kRoles) {
    auto id = md.get_u32(fmt::format("tokenizer.ggml.{}_token_id", key_part));
    if (!id.ok() || *id >= texts.size()) continue;  // absent, or -1 meaning none
    info.special_tokens.push_back({role, *id, texts[*id]});
  }
  info.has_chat_template = md.contains("tokenizer.chat_template");
}

// A tensor holding one slice per routed expert in its last dimension.
bool is_expert_tensor(const GgufTensorInfo& t, uint32_t num_experts) {
  return t.name.find("_exps.") != std::string::npos && !t.shape.empty() && t.shape.back() == num_experts;
}

// "24 (18 gated delta, 6 attention) + 1 MTP" for a hybrid model, else "24".
std::string layers_text(const ModelHParams& hp) {
  std::string out = fmt::format("{}", hp.num_layers);
  if (hp.ssm_kind == SsmKind::kMamba2) {
    out += fmt::format(" ({} Mamba2, {} attention", hp.num_recurrent_layers(), hp.num_attention_layers());
    const uint32_t ffn_only = hp.num_layers - hp.num_recurrent_layers() - hp.num_attention_layers();
    out += ffn_only > 0 ? fmt::format(", {} MLP)", ffn_only) : std::string(")");
  } else if (hp.is_hybrid()) {
    out += fmt::format(" ({} gated delta, {} attention)", hp.num_recurrent_layers(),
                       hp.num_layers - hp.num_recurrent_layers());
  }
  if (hp.nextn_predict_layers > 0) out += fmt::format(" + {} MTP", hp.nextn_predict_layers);
  return out;
}

std::string gated_delta_text(const ModelHParams& hp) {
  return fmt::format("state {}, {} key heads, {} value heads, conv kernel {}; recurrent state {} ({} bytes) per "
                     "sequence",
                     hp.ssm_state_size, hp.ssm_group_count, hp.ssm_time_step_rank, hp.ssm_conv_kernel,
                     human_bytes(hp.recurrent_state_bytes()), hp.recurrent_state_bytes());
}

std::string mamba2_text(const ModelHParams& hp) {
  return fmt::format("d_inner {}, d_state {}, {} heads of {}, groups {}, conv kernel {}; recurrent state {} ({} "
                     "bytes) per sequence",
                     hp.ssm_inner_size, hp.ssm_state_size, hp.ssm_time_step_rank, hp.mamba_head_dim(),
                     hp.ssm_group_count, hp.ssm_conv_kernel, human_bytes(hp.recurrent_state_bytes()),
                     hp.recurrent_state_bytes());
}

nlohmann::json mamba2_json(const ModelHParams& hp) {
  nlohmann::json layers = nlohmann::json::array(), mlp_layers = nlohmann::json::array();
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    if (hp.layer_is_recurrent(i)) layers.push_back(i);
    if (hp.layer_is_ffn_only(i)) mlp_layers.push_back(i);
  }
  return {{"conv_kernel", hp.ssm_conv_kernel},
          {"inner_size", hp.ssm_inner_size},
          {"state_size", hp.ssm_state_size},
          {"heads", hp.ssm_time_step_rank},
          {"head_dim", hp.mamba_head_dim()},
          {"groups", hp.ssm_group_count},
          {"layers", layers},
          {"mlp_layers", mlp_layers},
          {"state_bytes_per_sequence", hp.recurrent_state_bytes()}};
}

bool has_granite_scales(const ModelHParams& hp) {
  return hp.embedding_scale != 0.0f || hp.residual_scale != 0.0f || hp.attention_scale != 0.0f ||
         hp.logit_scale != 0.0f;
}

nlohmann::json gated_delta_json(const ModelHParams& hp) {
  nlohmann::json layers = nlohmann::json::array();
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    if (hp.layer_is_recurrent(i)) layers.push_back(i);
  }
  return {{"conv_kernel", hp.ssm_conv_kernel},
          {"inner_size", hp.ssm_inner_size},
          {"state_size", hp.ssm_state_size},
          {"key_heads", hp.ssm_group_count},
          {"value_heads", hp.ssm_time_step_rank},
          {"layers", layers},
          {"state_bytes_per_sequence", hp.recurrent_state_bytes()}};
}

}  // namespace

uint64_t active_bytes_per_token(std::span<const GgufTensorInfo> tensors, const ModelHParams* hparams) {
  return decode_step_weight_bytes(tensors, hparams, 1);
}

uint64_t decode_step_weight_bytes(std::span<const GgufTensorInfo> tensors, const ModelHParams* hparams,
                                  int64_t batch) {
  const bool moe = hparams != nullptr && hparams->is_moe();
  const bool tied = std::none_of(tensors.begin(), tensors.end(),
                                 [](const GgufTensorInfo& t) { return t.name == "output.weight"; });
  const auto tokens = static_cast<uint64_t>(std::max<int64_t>(batch, 1));
  uint64_t n = 0;
  for (const GgufTensorInfo& t : tensors) {
    if (t.name == "token_embd.weight") {
      const uint64_t rows = t.shape.size() > 1 ? t.shape[1] : 1;
      n += t.num_bytes / rows * std::min(tokens, rows) + (tied ? t.num_bytes : 0);
    } else if (moe && is_expert_tensor(t, hparams->expert_count)) {
      const uint64_t experts = std::min<uint64_t>(tokens * hparams->expert_used_count, hparams->expert_count);
      n += t.num_bytes / hparams->expert_count * experts;
    } else {
      n += t.num_bytes;
    }
  }
  return n;
}

std::map<GgmlType, uint64_t> matmul_macs_per_token(std::span<const GgufTensorInfo> tensors,
                                                   const ModelHParams* hparams) {
  const bool moe = hparams != nullptr && hparams->is_moe();
  const bool tied = std::none_of(tensors.begin(), tensors.end(),
                                 [](const GgufTensorInfo& t) { return t.name == "output.weight"; });
  std::map<GgmlType, uint64_t> macs;
  for (const GgufTensorInfo& t : tensors) {
    if (t.shape.size() < 2 || (t.name == "token_embd.weight" && !tied)) continue;
    if (moe && is_expert_tensor(t, hparams->expert_count)) {
      macs[t.type] += t.num_elements / hparams->expert_count * hparams->expert_used_count;
    } else {
      macs[t.type] += t.num_elements;
    }
  }
  return macs;
}

std::string vocab_type_label(const std::string& model) {
  if (model == "llama") return "SentencePiece (llama)";
  if (model == "gpt2") return "byte-level BPE (gpt2)";
  if (model == "bert") return "WordPiece (bert)";
  if (model == "t5") return "Unigram (t5)";
  if (model == "rwkv") return "RWKV (rwkv)";
  if (model.empty()) return "none";
  return fmt::format("unknown ({})", model);
}

Result<ModelInfo> gather_model_info(const GgufFile& file, const std::string& path) {
  ModelInfo info;
  const GgufMetadata& md = file.metadata();
  info.path = path;
  std::error_code ec;
  info.hf_folder = std::filesystem::is_directory(path, ec);
  info.gguf_version = file.version();
  info.file_bytes = file.file_size();
  info.alignment = file.alignment();
  info.architecture = or_default(md.architecture(), std::string());
  info.name = or_default(md.get_string_or("general.name", ""), std::string());
  if (md.contains("general.file_type")) {
    if (auto ft = md.get_u32("general.file_type"); ft.ok()) info.file_type = *ft;
  }
  if (auto hp = read_hparams(md); hp.ok()) {
    info.hparams = std::move(hp).value();
  } else {
    info.hparams_error = hp.status().message();
  }
  for (const GgufTensorInfo& t : file.tensors()) {
    DtypeTotals& d = info.by_dtype[std::string(ggml_type_name(t.type))];
    ++d.num_tensors;
    d.num_bytes += t.num_bytes;
    d.num_elements += t.num_elements;
    info.num_params += t.num_elements;
    ++info.num_tensors;
  }
  info.active_params = info.num_params;
  if (info.hparams && info.hparams->is_moe()) {
    // Every expert tensor (MTP blocks' too) less the experts a token skips.
    const ModelHParams& hp = *info.hparams;
    uint64_t unused = 0;
    for (const GgufTensorInfo& t : file.tensors()) {
      if (is_expert_tensor(t, hp.expert_count)) {
        unused += t.num_elements / hp.expert_count * (hp.expert_count - hp.expert_used_count);
      }
    }
    info.active_params = unused < info.num_params ? info.num_params - unused : 0;
  }
  info.active_bytes = active_bytes_per_token(file.tensors(), info.hparams ? &*info.hparams : nullptr);
  gather_vocab(md, info);
  return info;
}

std::string render_model_info_text(const ModelInfo& info) {
  std::string out;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("{:<15}{}\n", label, value);
  };
  if (info.hf_folder) {
    line("file", fmt::format("{} (Hugging Face folder, {} as GGUF)", info.path, human_bytes(info.file_bytes)));
  } else {
    line("file", fmt::format("{} ({}, GGUF v{}, alignment {})", info.path, human_bytes(info.file_bytes),
                             info.gguf_version, info.alignment));
  }
  line("architecture", info.architecture.empty() ? "(none)" : info.architecture);
  if (!info.name.empty()) line("name", info.name);
  if (info.file_type) {
    auto name = llama_file_type_name(*info.file_type);
    line("file type", name ? std::string(*name) : fmt::format("unknown ({})", *info.file_type));
  }
  if (info.hparams) {
    const ModelHParams& hp = *info.hparams;
    line("layers", layers_text(hp));
    line("embedding", fmt::format("{}", hp.embedding_length));
    line("heads", fmt::format("{} (kv heads {}, head dim {})", hp.num_heads, hp.num_kv_heads, hp.head_dim));
    line("feed-forward", fmt::format("{}", hp.feed_forward_length));
    line("context", fmt::format("{}", hp.context_length));
    std::string rope = fmt::format("dims {}, freq base {}, scaling {} (factor {})", hp.rope_dims,
                                   hp.rope_freq_base, rope_scaling_name(hp.rope_scaling.kind),
                                   hp.rope_scaling.factor);
    if (hp.ssm_kind == SsmKind::kGatedDelta && !hp.ssm_grouped_v_heads) {
      rope += fmt::format(", sections [{}]", fmt::join(hp.rope_sections, ", "));
    }
    line("rope", hp.uses_rope ? rope : std::string("none"));
    if (hp.ssm_kind == SsmKind::kGatedDelta) line("gated delta", gated_delta_text(hp));
    if (hp.ssm_kind == SsmKind::kMamba2) line("mamba2", mamba2_text(hp));
    if (has_granite_scales(hp)) {
      line("scales", fmt::format("embedding {}, residual {}, attention {}, logit {} (0: none)", hp.embedding_scale,
                                 hp.residual_scale, hp.attention_scale, hp.logit_scale));
    }
    if (hp.causal_attention) {
      line("rms norm eps", fmt::format("{}", hp.rms_norm_eps));
    } else {
      line("encoder", fmt::format("attention over the whole input (not causal), layer norm eps {}",
                                  hp.layer_norm_eps));
    }
    if (hp.pooling.has_value()) line("pooling", std::string(pooling_name(*hp.pooling)));
    if (hp.is_moe()) {
      std::string experts = fmt::format("{}, {} used per token, feed-forward {}", hp.expert_count,
                                        hp.expert_used_count, hp.expert_feed_forward_length);
      if (hp.expert_shared_feed_forward_length > 0) {
        experts += fmt::format(", shared expert {}", hp.expert_shared_feed_forward_length);
      }
      line("experts", experts);
    }
    if (hp.sliding_window > 0) {
      uint32_t windowed = 0;
      for (uint32_t i = 0; i < hp.num_layers; ++i) windowed += hp.layer_is_swa(i) ? 1 : 0;
      line("sliding window", fmt::format("{} positions on {} of {} layers (pattern {}), rope base {}",
                                         hp.sliding_window, windowed, hp.num_layers, hp.swa_pattern,
                                         hp.rope_freq_base_swa));
    }
  } else {
    line("hparams", "unavailable: " + info.hparams_error);
  }
  line("parameters", fmt::format("{} ({})", human_count(info.num_params), info.num_params));
  if (info.active_params != info.num_params) {
    line("active", fmt::format("{} parameters per token ({})", human_count(info.active_params),
                               info.active_params));
  }
  if (info.num_tensors > 0) {
    line("read per token", fmt::format("{} of weights ({} bytes)", human_bytes(info.active_bytes), info.active_bytes));
  }
  std::string dtypes;
  for (const auto& [name, d] : info.by_dtype) {
    dtypes += fmt::format("{}{} x{} ({})", dtypes.empty() ? "" : ", ", name, d.num_tensors,
                          human_bytes(d.num_bytes));
  }
  line("tensors", fmt::format("{}{}{}", info.num_tensors, dtypes.empty() ? "" : ": ", dtypes));
  std::string vocab = fmt::format("{}, {} tokens", vocab_type_label(info.vocab_model), info.vocab_size);
  if (!info.vocab_pre.empty()) vocab += fmt::format(", pre-tokenizer {}", info.vocab_pre);
  if (info.num_merges > 0) vocab += fmt::format(", {} merges", info.num_merges);
  line("vocab", vocab);
  std::string special;
  for (const auto& t : info.special_tokens) {
    special += fmt::format("{}{} {} '{}'", special.empty() ? "" : ", ", t.role, t.id, t.text);
  }
  line("special tokens", special.empty() ? "(none)" : special);
  line("chat template", info.has_chat_template ? "yes" : "no");
  return out;
}

nlohmann::json model_info_json(const ModelInfo& info) {
  nlohmann::json j;
  j["file"] = info.path;
  j["format"] = info.hf_folder ? "hf-folder" : "gguf";
  j["gguf_version"] = info.gguf_version;
  j["file_bytes"] = info.file_bytes;
  j["alignment"] = info.alignment;
  j["architecture"] = info.architecture;
  j["name"] = info.name;
  j["file_type"] = info.file_type ? nlohmann::json(*info.file_type) : nlohmann::json(nullptr);
  if (info.hparams) {
    const ModelHParams& hp = *info.hparams;
    j["hparams"] = {{"layers", hp.num_layers},
                    {"embedding", hp.embedding_length},
                    {"heads", hp.num_heads},
                    {"kv_heads", hp.num_kv_heads},
                    {"head_dim", hp.head_dim},
                    {"feed_forward", hp.feed_forward_length},
                    {"context", hp.context_length},
                    {"rms_norm_eps", hp.rms_norm_eps},
                    {"causal", hp.causal_attention},
                    {"rope",
                     {{"dims", hp.rope_dims},
                      {"freq_base", hp.rope_freq_base},
                      {"scaling", rope_scaling_name(hp.rope_scaling.kind)},
                      {"factor", hp.rope_scaling.factor}}}};
    if (hp.pooling.has_value()) j["hparams"]["pooling"] = pooling_name(*hp.pooling);
    if (hp.is_moe()) {
      j["hparams"]["experts"] = {{"count", hp.expert_count},
                                 {"used", hp.expert_used_count},
                                 {"feed_forward", hp.expert_feed_forward_length},
                                 {"shared_feed_forward", hp.expert_shared_feed_forward_length}};
    }
    if (hp.ssm_kind == SsmKind::kGatedDelta) {
      j["hparams"]["gated_delta"] = gated_delta_json(hp);
      if (!hp.ssm_grouped_v_heads) j["hparams"]["rope"]["sections"] = hp.rope_sections;
    }
    if (hp.ssm_kind == SsmKind::kMamba2) j["hparams"]["mamba2"] = mamba2_json(hp);
    j["hparams"]["rope"]["enabled"] = hp.uses_rope;
    if (has_granite_scales(hp)) {
      j["hparams"]["scales"] = {{"embedding", hp.embedding_scale},
                                {"residual", hp.residual_scale},
                                {"attention", hp.attention_scale},
                                {"logit", hp.logit_scale}};
    }
    j["hparams"]["mtp_layers"] = hp.nextn_predict_layers;
    if (hp.sliding_window > 0) {
      nlohmann::json layers = nlohmann::json::array();
      for (uint32_t i = 0; i < hp.num_layers; ++i) {
        if (hp.layer_is_swa(i)) layers.push_back(i);
      }
      j["hparams"]["sliding_window"] = {{"window", hp.sliding_window},
                                        {"pattern", hp.swa_pattern},
                                        {"freq_base", hp.rope_freq_base_swa},
                                        {"layers", layers}};
    }
  } else {
    j["hparams"] = nullptr;
    j["hparams_error"] = info.hparams_error;
  }
  j["parameters"] = info.num_params;
  j["active_parameters"] = info.active_params;
  j["active_bytes"] = info.active_bytes;
  nlohmann::json by_dtype = nlohmann::json::object();
  for (const auto& [name, d] : info.by_dtype) {
    by_dtype[name] = {{"tensors", d.num_tensors}, {"bytes", d.num_bytes}, {"elements", d.num_elements}};
  }
  j["tensors"] = {{"count", info.num_tensors}, {"by_dtype", by_dtype}};
  j["vocab"] = {{"model", info.vocab_model},
                {"type", vocab_type_label(info.vocab_model)},
                {"pre", info.vocab_pre},
                {"size", info.vocab_size},
                {"merges", info.num_merges}};
  nlohmann::json special = nlohmann::json::object();
  for (const auto& t : info.special_tokens) special[t.role] = {{"id", t.id}, {"text", t.text}};
  j["special_tokens"] = special;
  j["chat_template"] = info.has_chat_template;
  return j;
}

}  // namespace met
