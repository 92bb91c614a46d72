// make_random_model: writes a random-weight GGUF model of a supported
// architecture with a working tokenizer and chat template, deterministic for
// a seed (the same spec gives the same bytes, whatever the thread count), in
// the layout llama.cpp loads. Weight matrices take the requested dtype; a
// matrix whose rows do not fit that dtype's block falls back to Q8_0, then F16
// (reported in the summary). Norms, biases and expert routers stay F32. MXFP4
// is llama.cpp's MOSTLY_MXFP4_MOE: experts MXFP4, other matrices Q8_0.
// MoE architectures (qwen3moe, mixtral) take num_experts, num_experts_used and
// expert_feed_forward_length (mixtral writes it as feed_forward_length, as its
// files carry it); qwen3moe may add a shared expert. gpt-oss takes the same
// expert sizes plus sliding_window (default 128) and swa_pattern (default 2:
// even layers windowed), and random attention sinks in [-2, 2).
// Threading: spreads each tensor's rows over num_threads; call from one thread.
// Tested by tests/model/random_model_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/ggml_type.h"
#include "model/arch.h"
#include "model/synthetic_vocab.h"

namespace met {

struct RandomModelSpec {
  Arch arch = Arch::kLlama;
  uint32_t num_layers = 8;
  uint32_t embedding_length = 256;
  uint32_t num_heads = 8;
  uint32_t num_kv_heads = 4;
  uint32_t feed_forward_length = 768;
  uint32_t vocab_size = 16384;
  uint32_t context_length = 2048;
  GgmlType dtype = GgmlType::kF32;
  uint64_t seed = 0;
  std::optional<VocabKind> tokenizer;  // default: kSpm for llama/mistral/mixtral, kBpe for qwen, gpt-oss
  std::string chat_template;           // empty: ChatML
  std::vector<std::string> control_tokens;  // further control tokens for the vocab (SyntheticVocabOptions)
  bool tied_output = false;
  int num_threads = 1;
  uint32_t num_experts = 0;  // MoE architectures only
  uint32_t num_experts_used = 0;
  uint32_t expert_feed_forward_length = 0;
  uint32_t shared_expert_feed_forward_length = 0;  // 0: none
  uint32_t sliding_window = 0;  // gpt-oss only (0: its default, 128)
  uint32_t swa_pattern = 2;     // gpt-oss only: layer i windowed when i % pattern < pattern - 1 (0: all)
};

struct RandomModelSummary {
  uint64_t num_params = 0;
  uint64_t file_bytes = 0;
  // "blk.0.ffn_down.weight: q4_k needs rows of 256, used q8_0"
  std::vector<std::string> fallbacks;
};

// Sizes of about 15M, 110M and 500M parameters: "tiny", "small", "medium".
std::optional<RandomModelSpec> random_model_preset(std::string_view name);
// Whether `arch` has routed experts.
bool arch_is_moe(Arch arch);
// Fills the expert fields left 0 with the preset's MoE sizes (tiny: 8
// experts, 2 used; small: 16, 4; medium: 32, 4; expert FFN a quarter of the
// dense one) for a MoE `s.arch`.
void apply_moe_preset(std::string_view name, RandomModelSpec& s);
Status validate_spec(const RandomModelSpec& spec);
// The hyper-parameters a spec writes (rope base and norm epsilon per arch).
ModelHParams spec_hparams(const RandomModelSpec& spec);
std::string_view chatml_template();

// Called after each tensor with (tensors done, tensors in all).
using ProgressFn = std::function<void(size_t, size_t)>;

Result<RandomModelSummary> make_random_model(const RandomModelSpec& spec, const std::string& path,
                                             const ProgressFn& progress = {});

}  // namespace met
