// Random LoRA adapters for tests and benchmarks. Tested by tests/model/lora_load_test.cc.
#include "model/random_lora.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

namespace met {
namespace {

// splitmix64: the stream of one tensor, from the seed and its index.
class LoraRng {
 public:
  explicit LoraRng(uint64_t seed) : state_(seed) {}
  float next_signed() {  // uniform in [-1, 1)
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }

 private:
  uint64_t state_;
};

bool wanted(std::string_view base, const std::vector<LoraTarget>& targets) {
  for (LoraTarget t : targets) {
    if (t == LoraTarget::kOutput) {
      if (base == "output.weight") return true;
      continue;
    }
    const std::string suffix = std::string(".") + lora_target_name(t) + ".weight";
    if (base.starts_with("blk.") && base.ends_with(suffix)) return true;
  }
  return false;
}

// `rows` rows of `cols` uniform values of amplitude `amp`, encoded in `type`.
Result<std::vector<uint8_t>> random_rows(uint64_t rows, uint64_t cols, float amp, GgmlType type, uint64_t seed,
                                         const std::string& name) {
  const std::optional<uint64_t> row_bytes = ggml_row_bytes(type, cols);
  if (!row_bytes) {
    return invalid_argument("{}: rows of {} values cannot be {} (blocks of {})", name, cols, ggml_type_name(type),
                            ggml_type_traits(type).block_size);
  }
  std::vector<uint8_t> out(rows * *row_bytes);
  std::vector<float> row(cols);
  LoraRng rng(seed);
  for (uint64_t r = 0; r < rows; ++r) {
    for (float& x : row) x = amp * rng.next_signed();
    MET_RETURN_IF_ERROR(quantize_row(type, row, std::span<uint8_t>(out.data() + r * *row_bytes, *row_bytes)));
  }
  return out;
}

}  // namespace

Result<std::vector<LoraTarget>> parse_lora_targets(std::string_view list) {
  static constexpr std::pair<std::string_view, LoraTarget> kNames[] = {
      {"q", LoraTarget::kQ},       {"k", LoraTarget::kK},   {"v", LoraTarget::kV},
      {"o", LoraTarget::kO},       {"gate", LoraTarget::kGate}, {"up", LoraTarget::kUp},
      {"down", LoraTarget::kDown}, {"output", LoraTarget::kOutput}};
  std::vector<LoraTarget> out;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const auto* it =
        std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& n) { return n.first == item; });
    if (it == std::end(kNames)) {
      return invalid_argument("--targets: '{}' is not one of q, k, v, o, gate, up, down, output", item);
    }
    if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

Result<RandomLoraSummary> make_random_lora(const std::string& base_path, const std::string& out_path,
                                           const RandomLoraSpec& spec) {
  if (spec.rank < 1 || spec.rank > 4096) return invalid_argument("--rank {} is outside 1 to 4096", spec.rank);
  const GgmlType t = spec.dtype;
  if (t != GgmlType::kF32 && t != GgmlType::kF16 && t != GgmlType::kBF16 && t != GgmlType::kQ8_0) {
    return invalid_argument("--dtype {}: adapters are f32, f16, bf16 or q8_0", ggml_type_name(t));
  }
  MET_ASSIGN_OR_RETURN(GgufFile base, GgufFile::open(base_path));
  MET_ASSIGN_OR_RETURN(std::string arch, base.metadata().get_string("general.architecture"));
  std::vector<LoraTarget> targets = spec.targets;
  if (targets.empty()) {
    targets = {LoraTarget::kQ, LoraTarget::kK, LoraTarget::kV, LoraTarget::kO, LoraTarget::kGate, LoraTarget::kUp,
               LoraTarget::kDown};
  }
  GgufWriter w;
  w.set("general.architecture", GgufValue(arch));
  w.set("general.type", GgufValue(std::string("adapter")));
  w.set("adapter.type", GgufValue(std::string("lora")));
  w.set("adapter.lora.alpha", GgufValue(spec.alpha != 0.0f ? spec.alpha : static_cast<float>(spec.rank)));
  RandomLoraSummary summary;
  const auto rank = static_cast<uint64_t>(spec.rank);
  uint64_t index = 0;
  for (const GgufTensorInfo& info : base.tensors()) {
    if (info.shape.size() != 2 || !wanted(info.name, targets)) continue;
    const uint64_t cols = info.shape[0], rows = info.shape[1];
    const float amp_a = std::sqrt(3.0f / static_cast<float>(cols));
    const float amp_b = spec.strength * std::sqrt(3.0f / static_cast<float>(rank));
    MET_ASSIGN_OR_RETURN(auto a, random_rows(rank, cols, amp_a, t, spec.seed * 1000003 + 2 * index, info.name));
    MET_ASSIGN_OR_RETURN(auto b, random_rows(rows, rank, amp_b, t, spec.seed * 1000003 + 2 * index + 1, info.name));
    MET_RETURN_IF_ERROR(w.add_tensor_bytes(info.name + ".lora_a", {cols, rank}, t, std::move(a)));
    MET_RETURN_IF_ERROR(w.add_tensor_bytes(info.name + ".lora_b", {rank, rows}, t, std::move(b)));
    ++summary.num_pairs;
    ++index;
  }
  if (summary.num_pairs == 0) return invalid_argument("{}: no matrix of the model matches the targets", base_path);
  MET_RETURN_IF_ERROR(w.write_file(out_path));
  std::error_code ec;
  summary.num_bytes = std::filesystem::file_size(out_path, ec);
  return summary;
}

}  // namespace met
