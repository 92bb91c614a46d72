// The merged model of an adapter. See lora_merge.h.
#include "testing/lora_merge.h"

#include <cstring>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

namespace met::testing {
namespace {

Result<std::vector<double>> decode(const GgufFile& f, const GgufTensorInfo& t) {
  std::vector<float> row(t.shape[0]);
  std::vector<double> out;
  out.reserve(t.num_elements);
  const size_t row_bytes = ggml_row_bytes(t.type, t.shape[0]).value_or(0);
  const std::span<const uint8_t> bytes = f.tensor_data(t);
  for (uint64_t r = 0; r < t.num_elements / t.shape[0]; ++r) {
    MET_RETURN_IF_ERROR(dequantize_row(t.type, bytes.subspan(r * row_bytes, row_bytes), row));
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// W (rows × cols) + scale · B (rows × rank) · A (rank × cols), as F32 bytes.
Result<std::vector<uint8_t>> merged(const GgufFile& base, const GgufTensorInfo& w, const GgufFile& adapter,
                                    const GgufTensorInfo& a, const GgufTensorInfo& b, double scale) {
  MET_ASSIGN_OR_RETURN(std::vector<double> wv, decode(base, w));
  MET_ASSIGN_OR_RETURN(std::vector<double> av, decode(adapter, a));
  MET_ASSIGN_OR_RETURN(std::vector<double> bv, decode(adapter, b));
  const uint64_t cols = w.shape[0], rows = w.shape[1], rank = a.shape[1];
  std::vector<uint8_t> out(rows * cols * sizeof(float));
  for (uint64_t o = 0; o < rows; ++o) {
    for (uint64_t c = 0; c < cols; ++c) {
      double d = 0;
      for (uint64_t k = 0; k < rank; ++k) d += bv[o * rank + k] * av[k * cols + c];
      const auto v = static_cast<float>(wv[o * cols + c] + scale * d);
      std::memcpy(out.data() + (o * cols + c) * sizeof(float), &v, sizeof v);
    }
  }
  return out;
}

}  // namespace

Status merge_lora(const std::string& base_path, const std::string& adapter_path, const std::string& out_path,
                  float scale) {
  MET_ASSIGN_OR_RETURN(GgufFile base, GgufFile::open(base_path));
  MET_ASSIGN_OR_RETURN(GgufFile adapter, GgufFile::open(adapter_path));
  MET_ASSIGN_OR_RETURN(const float alpha, adapter.metadata().get_f32_or("adapter.lora.alpha", 0.0f));
  GgufWriter w;
  for (const auto& [k, v] : base.metadata().entries()) w.set(k, v);
  for (const GgufTensorInfo& t : base.tensors()) {
    const GgufTensorInfo* a = adapter.find_tensor(t.name + ".lora_a");
    const GgufTensorInfo* b = adapter.find_tensor(t.name + ".lora_b");
    if (a == nullptr || b == nullptr) {
      const std::span<const uint8_t> bytes = base.tensor_data(t);
      MET_RETURN_IF_ERROR(w.add_tensor_bytes(t.name, t.shape, t.type, {bytes.begin(), bytes.end()}));
      continue;
    }
    const double rank = static_cast<double>(a->shape[1]);
    const double s = alpha != 0.0f ? double{scale} * alpha / rank : double{scale};
    MET_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, merged(base, t, adapter, *a, *b, s));
    MET_RETURN_IF_ERROR(w.add_tensor_bytes(t.name, t.shape, GgmlType::kF32, std::move(bytes)));
  }
  return w.write_file(out_path);
}

}  // namespace met::testing
