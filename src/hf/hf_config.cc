// parse_hf_config and add_hf_config_metadata. Tested by tests/hf/hf_config_test.cc.
#include "hf/hf_config.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include <nlohmann/json.hpp>

namespace met {
namespace {

using Json = nlohmann::json;

// convert_hf_to_gguf.py writes Mistral as llama; qwen2/qwen3 use NeoX rope in
// GGUF, so their q/k rows stay in HF's order.
const std::array<HfArchInfo, 6>& supported_architectures() {
  static const std::array<HfArchInfo, 6> kArchitectures = {{{"LlamaForCausalLM", "llama", true, false},
                                                            {"MistralForCausalLM", "llama", true, false},
                                                            {"Qwen2ForCausalLM", "qwen2", false, false},
                                                            {"Qwen3ForCausalLM", "qwen3", false, false},
                                                            {"BertModel", "bert", false, true},
                                                            {"BertForMaskedLM", "bert", false, true}}};
  return kArchitectures;
}

Result<HfArchInfo> find_architecture(const Json& j) {
  const auto it = j.find("architectures");
  if (it == j.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) {
    return invalid_argument("key 'architectures' is missing or not a list of names");
  }
  const std::string name = (*it)[0].get<std::string>();
  for (const HfArchInfo& a : supported_architectures()) {
    if (a.hf_name == name) return a;
  }
  return unimplemented("architectures {} is not supported (met converts LlamaForCausalLM, MistralForCausalLM, "
                       "Qwen2ForCausalLM, Qwen3ForCausalLM, BertModel and BertForMaskedLM)",
                       it->dump());
}

// A positive integer key (or `fallback` when absent and a fallback is given).
Result<uint32_t> size_key(const Json& j, const char* key, std::optional<uint32_t> fallback = std::nullopt) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (fallback) return *fallback;
    return not_found("key '{}' is missing", key);
  }
  if (!it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<int64_t>() > INT32_MAX) {
    return invalid_argument("key '{}' is {}, expected a positive integer", key, it->dump());
  }
  return static_cast<uint32_t>(it->get<int64_t>());
}

Result<float> float_key(const Json& j, const char* key, float fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return invalid_argument("key '{}' is {}, expected a number", key, it->dump());
  }
  return static_cast<float>(it->get<double>());
}

Result<HfRopeScaling> read_rope_scaling(const Json& j) {
  HfRopeScaling rs;
  const auto it = j.find("rope_scaling");
  if (it == j.end() || it->is_null()) return rs;
  if (!it->is_object()) return invalid_argument("key 'rope_scaling' is {}, expected an object", it->dump());
  const auto type = it->contains("rope_type") ? it->find("rope_type") : it->find("type");
  if (type == it->end() || !type->is_string()) return invalid_argument("rope_scaling has no 'rope_type'");
  rs.type = type->get<std::string>();
  if (rs.type == "default") {
    rs.type = "none";
    return rs;
  }
  if (rs.type != "linear" && rs.type != "yarn" && rs.type != "llama3") {
    return unimplemented("rope_scaling type '{}' is not supported (linear, yarn and llama3 are)", rs.type);
  }
  MET_ASSIGN_OR_RETURN(rs.factor, float_key(*it, "factor", 1.0f));
  if (!(rs.factor > 0.0f)) return invalid_argument("rope_scaling factor {} must be positive", rs.factor);
  MET_ASSIGN_OR_RETURN(rs.low_freq_factor, float_key(*it, "low_freq_factor", 1.0f));
  MET_ASSIGN_OR_RETURN(rs.high_freq_factor, float_key(*it, "high_freq_factor", 4.0f));
  const uint32_t default_original = rs.type == "llama3" ? 8192 : 0;
  Result<uint32_t> original = size_key(*it, "original_max_position_embeddings", default_original);
  if (!original.ok()) return original.status().with_prefix("rope_scaling");
  rs.original_context_length = *original;
  if (rs.type == "llama3" && !(rs.high_freq_factor > rs.low_freq_factor)) {
    return invalid_argument("rope_scaling high_freq_factor {} must exceed low_freq_factor {}", rs.high_freq_factor,
                            rs.low_freq_factor);
  }
  return rs;
}

Result<HfConfig> read_config(const Json& j) {
  HfConfig c;
  MET_ASSIGN_OR_RETURN(c.arch, find_architecture(j));
  MET_ASSIGN_OR_RETURN(c.num_layers, size_key(j, "num_hidden_layers"));
  MET_ASSIGN_OR_RETURN(c.hidden_size, size_key(j, "hidden_size"));
  MET_ASSIGN_OR_RETURN(c.intermediate_size, size_key(j, "intermediate_size"));
  MET_ASSIGN_OR_RETURN(c.num_heads, size_key(j, "num_attention_heads"));
  MET_ASSIGN_OR_RETURN(c.num_kv_heads, size_key(j, "num_key_value_heads", c.num_heads));
  if (c.num_heads % c.num_kv_heads != 0) {
    return invalid_argument("num_key_value_heads {} does not divide num_attention_heads {}", c.num_kv_heads,
                            c.num_heads);
  }
  if (c.hidden_size % c.num_heads != 0 && !j.contains("head_dim")) {
    return invalid_argument("hidden_size {} is not a multiple of num_attention_heads {} and there is no head_dim",
                            c.hidden_size, c.num_heads);
  }
  MET_ASSIGN_OR_RETURN(c.head_dim, size_key(j, "head_dim", c.hidden_size / c.num_heads));
  MET_ASSIGN_OR_RETURN(c.context_length, size_key(j, "max_position_embeddings", 4096));
  MET_ASSIGN_OR_RETURN(c.vocab_size, size_key(j, "vocab_size"));
  MET_ASSIGN_OR_RETURN(c.rms_norm_eps, float_key(j, "rms_norm_eps", 1e-6f));
  MET_ASSIGN_OR_RETURN(c.rope_theta, float_key(j, "rope_theta", 10000.0f));
  const auto tie = j.find("tie_word_embeddings");
  if (tie != j.end() && !tie->is_boolean()) return invalid_argument("key 'tie_word_embeddings' is not a boolean");
  c.tie_word_embeddings = tie != j.end() && tie->get<bool>();
  MET_ASSIGN_OR_RETURN(c.rope_scaling, read_rope_scaling(j));
  if (c.arch.encoder) {
    MET_ASSIGN_OR_RETURN(c.layer_norm_eps, float_key(j, "layer_norm_eps", 1e-12f));
    MET_ASSIGN_OR_RETURN(c.type_vocab_size, size_key(j, "type_vocab_size", 2));
  }
  return c;
}

}  // namespace

Result<Pooling> parse_hf_pooling(std::string_view json_text) {
  const Json j = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return data_loss("the Pooling module's config.json is not a JSON object");
  const auto set = [&j](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
  };
  for (const char* unsupported :
       {"pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens"}) {
    if (set(unsupported)) return unimplemented("Pooling config.json: {} is not a pooling met runs", unsupported);
  }
  std::optional<Pooling> found;
  int num_set = 0;
  for (const auto& [key, pooling] : {std::pair{"pooling_mode_cls_token", Pooling::kCls},
                                     std::pair{"pooling_mode_mean_tokens", Pooling::kMean},
                                     std::pair{"pooling_mode_lasttoken", Pooling::kLast}}) {
    if (set(key)) found = pooling, ++num_set;
  }
  if (num_set != 1) return invalid_argument("Pooling config.json sets {} pooling modes, not one", num_set);
  return *found;
}

Result<HfConfig> parse_hf_config(std::string_view json_text) {
  const Json j = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return data_loss("config.json is not a JSON object");
  try {
    Result<HfConfig> config = read_config(j);
    if (!config.ok()) return config.status().with_prefix("config.json");
    return config;
  } catch (const nlohmann::json::exception& e) {  // a value of an unexpected type
    return data_loss("config.json: {}", e.what());
  }
}

void add_hf_config_metadata(const HfConfig& c, GgufMetadata& md) {
  const std::string& a = c.arch.gguf_arch;
  auto key = [&a](std::string_view suffix) { return fmt::format("{}.{}", a, suffix); };
  md.set("general.architecture", a);
  md.set(key("vocab_size"), c.vocab_size);
  md.set(key("context_length"), c.context_length);
  md.set(key("embedding_length"), c.hidden_size);
  md.set(key("feed_forward_length"), c.intermediate_size);
  md.set(key("block_count"), c.num_layers);
  md.set(key("attention.head_count"), c.num_heads);
  md.set(key("attention.head_count_kv"), c.num_kv_heads);
  md.set(key("attention.key_length"), c.head_dim);
  md.set(key("attention.value_length"), c.head_dim);
  if (c.arch.encoder) {
    md.set(key("attention.layer_norm_epsilon"), c.layer_norm_eps);
    md.set(key("attention.causal"), false);
    md.set("tokenizer.ggml.token_type_count", c.type_vocab_size);
    return;  // no rope
  }
  md.set(key("attention.layer_norm_rms_epsilon"), c.rms_norm_eps);
  md.set(key("rope.freq_base"), c.rope_theta);
  md.set(key("rope.dimension_count"), c.head_dim);
  const HfRopeScaling& rs = c.rope_scaling;
  if (rs.type == "linear" || rs.type == "yarn") {
    md.set(key("rope.scaling.type"), rs.type);
    md.set(key("rope.scaling.factor"), rs.factor);
    if (rs.original_context_length > 0) {
      md.set(key("rope.scaling.original_context_length"), rs.original_context_length);
    }
  }
}

}  // namespace met
