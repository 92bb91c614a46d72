// HfConfig: a Hugging Face model folder's config.json, reduced to what met
// runs (the llama family: LlamaForCausalLM, MistralForCausalLM,
// Qwen2ForCausalLM, Qwen3ForCausalLM; and BERT encoders, BertModel and
// BertForMaskedLM, as `bert` with attention.causal false,
// attention.layer_norm_epsilon and tokenizer.ggml.token_type_count from
// type_vocab_size), and the GGUF metadata keys llama.cpp's
// convert_hf_to_gguf.py writes for it (`general.architecture`,
// `<arch>.block_count`, `.embedding_length`, `.feed_forward_length`,
// `.attention.head_count[_kv]`, `.attention.key_length`/`value_length`,
// `.attention.layer_norm_rms_epsilon`, `.rope.freq_base`,
// `.rope.dimension_count`, `.context_length`, `.vocab_size`, and rope scaling).
// Invariants: a parsed config has every size non-zero, head_count divisible
// by head_count_kv, and a supported architecture; an unsupported one is
// refused naming `architectures`. Llama 3's rope scaling is kept as its
// parameters; hf_model turns it into rope_freqs.weight.
// Threading: pure. Tested by tests/hf/hf_config_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/pooling.h"
#include "core/status.h"
#include "gguf/gguf_value.h"

namespace met {

// How a family stores attention: which q/k rows need llama.cpp's permutation
// (HF's rotate_half rope to GGUF's interleaved pairs), and which tensors it has.
struct HfArchInfo {
  std::string hf_name;    // "LlamaForCausalLM"
  std::string gguf_arch;  // "llama"
  bool permute_qk = false;
  bool encoder = false;   // BERT: tensors under embeddings./encoder.layer., LayerNorm, no head
};

struct HfRopeScaling {
  std::string type = "none";  // "none", "linear", "yarn" or "llama3"
  float factor = 1.0f;
  uint32_t original_context_length = 0;
  float low_freq_factor = 1.0f;   // llama3
  float high_freq_factor = 4.0f;  // llama3
};

struct HfConfig {
  HfArchInfo arch;
  uint32_t num_layers = 0;
  uint32_t hidden_size = 0;
  uint32_t intermediate_size = 0;
  uint32_t num_heads = 0;
  uint32_t num_kv_heads = 0;
  uint32_t head_dim = 0;
  uint32_t context_length = 0;
  uint32_t vocab_size = 0;
  float rms_norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  bool tie_word_embeddings = false;
  HfRopeScaling rope_scaling;
  // BERT: layer_norm_eps and type_vocab_size (the rows of token_types).
  float layer_norm_eps = 1e-12f;
  uint32_t type_vocab_size = 0;
};

// A sentence-transformers Pooling module's config.json (1_Pooling/): the
// pooling whose pooling_mode_* flag is set (cls_token, mean_tokens,
// lasttoken). Refused: none or several set, or max / weighted-mean /
// sqrt-len pooling, which llama.cpp's pooling_type cannot express.
Result<Pooling> parse_hf_pooling(std::string_view json_text);

// Parses config.json's text. Errors name the key ("config.json: key
// 'hidden_size' is missing").
Result<HfConfig> parse_hf_config(std::string_view json_text);

// Writes the model's GGUF metadata keys (not the tokenizer's).
void add_hf_config_metadata(const HfConfig& config, GgufMetadata& md);

}  // namespace met
