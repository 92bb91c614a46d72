// ModelInfo: what `met info` reports about a GGUF file, gathered once and
// rendered as text or JSON. A file whose hyper-parameters cannot be read (a
// vocab-only file, an unknown architecture) still reports everything else,
// with the reason in hparams_error. Also the bytes of weights one token
// reads (active_bytes_per_token), which `met bench` divides the memory
// bandwidth by for its batch-1 decode ceiling.
// Threading: plain value. Tested by tests/cli/model_info_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"

namespace met {

struct DtypeTotals {
  uint64_t num_tensors = 0;
  uint64_t num_bytes = 0;
  uint64_t num_elements = 0;
};

struct SpecialToken {
  std::string role;  // "bos", "eos", "eot", "unk", "pad", "sep", "mask", "eom"
  uint32_t id = 0;
  std::string text;
};

struct ModelInfo {
  std::string path;
  bool hf_folder = false;  // a Hugging Face folder read as GGUF in memory (no GGUF file)
  uint32_t gguf_version = 0;
  uint64_t file_bytes = 0;
  uint64_t alignment = 0;
  std::string architecture;
  std::string name;
  std::optional<uint32_t> file_type;
  std::optional<ModelHParams> hparams;
  std::string hparams_error;
  uint64_t num_params = 0;
  // Parameters one token reads: all but the experts it does not use
  // (num_params for a dense model).
  uint64_t active_params = 0;
  // Bytes of weights one token's forward reads (active_bytes_per_token).
  uint64_t active_bytes = 0;
  uint64_t num_tensors = 0;
  std::map<std::string, DtypeTotals> by_dtype;
  std::string vocab_model;  // tokenizer.ggml.model, "" when absent
  std::string vocab_pre;
  uint64_t vocab_size = 0;
  uint64_t num_merges = 0;
  std::vector<SpecialToken> special_tokens;
  bool has_chat_template = false;
};

// Bytes of weights one token's forward reads at batch 1: every tensor whole,
// except the token embedding, of which it reads one row (a tied output head
// still reads the whole table), and, when `hparams` is a MoE model's, each
// expert tensor (`*_exps.*`, experts in its last dimension), of which it
// reads expert_used_count of its expert_count slices. For an untied dense
// model: every tensor's bytes less all but one embedding row.
uint64_t active_bytes_per_token(std::span<const GgufTensorInfo> tensors, const ModelHParams* hparams);
// Bytes of weights one decode step of `batch` tokens reads at least: every
// tensor once, `batch` embedding rows, and of a MoE layer's experts as many
// as `batch` tokens can route to (all of them once batch x k reaches their
// count; fewer when tokens share experts). active_bytes_per_token is batch 1.
uint64_t decode_step_weight_bytes(std::span<const GgufTensorInfo> tensors, const ModelHParams* hparams,
                                  int64_t batch);

// The multiply-accumulates one token's matmuls need, by weight type: every
// weight of two or more dimensions whole, but the token embedding (a row
// lookup, counted once as the output head when that is tied to it) and a
// MoE layer's expert tensors (expert_used_count of their expert_count
// slices). Attention's own products, which grow with the context, are not
// counted. `met bench` divides a compute peak (backend/cpu/compute_peak.h)
// by these for its prefill ceiling.
std::map<GgmlType, uint64_t> matmul_macs_per_token(std::span<const GgufTensorInfo> tensors,
                                                   const ModelHParams* hparams);

Result<ModelInfo> gather_model_info(const GgufFile& file, const std::string& path);
std::string render_model_info_text(const ModelInfo& info);
nlohmann::json model_info_json(const ModelInfo& info);
// "SentencePiece (llama)", "byte-level BPE (gpt2)", …
std::string vocab_type_label(const std::string& model);

}  // namespace met
