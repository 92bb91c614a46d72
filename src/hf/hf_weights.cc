// assemble_hf_weights. Tested by tests/hf/hf_model_test.cc.
#include "hf/hf_weights.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "gguf/quote_bytes.h"
#include "hf/hf_tensor_names.h"
#include "model/random_model.h"

namespace met {
namespace {

struct TensorRef {
  const SafetensorsTensor* tensor;
  const SafetensorsFile* file;
};
using TensorRefs = std::map<std::string, TensorRef, std::less<>>;

// Every tensor of the shards by name, then the `__metadata__` aliases whose
// target exists ("model.embed_tokens.weight": "lm_head.weight").
Result<TensorRefs> index_tensors(const std::vector<SafetensorsFile>& shards) {
  TensorRefs refs;
  for (const SafetensorsFile& shard : shards) {
    for (const SafetensorsTensor& t : shard.tensors()) {
      const auto [it, inserted] = refs.emplace(t.name, TensorRef{&t, &shard});
      if (!inserted) {
        return data_loss("tensor {} is in both {} and {}", quote_bytes(t.name), it->second.file->source_name(),
                         shard.source_name());
      }
    }
  }
  for (const SafetensorsFile& shard : shards) {
    for (const auto& [alias, target] : shard.metadata()) {
      const auto it = refs.find(target);
      if (!refs.contains(alias) && it != refs.end()) refs.emplace(alias, it->second);
    }
  }
  return refs;
}

Result<GgmlType> ggml_type_of(const TensorRef& ref) {
  switch (ref.tensor->dtype) {
    case SafetensorsDtype::kF32: return GgmlType::kF32;
    case SafetensorsDtype::kF16: return GgmlType::kF16;
    case SafetensorsDtype::kBF16: return GgmlType::kBF16;
    default:
      return unimplemented("{}: tensor {} is {}; met loads F32, F16 and BF16", ref.file->source_name(),
                           quote_bytes(ref.tensor->name), safetensors_dtype_name(ref.tensor->dtype));
  }
}

// The Hugging Face tensors the config's model cannot run without.
std::vector<std::string> required_tensors(const HfConfig& c) {
  if (c.arch.encoder) return {};  // BertForMaskedLM's live under "bert.": Model::load names what is missing
  std::vector<std::string> names = {"model.norm.weight"};
  for (uint32_t l = 0; l < c.num_layers; ++l) {
    for (const char* suffix : {"input_layernorm.weight", "post_attention_layernorm.weight",
                               "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                               "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
                               "mlp.down_proj.weight"}) {
      names.push_back(fmt::format("model.layers.{}.{}", l, suffix));
    }
  }
  return names;
}

class WeightBuilder {
 public:
  // Adds `ref` as the GGUF tensor `gguf_name`, permuting its rows for `heads` heads when > 0.
  Status add(const std::string& gguf_name, const TensorRef& ref, uint32_t heads) {
    MET_ASSIGN_OR_RETURN(GgmlType type, ggml_type_of(ref));
    const SafetensorsTensor& t = *ref.tensor;
    if (t.shape.empty() || t.shape.size() > 4) {
      return unimplemented("{}: tensor {} has {} dimensions", ref.file->source_name(), quote_bytes(t.name),
                           t.shape.size());
    }
    std::vector<uint64_t> shape(t.shape.rbegin(), t.shape.rend());  // GGUF: the contiguous dimension first
    std::span<const uint8_t> bytes = t.bytes;
    const size_t elem = safetensors_dtype_bytes(t.dtype);
    if (heads > 0) {
      if (t.shape.size() != 2 || t.shape[0] % (2 * uint64_t{heads}) != 0) {
        return invalid_argument("{}: tensor {} of shape [{}] cannot be split into {} heads of rope pairs",
                                ref.file->source_name(), quote_bytes(t.name), fmt::join(t.shape, ", "), heads);
      }
      bytes = keep(permute_rope_rows(t.bytes, t.shape[0], t.shape[1] * elem, heads));
    } else if (reinterpret_cast<uintptr_t>(t.bytes.data()) % elem != 0) {
      bytes = keep(std::vector<uint8_t>(t.bytes.begin(), t.bytes.end()));
    }
    if (shape.size() >= 2 && !matrix_type_) matrix_type_ = type;
    out_.tensors.push_back({{.name = gguf_name, .shape = std::move(shape), .type = type}, bytes});
    return ok_status();
  }

  void add_floats(const std::string& gguf_name, const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    const std::span<const uint8_t> kept = keep(std::move(bytes));
    out_.tensors.push_back({{.name = gguf_name, .shape = {values.size()}, .type = GgmlType::kF32}, kept});
  }

  HfWeights finish(std::vector<SafetensorsFile>& shards) {
    for (SafetensorsFile& shard : shards) {
      if (std::optional<MappedFile> m = shard.release_mapping()) out_.backing.mappings.push_back(std::move(*m));
    }
    const GgmlType type = matrix_type_.value_or(GgmlType::kF32);
    out_.file_type = type == GgmlType::kF16 ? 1 : type == GgmlType::kBF16 ? 32 : 0;
    return std::move(out_);
  }

 private:
  std::span<const uint8_t> keep(std::vector<uint8_t> bytes) {
    out_.backing.buffers.push_back(std::move(bytes));
    return out_.backing.buffers.back();  // a moved vector keeps its heap buffer
  }

  HfWeights out_;
  std::optional<GgmlType> matrix_type_;
};

Status add_mapped_tensors(const HfConfig& c, const TensorRefs& refs, WeightBuilder& builder) {
  for (const auto& [name, ref] : refs) {
    const bool embedding = name == "model.embed_tokens.weight" || name == "lm_head.weight";
    if (embedding && !c.arch.encoder) continue;  // add_embeddings
    const std::optional<HfTensorName> mapped = map_hf_tensor_name(name, c.arch.encoder);
    if (!mapped) {
      return unimplemented("{}: tensor {} is not a tensor of {}", ref.file->source_name(), quote_bytes(name),
                           c.arch.hf_name);
    }
    if (mapped->role == HfTensorRole::kIgnored) continue;
    const bool permute = mapped->role == HfTensorRole::kPermute && c.arch.permute_qk;
    const uint32_t heads = !permute ? 0 : mapped->is_key ? c.num_kv_heads : c.num_heads;
    MET_RETURN_IF_ERROR(builder.add(mapped->gguf_name, ref, heads));
  }
  return ok_status();
}

// token_embd from model.embed_tokens.weight (or lm_head.weight when the
// embeddings are tied and stored only there); output unless tied.
Status add_embeddings(const HfConfig& c, const TensorRefs& refs, WeightBuilder& builder) {
  const auto embed = refs.find("model.embed_tokens.weight");
  const auto head = refs.find("lm_head.weight");
  if (embed != refs.end()) {
    MET_RETURN_IF_ERROR(builder.add("token_embd.weight", embed->second, 0));
  } else if (head != refs.end() && c.tie_word_embeddings) {
    MET_RETURN_IF_ERROR(builder.add("token_embd.weight", head->second, 0));
  } else {
    return not_found("tensor 'model.embed_tokens.weight' is missing");
  }
  if (head != refs.end() && !c.tie_word_embeddings) MET_RETURN_IF_ERROR(builder.add("output.weight", head->second, 0));
  return ok_status();
}

}  // namespace

Result<HfWeights> assemble_hf_weights(const HfConfig& config, std::vector<SafetensorsFile> shards) {
  MET_ASSIGN_OR_RETURN(TensorRefs refs, index_tensors(shards));
  for (const std::string& name : required_tensors(config)) {
    if (!refs.contains(name)) return not_found("tensor '{}' is missing", name);
  }
  WeightBuilder builder;
  if (!config.arch.encoder) MET_RETURN_IF_ERROR(add_embeddings(config, refs, builder));
  MET_RETURN_IF_ERROR(add_mapped_tensors(config, refs, builder));
  const HfRopeScaling& rs = config.rope_scaling;
  if (rs.type == "llama3") {
    builder.add_floats("rope_freqs.weight",
                       llama3_rope_factors(config.head_dim, config.rope_theta, rs.factor, rs.low_freq_factor,
                                           rs.high_freq_factor, static_cast<float>(rs.original_context_length)));
  }
  return builder.finish(shards);
}

}  // namespace met
