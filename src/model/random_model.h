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
// qwen35/qwen35moe (hybrid recurrent) take the gated delta sizes, the full
// attention interval and nextn_predict_layers MTP blocks (their presets
// write one); their presets use Qwen3.5's proportions (head_dim 256
// at medium, rope over a quarter of the head with interleaved M-RoPE
// sections that rotate every pair, state 128, twice as many value heads as
// key heads at small and medium). qwen35moe always has its shared expert
// (default: as wide as the routed experts). qwen3next is qwen35moe as
// Qwen3-Next stores it (ssm_ba, value heads grouped by key head, NeoX rope
// without sections), on the same presets. Random gated delta weights stay
// numerically tame: ssm_a = -exp(u), u uniform in [-2, 0) (decay rates in
// (-1, -0.13]), dt_bias uniform in [-1, 1), the conv kernel with variance
// 1/d_conv.
// granitehybrid/nemotron_h (Mamba2 hybrids) take the Mamba2 sizes (heads =
// ssm_time_step_rank, d_inner 2 × embd unless set, d_state, groups) and a
// layer pattern repeated over the layers ('M' Mamba2, '*' attention, '-' an
// FFN alone, nemotron_h only); their presets follow Granite 4.0-H (one
// attention layer in 8 at medium, head dim 64 for attention and Mamba2,
// d_state 128, one group, granite's multipliers 12 / 0.22 / 1/head_dim / 6,
// no rope) and Nemotron-H ("M-M-M-M*-": Mamba2 and relu² MLP layers
// alternating, an attention layer in 9); a granitehybrid given num_experts
// has routed experts feed_forward_length wide (expert_feed_forward_length
// sets it) and, with shared_expert_feed_forward_length, Granite's ungated
// shared expert. Random Mamba2 weights: ssm_a as the
// gated delta's, D uniform in [0.5, 1.5), the conv bias small.
// Threading: spreads each tensor's rows over num_threads; call from one thread.
// Tested by tests/model/random_model_test.cc.
#pragma once

#include <array>
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
  // gpt-oss (0: its default, 128), gemma3 and olmo2 (0: no windowed layers).
  uint32_t sliding_window = 0;
  uint32_t swa_pattern = 2;  // layer i windowed when i % pattern < pattern - 1 (0: all); presets: gemma3 6, olmo2 4
  float final_logit_softcap = 0.0f;  // gemma2/3 only (0: none; gemma2's preset 30)
  float attn_logit_softcap = 0.0f;   // gemma2 only (its preset 50)
  uint32_t head_dim = 0;        // 0: embedding_length / num_heads (gemma4: its windowed layers')
  // gemma4 only (random_model_gemma4.h): the global layers' head size (0:
  // twice head_dim) and KV heads (0: num_kv_heads / 2, at least 1), the
  // shared-KV layers and the per-layer embedding width.
  uint32_t global_head_dim = 0;
  uint32_t global_kv_heads = 0;
  uint32_t shared_kv_layers = 0;
  uint32_t per_layer_embd = 0;
  // {arch}.pooling_type to write (nullopt: none; encoders: bert CLS,
  // nomic-bert mean, as their sentence-transformers models pool).
  std::optional<Pooling> pooling;
  // qwen35/qwen35moe/qwen3next only.
  uint32_t ssm_conv_kernel = 4;
  uint32_t ssm_state_size = 64;
  uint32_t ssm_group_count = 4;     // key heads
  uint32_t ssm_time_step_rank = 4;  // value heads (a multiple of the key heads)
  uint32_t full_attention_interval = 4;
  uint32_t nextn_predict_layers = 0;  // MTP blocks after the num_layers trunk layers
  // The MTP block's layer is the trunk's last attention layer (the same
  // weights) and its eh_proj passes the next token's embedding through
  // (identity on that half, zero on the hidden state's): a block that
  // predicts as a one-layer copy of the trunk's end, so its drafts are often
  // the trunk's next token (for measuring MTP drafting; trained blocks do
  // better).
  bool mtp_copies_last_layer = false;
  // Scales every residual branch's output projection (attn_output,
  // ffn_down and its expert forms, ssm_out): below 1 the layers nudge the
  // residual stream, and the next token follows the last one more.
  float branch_scale = 1.0f;
  // output.weight's row successor(t) is token_embd's row t (successor is a
  // fixed permutation of the vocab: successor_token), so where the final
  // hidden state is near the last token's embedding the next token is its
  // successor by a wide margin, as a trained model is sure of most tokens.
  // Its logits survive quantization (a Q4_0 copy picks what the F16 one
  // does) where a random head's near-ties flip: the fixture for drafting
  // with a quantized twin. REQUIRES: an untied output.
  bool successor_head = false;
  // granitehybrid/nemotron_h only (ssm_* above are the Mamba2 sizes; heads =
  // ssm_time_step_rank). The layer pattern, repeated over the layers: 'M'
  // Mamba2, '*' attention, '-' an FFN alone (nemotron_h).
  std::string layer_pattern = "MMM*";
  uint32_t ssm_inner_size = 0;  // d_inner; 0: 2 × embedding_length
  // granitehybrid and granite: their multipliers (0: none); granitehybrid:
  // rope on the attention layers (rope.scaling.finetuned; Granite 4.0-H has none).
  float embedding_scale = 0.0f;
  float residual_scale = 0.0f;
  float attention_scale = 0.0f;
  float logit_scale = 0.0f;
  bool attention_rope = false;
  // Writes rope_freqs.weight with Llama 3.1's scaling (factor 8, low and high
  // frequency factors 1 and 4, original context 8192), as llama.cpp's
  // converter does for rope_scaling.rope_type = "llama3".
  bool llama3_rope = false;
  // phi3 only: LongRoPE, as Phi-3's 128K models have it: rope_factors_long
  // and rope_factors_short, rope.scaling.attn_factor and an original context
  // (0: a quarter of context_length, so the long factors apply).
  bool longrope = false;
  uint32_t longrope_original_context = 0;
};

// The factors make-model writes for --longrope: long 1 .. 4 and short
// 1 .. 1.2, rising linearly over the rope_dims / 2 pairs.
std::vector<float> longrope_factors(uint32_t rope_dims, bool long_factors);

// Llama 3.x's per-pair frequency divisors for `rope_dims` rotated dims at
// base `freq_base` (convert_hf_to_gguf's rope_freqs): 1 for wavelengths
// below original_context / high, `factor` above original_context / low,
// and a smooth blend between.
std::vector<float> llama3_rope_factors(uint32_t rope_dims, float freq_base, float factor = 8.0f,
                                       float low = 1.0f, float high = 4.0f, float original_context = 8192.0f);

struct RandomModelSummary {
  uint64_t num_params = 0;
  uint64_t file_bytes = 0;
  // "blk.0.ffn_down.weight: q4_k needs rows of 256, used q8_0"
  std::vector<std::string> fallbacks;
};

// Sizes of about 15M, 110M and 500M parameters: "tiny", "small", "medium",
// for `arch` (the hybrid archs have their own shapes and one MTP block; the
// others share the llama shapes).
std::optional<RandomModelSpec> random_model_preset(std::string_view name, Arch arch = Arch::kLlama);
// Whether `arch` has routed experts.
bool arch_is_moe(Arch arch);
// Whether `arch` always has a sigmoid-gated shared expert (qwen35moe, qwen3next).
bool has_gated_shared_expert(Arch arch);
// Fills the expert fields left 0 with the preset's MoE sizes (tiny: 8
// experts, 2 used; small: 16, 4; medium: 32, 4; expert FFN a quarter of the
// dense one; qwen35moe's and qwen3next's shared expert as wide as an expert) for a MoE
// `s.arch`.
void apply_moe_preset(std::string_view name, RandomModelSpec& s);
Status validate_spec(const RandomModelSpec& spec);
// The rope sections of interleaved M-RoPE that rotate every one of
// `rope_dims` / 2 pairs as Qwen3.5's [11, 11, 10, 0] does for 32: each
// section holds the pairs i with i % 3 equal to its index.
std::array<uint32_t, 4> imrope_sections(uint32_t rope_dims);
// The hyper-parameters a spec writes (rope base and norm epsilon per arch).
ModelHParams spec_hparams(const RandomModelSpec& spec);
std::string_view chatml_template();

// Called after each tensor with (tensors done, tensors in all).
using ProgressFn = std::function<void(size_t, size_t)>;

Result<RandomModelSummary> make_random_model(const RandomModelSpec& spec, const std::string& path,
                                             const ProgressFn& progress = {});

}  // namespace met
