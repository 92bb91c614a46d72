// How a made model's tensors are filled. Tested by tests/model/random_model_test.cc.
#include "model/random_tensor_fill.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "core/parallel_for.h"
#include "model/file_type.h"
#include "tensor/quantize.h"

namespace met {
namespace {

uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// xorshift64* over a per-row seed: cheap and fully determined by (seed, row).
class RowRng {
 public:
  explicit RowRng(uint64_t seed) : state_(mix64(seed) | 1) {}
  // Uniform in [-1, 1).
  float next_signed() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const uint64_t r = state_ * 0x2545f4914f6cdd1dull;
    return static_cast<float>(r >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }

 private:
  uint64_t state_;
};

void fill_row(const TensorSpec& t, RowRng& rng, std::vector<float>& row) {
  switch (t.role) {
    case TensorRole::kNorm:
      // gemma4's layer_output_scale is a scale, not a norm's: 0.75 shows it is applied.
      std::fill(row.begin(), row.end(), t.name.ends_with("layer_output_scale.weight") ? 0.75f : 1.0f);
      return;
    case TensorRole::kBias: {
      // Attention sinks are logits beside the scaled scores: large enough to
      // matter; dt biases shift softplus's input over its bend.
      const bool logit_like = t.name.ends_with("attn_sinks.weight") || t.name.ends_with("ssm_dt.bias");
      const float scale = t.name.ends_with("attn_sinks.weight") ? 2.0f : logit_like ? 1.0f : 0.02f;
      for (float& x : row) x = scale * rng.next_signed();
      return;
    }
    case TensorRole::kDecay:
      // -exp(u), u in [-2, 0): per-token decays exp(g) mostly between 0.1 and 0.97.
      for (float& x : row) x = -std::exp(rng.next_signed() - 1.0f);
      return;
    case TensorRole::kSkip:
      for (float& x : row) x = 1.0f + 0.5f * rng.next_signed();  // D in [0.5, 1.5)
      return;
    case TensorRole::kConv:
    case TensorRole::kRouter:
    case TensorRole::kMatrix: {
      // Uniform with variance 1/fan_in keeps activations O(1) through a layer.
      const float scale = std::sqrt(3.0f / static_cast<float>(t.shape[0]));
      for (float& x : row) x = scale * rng.next_signed();
      return;
    }
  }
}

}  // namespace

GgmlType storage_type(const TensorSpec& t, GgmlType wanted, std::vector<std::string>& fallbacks) {
  if (t.role != TensorRole::kMatrix) return GgmlType::kF32;  // norms, biases, routers
  wanted = file_type_matrix_type(wanted, t.shape);
  for (GgmlType type : {wanted, GgmlType::kQ8_0, GgmlType::kF16}) {
    if (ggml_row_bytes(type, t.shape[0])) {
      if (type != wanted) {
        fallbacks.push_back(fmt::format("{}: {} needs rows of {}, used {}", t.name,
                                        ggml_type_name(wanted),
                                        ggml_type_traits(wanted).block_size, ggml_type_name(type)));
      }
      return type;
    }
  }
  return GgmlType::kF32;
}

bool is_branch_output(const std::string& name) {
  for (const char* end : {"attn_output.weight", "ffn_down.weight", "ffn_down_exps.weight", "ffn_down_shexp.weight",
                          "ssm_out.weight"}) {
    if (name.ends_with(end)) return true;
  }
  return false;
}

namespace {

// Fills `out` (t's rows as `type`) on num_threads threads: row r is
// row_values(r, row) quantized.
template <class RowValues>
Status fill_rows(const TensorSpec& t, GgmlType type, int num_threads, std::span<uint8_t> out,
                 const RowValues& row_values) {
  const uint64_t row_len = t.shape[0];
  uint64_t num_rows = 1;  // a 3-D expert tensor stacks its matrices' rows
  for (size_t d = 1; d < t.shape.size(); ++d) num_rows *= t.shape[d];
  const uint64_t row_bytes = *ggml_row_bytes(type, row_len);
  std::mutex mu;
  Status first_error;
  parallel_for(static_cast<int64_t>(num_rows), num_threads, [&](int64_t begin, int64_t end) {
    std::vector<float> row(row_len);
    for (int64_t r = begin; r < end; ++r) {
      row_values(r, row);
      auto dst = out.subspan(static_cast<size_t>(r) * row_bytes, row_bytes);
      Status s = quantize_row(type, row, dst);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = s;
        return;
      }
    }
  });
  return first_error;
}

}  // namespace

GgufWriter::Fill tensor_fill(const TensorSpec& t, GgmlType type, uint64_t tensor_seed, int num_threads,
                             float scale) {
  return [t, type, tensor_seed, num_threads, scale](std::span<uint8_t> out) -> Status {
    return fill_rows(t, type, num_threads, out, [&](int64_t r, std::vector<float>& row) {
      RowRng rng(tensor_seed ^ mix64(static_cast<uint64_t>(r) + 1));
      fill_row(t, rng, row);
      if (scale != 1.0f) {
        for (float& x : row) x *= scale;
      }
    });
  };
}

uint32_t successor_token(uint32_t token, uint32_t vocab_size) {
  uint64_t a = vocab_size * 5ull / 8;
  while (std::gcd(a, uint64_t{vocab_size}) != 1) ++a;
  return static_cast<uint32_t>((a * token + 1) % vocab_size);
}

GgufWriter::Fill successor_head_fill(const TensorSpec& t, GgmlType type, uint64_t embedding_seed, int num_threads) {
  return [t, type, embedding_seed, num_threads](std::span<uint8_t> out) -> Status {
    const auto vocab = static_cast<uint32_t>(t.shape[1]);
    std::vector<uint32_t> predecessor(vocab);
    for (uint32_t v = 0; v < vocab; ++v) predecessor[successor_token(v, vocab)] = v;
    return fill_rows(t, type, num_threads, out, [&](int64_t r, std::vector<float>& row) {
      // token_embd's row predecessor[r], drawn as tensor_fill draws it.
      RowRng rng(embedding_seed ^ mix64(uint64_t{predecessor[static_cast<size_t>(r)]} + 1));
      fill_row(t, rng, row);
    });
  };
}

GgufWriter::Fill embedding_path_fill(const TensorSpec& t, GgmlType type) {
  return [t, type](std::span<uint8_t> out) -> Status {
    const uint64_t row_len = t.shape[0], row_bytes = *ggml_row_bytes(type, row_len);
    std::vector<float> row(row_len);
    for (uint64_t r = 0; r < t.shape[1]; ++r) {
      std::fill(row.begin(), row.end(), 0.0f);
      row[r] = 1.0f;
      MET_RETURN_IF_ERROR(quantize_row(type, row, out.subspan(r * row_bytes, row_bytes)));
    }
    return ok_status();
  };
}

std::vector<uint64_t> tensor_seeds(const RandomModelSpec& spec, const ModelHParams& hp,
                                   const std::vector<TensorSpec>& specs) {
  std::vector<uint64_t> seeds;
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < specs.size(); ++i) {
    seeds.push_back(mix64(spec.seed * 0x9e3779b97f4a7c15ull + i + 1));
    index.emplace(specs[i].name, i);
  }
  if (!spec.mtp_copies_last_layer || hp.nextn_predict_layers == 0) return seeds;
  uint32_t last = hp.num_layers - 1;
  while (last > 0 && hp.layer_is_recurrent(last)) --last;
  const std::string mtp = fmt::format("blk.{}.", hp.num_layers), trunk = fmt::format("blk.{}.", last);
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& name = specs[i].name;
    if (!name.starts_with(mtp) || name.starts_with(mtp + "nextn.")) continue;
    const auto it = index.find(trunk + name.substr(mtp.size()));
    if (it != index.end()) seeds[i] = seeds[it->second];
  }
  return seeds;
}

}  // namespace met
