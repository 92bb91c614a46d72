// What the hf/ tests share: safetensors bytes built by hand (header JSON and
// data, with any dtype label and offsets, so corrupt files are easy to make),
// a tiny llama-family Hugging Face folder written from random weights (no
// ../shared needed), and expected.jsonl of ../shared's tinystories-656k-hf.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace met::testing {

struct FakeTensor {
  std::string name;
  std::string dtype = "F32";
  std::vector<uint64_t> shape;  // outermost first
  std::vector<uint8_t> data;
};

// F32 values as bytes; F16 / BF16 roundings of them.
std::vector<uint8_t> f32_bytes(const std::vector<float>& values);
std::vector<uint8_t> f16_bytes(const std::vector<float>& values);
std::vector<uint8_t> bf16_bytes(const std::vector<float>& values);

// A header (tensors packed in order, `__metadata__` when not empty) and data.
std::string safetensors_header(const std::vector<FakeTensor>& tensors,
                               const std::map<std::string, std::string>& metadata = {});
std::string safetensors_file(const std::string& header_json, const std::vector<FakeTensor>& tensors);
std::string safetensors_file(const std::vector<FakeTensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);

// A tiny Llama: 1 or more layers, hidden 16, 2 heads of 8 (1 KV head), FFN
// 32, vocab 10 (a "▁"-style BPE tokenizer.json with merges), untied
// embeddings unless `tied`; weights uniform in [-0.5, 0.5) from `seed`.
struct TinyHfModel {
  std::string architecture = "LlamaForCausalLM";
  uint32_t num_layers = 1;
  std::string dtype = "F32";  // F32, F16 or BF16
  bool tied = false;          // tie_word_embeddings, lm_head.weight stored alone with an alias
  uint64_t seed = 5;
};
// The folder's tensors (HF names) and its config.json / tokenizer.json texts.
std::vector<FakeTensor> tiny_hf_tensors(const TinyHfModel& m);
std::string tiny_hf_config(const TinyHfModel& m);
std::string tiny_hf_tokenizer_json();
// Writes config.json, tokenizer.json, tokenizer_config.json and model.safetensors into `dir`.
void write_tiny_hf_folder(const std::string& dir, const TinyHfModel& m = {});

// A tiny BERT folder (hidden 16, 2 heads, 2 layers, FFN 32, 512 positions, a
// 12-token WordPiece tokenizer.json with [CLS] … [SEP]), written as
// sentence-transformers does: BertModel's tensor names (BertForMaskedLM's,
// under "bert.", with `masked_lm`), modules.json and 1_Pooling/config.json
// with `pooling_mode` (e.g. "pooling_mode_cls_token") set.
void write_tiny_bert_folder(const std::string& dir, bool masked_lm, const std::string& pooling_mode);

// One line of tinystories-656k-hf/expected.jsonl.
struct ExpectedRun {
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> output_ids;
  std::string output_text;
  std::vector<std::pair<int32_t, double>> top5_first;
};
std::vector<ExpectedRun> read_expected_runs(const std::string& jsonl_path);

}  // namespace met::testing
