// LoRA adapter files. Tested by tests/model/lora_load_test.cc.
#include "model/lora_load.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>

#include "tensor/half.h"
#include "tensor/quantize.h"

namespace met {
namespace {

struct PairInfo {
  const GgufTensorInfo* a = nullptr;
  const GgufTensorInfo* b = nullptr;
};

struct TargetOf {
  int32_t layer = 0;
  LoraTarget target = LoraTarget::kNone;
};

// `base` as (layer, target): "blk.N.<target>.weight" or "output.weight".
std::optional<TargetOf> parse_target(std::string_view base) {
  if (base == "output.weight") return TargetOf{0, LoraTarget::kOutput};
  if (!base.starts_with("blk.") || !base.ends_with(".weight")) return std::nullopt;
  std::string_view rest = base.substr(4, base.size() - 4 - 7);
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  int32_t layer = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, layer);
  if (ec != std::errc() || end != rest.data() + dot || layer < 0) return std::nullopt;
  const std::string_view name = rest.substr(dot + 1);
  for (int t = 0; t < static_cast<int>(LoraTarget::kOutput); ++t) {
    if (name == lora_target_name(static_cast<LoraTarget>(t))) return TargetOf{layer, static_cast<LoraTarget>(t)};
  }
  return std::nullopt;
}

Status check_header(const GgufFile& file, const Model& model) {
  const GgufMetadata& md = file.metadata();
  MET_ASSIGN_OR_RETURN(std::string type, md.get_string_or("general.type", ""));
  if (type != "adapter") {
    return invalid_argument("general.type is '{}', not 'adapter': not a LoRA adapter file", type);
  }
  MET_ASSIGN_OR_RETURN(std::string adapter_type, md.get_string_or("adapter.type", ""));
  if (adapter_type != "lora") return invalid_argument("adapter.type is '{}', not 'lora'", adapter_type);
  MET_ASSIGN_OR_RETURN(std::string arch, md.get_string_or("general.architecture", ""));
  MET_ASSIGN_OR_RETURN(std::string model_arch, model.file().metadata().get_string_or("general.architecture", ""));
  if (arch != model_arch) {
    return invalid_argument("the adapter is for architecture '{}', the model is '{}'", arch, model_arch);
  }
  return ok_status();
}

Result<std::map<std::string, PairInfo>> pair_tensors(const GgufFile& file) {
  std::map<std::string, PairInfo> pairs;
  for (const GgufTensorInfo& t : file.tensors()) {
    const std::string_view name = t.name;
    const bool is_a = name.ends_with(".lora_a");
    if (!is_a && !name.ends_with(".lora_b")) {
      return invalid_argument("tensor '{}': an adapter's tensors end in .lora_a or .lora_b", t.name);
    }
    PairInfo& p = pairs[std::string(name.substr(0, name.size() - 7))];
    (is_a ? p.a : p.b) = &t;
  }
  for (const auto& [base, p] : pairs) {
    if (p.a == nullptr || p.b == nullptr) {
      return invalid_argument("tensor '{}.{}' has no {} beside it", base, p.a ? "lora_a" : "lora_b",
                              p.a ? "lora_b" : "lora_a");
    }
  }
  if (pairs.empty()) return invalid_argument("the adapter has no tensors");
  return pairs;
}

// The tensor's values as floats, row-major as stored.
Status decode(const GgufFile& file, const GgufTensorInfo& t, std::vector<float>& out) {
  if (t.type != GgmlType::kF32 && t.type != GgmlType::kF16 && t.type != GgmlType::kBF16 &&
      t.type != GgmlType::kQ8_0) {
    return invalid_argument("tensor '{}' is {}; adapters may be F32, F16, BF16 or Q8_0", t.name,
                            ggml_type_name(t.type));
  }
  out.resize(t.num_elements);
  const std::span<const uint8_t> bytes = file.tensor_data(t);
  const uint64_t cols = t.shape[0];
  const size_t row_bytes = ggml_row_bytes(t.type, cols).value_or(0);
  for (uint64_t r = 0; r < t.num_elements / cols; ++r) {
    MET_RETURN_IF_ERROR(dequantize_row(t.type, bytes.subspan(r * row_bytes, row_bytes),
                                       std::span<float>(out.data() + r * cols, cols)));
  }
  return ok_status();
}

// `w` is the base tensor's info (the model's file).
Status read_pair(const GgufFile& file, const GgufTensorInfo& w, const PairInfo& p, float alpha, float scale,
                 LoraPair& out) {
  const std::string& base = w.name;
  const uint64_t cols = w.shape[0], rows = w.shape.size() > 1 ? w.shape[1] : 1;
  const uint64_t rank = p.a->shape.size() > 1 ? p.a->shape[1] : 1;
  if (p.a->shape.size() != 2 || p.b->shape.size() != 2 || p.a->shape[0] != cols || p.b->shape[1] != rows) {
    return invalid_argument("tensor '{}' is {} × {}; its lora_a must be [{}, rank] and lora_b [rank, {}]", base, cols,
                            rows, cols, rows);
  }
  if (p.b->shape[0] != rank || rank == 0) {
    return invalid_argument("tensor '{}': lora_a has rank {}, lora_b {}", base, rank, p.b->shape[0]);
  }
  std::vector<float> b;
  MET_RETURN_IF_ERROR(decode(file, *p.a, out.a));
  MET_RETURN_IF_ERROR(decode(file, *p.b, b));
  out.rank = static_cast<int32_t>(rank);
  out.rows = static_cast<int64_t>(rows);
  out.cols = static_cast<int64_t>(cols);
  out.scale = alpha != 0.0f ? scale * alpha / static_cast<float>(rank) : scale;
  out.bp.assign(static_cast<size_t>(lora_panel_floats(out.rows, out.rank)), 0.0f);
  for (int64_t o = 0; o < out.rows; ++o) {
    for (int64_t k = 0; k < out.rank; ++k) {
      out.bp[static_cast<size_t>(lora_panel_index(o, k, out.rank))] = b[static_cast<size_t>(o * out.rank + k)];
    }
  }
  // An F16 pair is kept as F16: its values are those bits exactly.
  if (p.a->type == GgmlType::kF16 && p.b->type == GgmlType::kF16) {
    out.f16 = true;
    for (auto [from, to] : {std::pair{&out.a, &out.a16}, std::pair{&out.bp, &out.bp16}}) {
      to->resize(from->size());
      std::transform(from->begin(), from->end(), to->begin(), [](float v) { return f32_to_fp16(v); });
      std::vector<float>().swap(*from);
    }
  }
  return ok_status();
}

Status read_adapter(const GgufFile& file, const Model& model, float scale, LoraAdapter& out) {
  MET_RETURN_IF_ERROR(check_header(file, model));
  MET_ASSIGN_OR_RETURN(const float alpha, file.metadata().get_f32_or("adapter.lora.alpha", 0.0f));
  MET_ASSIGN_OR_RETURN(auto pairs, pair_tensors(file));
  out.layers.resize(model.hparams().num_layers);
  for (const auto& [base, p] : pairs) {
    const GgufTensorInfo* w = model.file().find_tensor(base);
    if (w == nullptr) {
      return invalid_argument("tensor '{}' has no base tensor in the model (an adapter for another model?)", base);
    }
    const std::optional<TargetOf> target = parse_target(base);
    const auto num_layers = static_cast<int32_t>(out.layers.size());
    if (!target || (target->target != LoraTarget::kOutput && target->layer >= num_layers)) {
      return invalid_argument("tensor '{}': met adapts attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, "
                              "ffn_down and output, not this one", base);
    }
    LoraPair& pair = target->target == LoraTarget::kOutput
                         ? out.output
                         : out.layers[static_cast<size_t>(target->layer)][static_cast<size_t>(target->target)];
    MET_RETURN_IF_ERROR(read_pair(file, *w, p, alpha, scale, pair));
    out.max_rank = std::max(out.max_rank, pair.rank);
  }
  return ok_status();
}

}  // namespace

Result<std::shared_ptr<const LoraAdapter>> lora_from_file(const GgufFile& file, const Model& model, std::string name,
                                                          float scale) {
  auto adapter = std::make_shared<LoraAdapter>();
  adapter->name = std::move(name);
  const Status s = read_adapter(file, model, scale, *adapter);
  if (!s.ok()) return s.with_prefix(file.source_name());
  return std::shared_ptr<const LoraAdapter>(std::move(adapter));
}

Result<std::shared_ptr<const LoraAdapter>> load_lora(const std::string& path, const Model& model, std::string name,
                                                     float scale) {
  MET_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(path));
  return lora_from_file(file, model, std::move(name), scale);
}

}  // namespace met
