// GGUF-to-GGUF quantization. Tested by tests/model/quantize_model_test.cc.
#include "model/quantize_model.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "core/parallel_for.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/file_type.h"
#include "tensor/quantize.h"

namespace met {
namespace {

bool is_weight_matrix(const GgufTensorInfo& t) {
  // Expert routers (ffn_gate_inp) and short-convolution kernels (ssm_conv1d)
  // stay as they are, as llama-quantize keeps them.
  return t.shape.size() >= 2 && t.name.ends_with(".weight") && t.name.find("norm") == std::string::npos &&
         t.name.find("ffn_gate_inp") == std::string::npos && t.name.find("ssm_conv1d") == std::string::npos;
}

std::optional<GgmlType> target_type(const GgufTensorInfo& t, const QuantRecipe& recipe, const RecipeModel& model,
                                    std::vector<std::string>& fallbacks) {
  if (!is_weight_matrix(t) || !can_dequantize(t.type)) return std::nullopt;
  const GgmlType wanted = recipe_tensor_type(recipe, model, t.name, t.shape);
  for (GgmlType type : {wanted, row_fallback_type(wanted), GgmlType::kF16}) {
    if (!ggml_row_bytes(type, t.shape[0])) continue;
    if (type != wanted) {
      fallbacks.push_back(fmt::format("{}: {} needs rows of {}, used {}", t.name,
                                      ggml_type_name(wanted), ggml_type_traits(wanted).block_size,
                                      ggml_type_name(type)));
    }
    return type;
  }
  return std::nullopt;
}

GgufWriter::Fill requantize_fill(std::span<const uint8_t> src, const GgufTensorInfo& t,
                                 GgmlType type, int num_threads) {
  return [src, from = t.type, row_len = t.shape[0], type, num_threads](std::span<uint8_t> out) {
    const uint64_t in_row = *ggml_row_bytes(from, row_len);
    const uint64_t out_row = *ggml_row_bytes(type, row_len);
    const int64_t num_rows = static_cast<int64_t>(out.size() / out_row);
    std::mutex mu;
    Status first_error;
    parallel_for(num_rows, num_threads, [&](int64_t begin, int64_t end) {
      std::vector<float> row(row_len);
      for (int64_t r = begin; r < end; ++r) {
        Status s = dequantize_row(from, src.subspan(r * in_row, in_row), row);
        if (s.ok()) s = quantize_row(type, row, out.subspan(r * out_row, out_row));
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.ok()) first_error = s;
          return;
        }
      }
    });
    return first_error;
  };
}

// What a recipe's mix reads of the model.
RecipeModel recipe_model_of(const GgufFile& in) {
  RecipeModel m;
  const Result<std::string> arch = in.metadata().get_string("general.architecture");
  const auto count = [&](std::string_view suffix) {
    if (!arch.ok()) return 0;
    const Result<uint32_t> n = in.metadata().get_u32_or(*arch + std::string(suffix), 0);
    return n.ok() ? static_cast<int>(*n) : 0;
  };
  m.num_layers = count(".block_count");
  m.num_experts = count(".expert_count");
  const int heads = count(".attention.head_count"), kv_heads = count(".attention.head_count_kv");
  m.gqa = heads > 0 && kv_heads > 0 ? heads / kv_heads : 1;
  m.has_output = in.find_tensor("output.weight") != nullptr;
  for (const GgufTensorInfo& t : in.tensors()) {
    if (t.name.find(".attn_v.") == std::string::npos && t.name.find(".attn_qkv.") == std::string::npos) continue;
    ++m.num_attn_v;
    int layer = -1;
    if (std::sscanf(t.name.c_str(), "blk.%d.", &layer) == 1) m.attn_v_layers.push_back(layer);
  }
  std::sort(m.attn_v_layers.begin(), m.attn_v_layers.end());
  return m;
}

// Whether met can write every type the recipe gives.
bool can_write(const QuantRecipe& recipe) {
  if (!can_quantize(recipe.base)) return false;
  if (recipe.mix == QuantMix::kPlain) return true;
  for (GgmlType t : {GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ8_0}) {
    if (!can_quantize(t)) return false;
  }
  return true;
}

}  // namespace

Result<QuantizeSummary> quantize_model(const std::string& in_path, const std::string& out_path,
                                       GgmlType type, int num_threads, const ProgressFn& progress) {
  const std::optional<QuantRecipe> recipe = plain_quant_recipe(type);
  if (!recipe) return invalid_argument("cannot quantize to {}", ggml_type_name(type));
  return quantize_model(in_path, out_path, *recipe, num_threads, progress);
}

Result<QuantizeSummary> quantize_model(const std::string& in_path, const std::string& out_path,
                                       const QuantRecipe& recipe, int num_threads, const ProgressFn& progress) {
  if (!can_write(recipe)) return invalid_argument("cannot quantize to {}", recipe.name);
  MET_ASSIGN_OR_RETURN(GgufFile in, GgufFile::open(in_path));
  return quantize_model(in, out_path, &recipe, num_threads, progress);
}

Result<QuantizeSummary> quantize_model(const GgufFile& in, const std::string& out_path, const QuantRecipe* recipe,
                                       int num_threads, const ProgressFn& progress) {
  if (recipe != nullptr && !can_write(*recipe)) return invalid_argument("cannot quantize to {}", recipe->name);
  const RecipeModel model = recipe_model_of(in);
  GgufWriter writer(in.alignment());
  for (const auto& [key, value] : in.metadata().entries()) writer.set(key, value);
  if (recipe != nullptr) {
    writer.set("general.file_type", recipe->file_type);
    writer.set("general.quantization_version", uint32_t{2});
  }

  QuantizeSummary summary;
  summary.in_bytes = in.file_size();
  const size_t total = in.tensors().size();
  for (size_t i = 0; i < total; ++i) {
    const GgufTensorInfo& t = in.tensors()[i];
    const std::span<const uint8_t> src = in.tensor_data(t);
    const std::optional<GgmlType> to =
        recipe != nullptr ? target_type(t, *recipe, model, summary.fallbacks) : std::nullopt;
    GgufWriter::Fill fill;
    if (to && *to != t.type) {
      fill = requantize_fill(src, t, *to, std::max(1, num_threads));
      ++summary.num_quantized;
    } else {
      fill = [src](std::span<uint8_t> out) {
        std::memcpy(out.data(), src.data(), out.size());
        return ok_status();
      };
      ++summary.num_copied;
    }
    auto counted = [fill, i, total, &progress](std::span<uint8_t> out) -> Status {
      MET_RETURN_IF_ERROR(fill(out));
      if (progress) progress(i + 1, total);
      return ok_status();
    };
    MET_RETURN_IF_ERROR(writer.add_tensor(t.name, t.shape, to.value_or(t.type), counted));
  }
  MET_RETURN_IF_ERROR(writer.write_file(out_path));
  std::error_code ec;
  summary.out_bytes = std::filesystem::file_size(out_path, ec);
  return summary;
}

}  // namespace met
