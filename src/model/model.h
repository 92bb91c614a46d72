// Model: a loaded GGUF model of a supported architecture: its hyper-parameters,
// its architecture traits, and its weights bound in place in the mmap (no
// copy), except matrices whose type has a faster packed layout on this CPU
// (cpu::preferred_layout: Q8_0, MXFP4, F16, BF16 with AVX2 or AVX-512;
// IQ4_NL, Q4_K, Q5_K, Q6_K with AVX-512), which are packed once at load
// (and their mapped pages dropped, so resident memory holds them once);
// the token embedding stays in the mmap (rows are gathered from it), and so
// does a tied output. Norm and bias vectors stored as F16/BF16 are converted
// to F32 once at load. Every tensor the architecture needs is checked
// for presence, shape and a dtype the CPU kernels support; the error names the
// tensor. An unknown architecture is refused by name.
// MoE layers bind the router in place, and each expert's slice of the 3-D
// expert tensors as its own matrix (contiguous per expert in GGUF), packed per
// expert where the type has a packed layout; a `llama` file with
// expert_count > 0 is mixtral. gpt-oss adds the biases of attention, router
// and experts (bound as F32 vectors; an expert's bias is its row of the 2-D
// bias tensor), the per-head attention sinks, and binds its
// post_attention_norm as the FFN's input norm.
// qwen35/qwen35moe (hybrid recurrent): each trunk layer is kGatedDelta or
// kAttention by hp.layer_is_recurrent; a gated delta layer binds
// GatedDeltaWeights (matrices packed as any other, ssm_conv1d and the
// vectors as F32), an attention layer binds wq with 2 q_dim rows (per head,
// its query then its gate) and the q/k norms; post_attention_norm is the
// FFN's input norm; qwen35moe's MoE FFN has its shared expert. The MTP
// blocks are bound into ModelWeights::mtp (not run by the forward pass).
// granitehybrid/nemotron_h (Mamba2 hybrids): a recurrent layer is kMamba2
// (Mamba2Weights: ssm_in packed as any matrix, the conv kernel, its
// optional bias and the per-head vectors as F32), any other is plain
// attention with optional q/k/v/o biases (bound when the file has them);
// granitehybrid's layers add ffn_norm and a SwiGLU FFN; a nemotron_h layer
// has no FFN but its FFN-only layers (kFfnOnly: attn_norm bound as the
// FFN's input norm, ffn_up/ffn_down, relu²). FFN biases, which llama.cpp
// also reads, are refused by name. A granitehybrid with expert_count > 0 is
// MoE (softmax router, renormalised top-k, as llama.cpp's graph) with an
// ungated shared expert when expert_shared_feed_forward_length > 0.
// gemma3 and olmo2 bind each block's post-norm; olmo2 binds no pre-norms
// and its q/k norms over all of Q and K. phi3's fused attn_qkv and ffn_up
// are bound as row slices (wq, wk, wv; w_gate, w_up), each packed as its own
// matrix; its LongRoPE factors are the long ones where context_length is
// past rope.scaling.original_context_length, else the short ones.
// gemma4 (model_gemma4.cc): each layer at its own sizes (hp.layer_head_dim,
// layer_kv_heads, layer_ffn_length); a shared-KV layer binds no K or V and
// names the layer whose KV it reads (kv_from); a layer without attn_v
// leaves wv empty (K serves as V); the optional layer_output_scale; the
// per-layer embedding tensors; rope_freqs (the proportional rope of the
// global layers) when the file has it. A gemma4 with experts is refused.
// bert/nomic-bert (model_encoder.cc) bind EncoderWeights and per layer the
// attention (nomic-bert's attn_qkv as row slices), the LayerNorms after
// each residual add as the post-norms with their biases, and the FFN with
// its biases (bert) or gate (nomic-bert); no output_norm or output.
// Invariants: weights point into file_ (which the Model owns), owned_vectors_
// or packed_; all live as long as the Model.
// Threading: immutable after load; any thread. Tested by tests/model/model_test.cc.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/kernels/matmul.h"
#include "backend/cpu/kernels/ops.h"
#include "backend/cpu/kernels/packed_weights.h"
#include "core/status.h"
#include "gguf/gguf_file.h"
#include "model/arch.h"
#include "model/hparams.h"

namespace met {

// What differs between the llama-family architectures met runs.
struct ArchTraits {
  bool qkv_bias = false;  // qwen2
  bool qk_norm = false;   // qwen3, qwen35: RMSNorm over each head of Q and K
  // qwen35: wq has 2 q_dim rows, per head its query then its gate; the
  // attention output is wo · (attn ⊙ sigmoid(gate)).
  bool gated_attention = false;
  // The FFN's input norm is stored as post_attention_norm (gpt-oss, qwen35),
  // not ffn_norm.
  bool post_attention_norm = false;
  bool gated_delta = false;  // qwen35: trunk layers hp.layer_is_recurrent are gated delta nets
  bool mamba2 = false;       // granitehybrid, nemotron_h: trunk layers hp.layer_is_recurrent are Mamba2
  bool ffn_relu2 = false;    // nemotron_h: the FFN is down · relu(up · x)², without a gate
  cpu::RopeLayout rope_layout = cpu::RopeLayout::kNormal;
  bool moe = false;               // qwen3moe, mixtral, gpt-oss, qwen35moe: routed experts replace the FFN
  bool moe_norm_weights = false;  // renormalise the top-k routing weights
  bool gpt_oss = false;           // sinks, o/router/expert biases, clamped SwiGLU, top-k then softmax
  // gemma3, olmo2: post_attention_norm and post_ffw_norm normalise each
  // block's output before its residual add.
  bool post_norms = false;
  bool no_pre_norms = false;  // olmo2: the blocks read the residual stream unnormalised
  bool qk_norm_full = false;  // olmo2: q/k RMSNorm over all of Q ([q_dim]) and K ([kv_dim]), before rope
  bool ffn_geglu = false;     // gemma3: the FFN's activation is gelu(gate) * up (tanh approximation)
  // gemma4: per-layer head sizes and KV heads, shared-KV layers, V RMS-normed
  // per head without a weight, per-layer embeddings (forward_pass_gemma4.cc).
  bool layer_shapes = false;
  // bert, nomic-bert: an encoder (EncoderPass runs it): attention over the
  // whole sequence, LayerNorm after each residual add, no head. bert's FFN
  // is gelu(up · x + b) without a gate; nomic-bert's SwiGLU, rotary (NeoX).
  bool encoder = false;
};

// How a router's logits become the k routing weights of a token.
enum class MoeGating : uint8_t {
  kSoftmaxTopK,  // softmax over all experts, the k largest (renormalised if norm_weights)
  kTopKSoftmax,  // the k largest logits, then a softmax over those k (gpt-oss)
};

// An expert's activation between its gate/up and down matrices.
enum class MoeActivation : uint8_t {
  kSwiGlu,     // silu(gate) * up
  kSwiGluOai,  // gpt-oss: g = min(gate, 7), u = clamp(up, -7, 7): g * sigmoid(1.702 g) * (u + 1)
};

ArchTraits arch_traits(Arch arch);

// A mixture-of-experts FFN: a softmax router over `router`'s logits picks
// expert_used_count experts per token; each is a SwiGLU FFN; with a shared
// expert, its output scaled by sigmoid(shared_gate_inp · x) is added.
struct MoeWeights {
  cpu::WeightMatrix router;                       // experts × embd
  std::vector<cpu::WeightMatrix> gate, up, down;  // one per expert
  bool norm_weights = false;
  int32_t num_used = 0;
  MoeGating gating = MoeGating::kSoftmaxTopK;
  MoeActivation activation = MoeActivation::kSwiGlu;
  // gpt-oss only (else null): router bias [experts]; expert e's biases at
  // gate_bias + e * expert_ff, up_bias likewise, down_bias + e * embd.
  const float* router_bias = nullptr;
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  const float* down_bias = nullptr;
  bool has_shared = false;
  // The shared expert's output is scaled by sigmoid(shared_gate_inp · x);
  // granitehybrid's is added whole (no shared_gate_inp).
  bool shared_gated = true;
  cpu::WeightMatrix shared_gate_inp;  // 1 × embd
  cpu::WeightMatrix shared_gate, shared_up, shared_down;
};

// What a trunk layer mixes its positions with (kFfnOnly: nothing; the
// layer is its FFN alone, nemotron_h's MLP layers).
enum class LayerKind : uint8_t { kAttention, kGatedDelta, kMamba2, kFfnOnly };

// A gated delta net (qwen35's linear attention), for hp's sizes: conv_dim =
// 2 key_dim + value_dim channels (q, k, v), v_heads = ssm_time_step_rank
// value heads of head_v_dim = ssm_state_size, key head h % ssm_group_count
// for value head h.
struct GatedDeltaWeights {
  cpu::WeightMatrix wqkv;          // attn_qkv: conv_dim rows × embd
  cpu::WeightMatrix wgate;         // attn_gate (z): value_dim × embd
  cpu::WeightMatrix beta, alpha;   // ssm_beta, ssm_alpha: v_heads × embd
  cpu::WeightMatrix ba;            // qwen3next's ssm_ba instead: 2 v_heads × embd, per key head its
                                   // value heads' betas then their alphas
  const float* conv = nullptr;     // ssm_conv1d as F32: conv_dim × d_conv (d_conv fastest; the last tap
                                   // multiplies the current input)
  const float* dt_bias = nullptr;  // [v_heads]
  const float* a = nullptr;        // ssm_a [v_heads]: -exp(A_log), the decay rate (negative)
  const float* norm = nullptr;     // ssm_norm [head_v_dim]
  cpu::WeightMatrix out;           // ssm_out: embd × value_dim
};

// A Mamba2 mixer, for hp's sizes: heads = ssm_time_step_rank of
// mamba_head_dim values, groups = ssm_group_count of B and C (d_state each;
// head h reads group h / (heads / groups)), conv_dim = d_inner + 2 groups
// d_state channels (x, B, C).
struct Mamba2Weights {
  cpu::WeightMatrix in;              // ssm_in: rows z (d_inner), x B C (conv_dim), dt (heads) × embd
  const float* conv = nullptr;       // ssm_conv1d as F32: conv_dim × d_conv (d_conv fastest)
  const float* conv_bias = nullptr;  // [conv_dim], or null
  const float* dt_bias = nullptr;    // [heads]
  const float* a = nullptr;          // ssm_a [heads]: -exp(A_log) (negative)
  const float* d = nullptr;          // ssm_d [heads]: the skip y += D x
  const float* norm = nullptr;       // ssm_norm [d_inner]: group g's weights at g · d_inner / groups
  cpu::WeightMatrix out;             // ssm_out: embd × d_inner
};

struct LayerWeights {
  LayerKind kind = LayerKind::kAttention;
  GatedDeltaWeights gdn;  // kGatedDelta only
  Mamba2Weights mamba;    // kMamba2 only
  const float* attn_norm = nullptr;  // null (olmo2): the mixer reads the residual stream as it is
  cpu::WeightMatrix wq, wk, wv, wo;  // wq: 2 q_dim rows with gated_attention
  const float* bq = nullptr;  // qkv_bias only
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;     // gpt-oss: attention output bias
  const float* sinks = nullptr;  // gpt-oss: one softmax sink logit per head
  uint32_t window = 0;           // > 0: this layer attends through a sliding window of this many positions
  const float* q_norm = nullptr;  // qk_norm: head_dim floats; qk_norm_full: q_dim (k_norm: kv_dim)
  const float* k_norm = nullptr;
  const float* attn_post_norm = nullptr;  // post_norms: the attention output's norm
  bool has_ffn = true;                    // false: a mixer alone (nemotron_h)
  const float* ffn_norm = nullptr;  // gpt-oss, qwen35: post_attention_norm; null (olmo2): the FFN reads x as is
  const float* ffn_post_norm = nullptr;    // post_norms: the FFN output's norm
  cpu::WeightMatrix w_gate, w_up, w_down;  // dense layers (no w_gate with ffn_relu2)
  MoeWeights moe;                          // MoE layers (traits().moe)
  // gemma4 (traits().layer_shapes): a shared-KV layer's KV is that of layer
  // kv_from (its wk and wv are empty); wv empty otherwise: V is K's
  // projection; the layer's output is scaled by out_scale[0] where not null;
  // per-layer embeddings: pe_gate (pl × embd), pe_proj (embd × pl) and
  // pe_post_norm [embd].
  std::optional<uint32_t> kv_from;
  const float* out_scale = nullptr;
  cpu::WeightMatrix pe_gate, pe_proj;
  const float* pe_post_norm = nullptr;
  // Encoders: the LayerNorm biases of attn_post_norm (attn_output_norm) and
  // ffn_post_norm (layer_output_norm), and the FFN's biases (null: none).
  const float* attn_post_norm_b = nullptr;
  const float* ffn_post_norm_b = nullptr;
  const float* b_up = nullptr;
  const float* b_down = nullptr;
};

// An encoder's input side: token embedding + token type 0's row + (bert)
// the position's row, then LayerNorm.
struct EncoderWeights {
  const float* token_type = nullptr;  // token_types' row 0 ("sentence A", as llama.cpp); null: none
  cpu::WeightMatrix position;         // bert: position_embd (rows gathered); nomic-bert: none (rows 0)
  const float* norm = nullptr;        // token_embd_norm
  const float* norm_b = nullptr;
};

// A multi-token-prediction block (llama.cpp's nextn): from the trunk's last
// hidden state h (after output_norm) and the next token's embedding e,
// x = eh_proj · [enorm(e); hnorm(h)], then `block` (an attention layer with
// its FFN), then shared_head_norm and the head.
struct MtpWeights {
  LayerWeights block;
  cpu::WeightMatrix eh_proj;                 // embd × 2 embd
  const float* enorm = nullptr;              // [embd]
  const float* hnorm = nullptr;              // [embd]
  const float* shared_head_norm = nullptr;   // [embd]; the model's output_norm when the file has none
  cpu::WeightMatrix embed_tokens;            // the model's token_embd when the file has none
  cpu::WeightMatrix shared_head_head;        // the model's output when the file has none
};

struct ModelWeights {
  cpu::WeightMatrix token_embd;
  const float* output_norm = nullptr;
  cpu::WeightMatrix output;  // token_embd when the file ties them
  bool tied_output = false;
  // rope_dims / 2 frequency divisors (Llama 3.x's rope_freqs, phi3's LongRoPE
  // factors), or null.
  const float* rope_freqs = nullptr;
  // gemma4's per-layer embeddings (hp.embedding_length_per_layer > 0; empty
  // otherwise): the token table (n_layer × pl columns, in the mmap), the
  // projection of the scaled embedding (n_layer × pl rows) and its norm [pl].
  cpu::WeightMatrix per_layer_token_embd, per_layer_model_proj;
  const float* per_layer_proj_norm = nullptr;
  std::vector<LayerWeights> layers;  // the trunk: hp.num_layers
  std::vector<MtpWeights> mtp;       // hp.nextn_predict_layers blocks
  EncoderWeights encoder;            // encoders only (output_norm and output unbound)
};

// Whether a load repacks matrices into the CPU kernels' layouts (the CPU
// device's), or leaves them as the file's rows (a device with weights of
// its own, e.g. a GPU's, reads the file's bytes; the CPU kernels still run
// such a model, on the rows layout).
enum class WeightPacking { kForCpu, kNone };

class Model {
 public:
  // `progress(done, total)` is called as the weight matrices are bound and,
  // where a kernel wants them so, repacked (the slow part of a load).
  using LoadProgress = std::function<void(size_t done, size_t total)>;
  static Result<std::unique_ptr<Model>> load(const std::string& path, const LoadProgress& progress = nullptr,
                                             WeightPacking packing = WeightPacking::kForCpu);
  // Binds a file already opened (tests build models in memory; a Hugging Face
  // folder is assembled in memory by hf/hf_model.h).
  static Result<std::unique_ptr<Model>> from_file(GgufFile file, const LoadProgress& progress = nullptr,
                                                  WeightPacking packing = WeightPacking::kForCpu);

  Arch arch() const { return arch_; }
  const ArchTraits& traits() const { return traits_; }
  const ModelHParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const GgufFile& file() const { return file_; }
  // RoPE parameters from the hyper-parameters (scaling included).
  cpu::RopeParams rope_params() const;
  uint64_t weight_bytes() const;
  // Drops the resident pages of `bytes` of the file's mapping (a hint: a
  // later read faults them back in unchanged), e.g. once a device has
  // copied them; nothing for a file not mapped from disk.
  void release_mapped_pages(std::span<const uint8_t> bytes) const;

 private:
  explicit Model(GgufFile file) : file_(std::move(file)) {}
  Status bind();
  Result<cpu::WeightMatrix> bind_matrix(const std::string& name, uint64_t cols, uint64_t rows);
  // A tensor of exactly `shape` as one matrix of shape[0] columns (a 1-D
  // tensor is one row; a 3-D one stacks its matrices' rows).
  Result<cpu::WeightMatrix> bind_tensor(const std::string& name, const std::vector<uint64_t>& shape);
  // release_mapped_pages of bytes a bind function copied (packed) and will
  // not read in place again.
  void drop_mapped_copy(std::span<const uint8_t> bytes);
  // Reads every page of the file's mapping that the bound weights still
  // read in place (those not wholly copied: the token embedding table, whose
  // rows each step reads, F32 norms), so that no request waits on the disk
  // for them as a cold page cache would make it, page by page. Ends the
  // bookkeeping below.
  void fault_in_kept_pages();
  Result<const float*> bind_vector(const std::string& name, uint64_t n);
  // A tensor of exactly `shape` (any rank) as F32 values, flattened.
  Result<const float*> bind_floats(const std::string& name, const std::vector<uint64_t>& shape);
  Status bind_attention(uint32_t layer, LayerWeights& l);
  Status bind_gated_delta(uint32_t layer, GatedDeltaWeights& g);
  Status bind_legacy_qkvz(uint32_t layer, GatedDeltaWeights& g);
  Status bind_mamba2(uint32_t layer, Mamba2Weights& m);
  // granitehybrid/nemotron_h: a layer's mixer and FFN by its kind.
  Status bind_mamba_hybrid_layer(uint32_t layer, LayerWeights& l);
  // bind_vector when the file has `name`, else null.
  Result<const float*> bind_vector_or_null(const std::string& name, uint64_t n);
  // A layer's mixer (attention or gated delta) and its FFN.
  Status bind_layer(uint32_t layer, LayerWeights& l);
  Status bind_mtp(uint32_t layer, MtpWeights& m);
  Status bind_rope_factors();
  Result<std::vector<cpu::WeightMatrix>> bind_row_slices(const std::string& name, uint64_t cols,
                                                         std::span<const uint64_t> rows);
  Status bind_phi3_layer(uint32_t layer, LayerWeights& l);
  // gemma4 (model_gemma4.cc).
  Status bind_gemma4_layer(uint32_t layer, LayerWeights& l);
  Status bind_per_layer_embeddings();
  size_t count_gemma4_matrices() const;
  // Encoders (model_encoder.cc): everything after token_embd.
  Status bind_encoder();
  Status bind_encoder_layer(uint32_t layer, LayerWeights& l);
  // bind_matrix, then packed into the preferred layout of its type.
  Result<cpu::WeightMatrix> bind_packed(const std::string& name, uint64_t cols, uint64_t rows);
  // bind_packed when the file has `name`, else `fallback`.
  Result<cpu::WeightMatrix> bind_packed_or(const std::string& name, uint64_t cols, uint64_t rows,
                                           const cpu::WeightMatrix& fallback);
  // `w` in its preferred layout in arena_ (packed once, or copied where its
  // type has no packed layout; mapped pages dropped); `w` itself when the
  // load does not pack (WeightPacking::kNone).
  cpu::WeightMatrix pack(cpu::WeightMatrix w);
  // Rows `rows` of mapped row-major `w` as a matrix of their own, packed
  // where its type has a packed layout and the load packs.
  cpu::WeightMatrix keep_rows(const cpu::WeightMatrix& w, std::span<const int64_t> rows);
  // Each of the `experts` rows × cols matrices of a 3-D expert tensor.
  Result<std::vector<cpu::WeightMatrix>> bind_experts(const std::string& name, uint64_t cols, uint64_t rows,
                                                      uint64_t experts);
  Status bind_moe(uint32_t layer, MoeWeights& moe);
  size_t count_matrices() const;
  // Drops the resident pages of `bytes` (whole pages inside it) when file_
  // is a memory map (load(), not from_file()).

  GgufFile file_;
  Arch arch_ = Arch::kLlama;
  ArchTraits traits_;
  ModelHParams hparams_;
  ModelWeights weights_;
  std::vector<std::vector<float>> owned_vectors_;
  cpu::WeightArena arena_;  // packed_'s bytes
  std::vector<cpu::PackedMatrix> packed_;
  LoadProgress progress_;       // during bind() only
  WeightPacking packing_ = WeightPacking::kForCpu;
  size_t num_matrices_bound_ = 0;
  size_t num_matrices_total_ = 0;
  bool file_is_mapped_ = false;
  // During bind(): tensors bound in place, and the bytes copied out of them.
  std::vector<std::span<const uint8_t>> bound_in_place_;
  std::vector<std::span<const uint8_t>> copied_out_;
};

}  // namespace met
