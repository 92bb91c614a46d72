// `met make-model`: a random-weight model for tests, benchmarks and the
// README's first command. With --chat-template FILE, the vocabulary also gets
// the template's markers and special strings as control tokens
// (chat_control_tokens). qwen35/qwen35moe/qwen3next take their own preset shapes (with
// one MTP block) and the gated delta sizes; granitehybrid/nemotron_h take
// theirs, the Mamba2 sizes (the same --ssm-* flags) and a layer pattern.
// Tested by tests/cli/make_model_command_test.cc.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "chat/output/chat_control_tokens.h"
#include "cli/progress_bar.h"
#include "core/parallel_for.h"
#include "core/pooling.h"
#include "model/random_model.h"

namespace met {
namespace {

struct MakeModelOptions {
  std::string out_path;
  std::string preset = "tiny";
  std::string arch = "llama";
  std::optional<uint32_t> layers, embd, heads, kv_heads, ff, vocab, ctx;
  std::string dtype = "f32";
  uint64_t seed = 0;
  std::string tokenizer;  // "" = the arch's default
  std::string chat_template = "chatml";
  bool tie_embeddings = false;
  bool llama3_rope = false;
  bool longrope = false;
  std::string pooling;  // "": the arch's default
  int threads = 0;
  std::optional<uint32_t> experts, experts_used, expert_ff, shared_expert_ff;
  std::optional<uint32_t> sliding_window, swa_pattern;
  std::optional<float> logit_softcap, attn_softcap;
  std::optional<uint32_t> head_dim, ssm_state, ssm_groups, ssm_heads, conv_kernel, full_attn_interval, mtp_layers;
  bool mtp_copy_last_layer = false;
  float branch_scale = 1.0f;
  bool successor_head = false;
  std::optional<std::string> pattern;
  bool attn_rope = false;
};

// The Mamba2 hybrids' flags, for --arch granitehybrid and nemotron_h only.
Status apply_mamba_options(const MakeModelOptions& o, RandomModelSpec& spec) {
  if (!arch_is_mamba_hybrid(spec.arch)) {
    if (o.pattern || o.attn_rope) {
      return invalid_argument("--pattern and --attn-rope need --arch granitehybrid or nemotron_h");
    }
    return ok_status();
  }
  if (o.full_attn_interval) return invalid_argument("--full-attn-interval needs --arch qwen35, qwen35moe or qwen3next");
  if (o.attn_rope && spec.arch != Arch::kGraniteHybrid) {
    return invalid_argument("--attn-rope needs --arch granitehybrid");
  }
  spec.layer_pattern = o.pattern.value_or(spec.layer_pattern);
  spec.attention_rope = o.attn_rope;
  spec.head_dim = o.head_dim.value_or(o.embd || o.heads ? 0 : spec.head_dim);
  spec.ssm_state_size = o.ssm_state.value_or(spec.ssm_state_size);
  spec.ssm_group_count = o.ssm_groups.value_or(spec.ssm_group_count);
  spec.ssm_conv_kernel = o.conv_kernel.value_or(spec.ssm_conv_kernel);
  // Mamba2 heads of the preset's head dimension over d_inner = 2 embd, unless given.
  const uint32_t embd = o.embd.value_or(spec.embedding_length);
  spec.ssm_time_step_rank = o.ssm_heads.value_or(o.embd ? std::max(1u, 2 * embd / 64) : spec.ssm_time_step_rank);
  if (spec.attention_scale != 0.0f && (o.embd || o.heads || o.head_dim)) {
    const uint32_t head_dim = spec.head_dim != 0 ? spec.head_dim : embd / o.heads.value_or(spec.num_heads);
    spec.attention_scale = 1.0f / static_cast<float>(std::max(1u, head_dim));
  }
  return ok_status();
}

// The gated delta flags, for --arch qwen35, qwen35moe and qwen3next only.
Status apply_hybrid_options(const MakeModelOptions& o, RandomModelSpec& spec) {
  const bool any = o.ssm_state || o.ssm_groups || o.ssm_heads || o.conv_kernel || o.full_attn_interval;
  if (arch_is_mamba_hybrid(spec.arch)) return ok_status();  // apply_mamba_options
  if (any && !arch_is_hybrid(spec.arch)) {
    return invalid_argument("--ssm-state, --ssm-groups, --ssm-heads, --conv-kernel and --full-attn-interval need "
                            "--arch qwen35, qwen35moe or qwen3next");
  }
  spec.head_dim = o.head_dim.value_or(o.embd || o.heads ? 0 : spec.head_dim);
  spec.ssm_state_size = o.ssm_state.value_or(spec.ssm_state_size);
  spec.ssm_group_count = o.ssm_groups.value_or(spec.ssm_group_count);
  spec.ssm_time_step_rank = o.ssm_heads.value_or(spec.ssm_time_step_rank);
  spec.ssm_conv_kernel = o.conv_kernel.value_or(spec.ssm_conv_kernel);
  spec.full_attention_interval = o.full_attn_interval.value_or(spec.full_attention_interval);
  return ok_status();
}

// MTP blocks: qwen35's presets have one; dense and MoE transformers (met's
// test models) one given --mtp-layers.
void apply_mtp_options(const MakeModelOptions& o, RandomModelSpec& spec) {
  spec.nextn_predict_layers = o.mtp_layers.value_or(spec.nextn_predict_layers);
  spec.mtp_copies_last_layer = o.mtp_copy_last_layer;
}

Result<RandomModelSpec> build_spec(const MakeModelOptions& o) {
  std::optional<Arch> arch = parse_arch(o.arch);
  if (!arch) {
    return invalid_argument("--arch '{}' is not llama, mistral, qwen2, qwen3, qwen3moe, mixtral, gpt-oss, qwen35, "
                            "qwen35moe, qwen3next, granitehybrid, nemotron_h, gemma2, gemma3, gemma4, granite, "
                            "smollm3, olmo2, phi3, bert or nomic-bert",
                            o.arch);
  }
  std::optional<RandomModelSpec> preset = random_model_preset(o.preset, *arch);
  if (!preset) return invalid_argument("--preset '{}' is not tiny, small or medium", o.preset);
  RandomModelSpec spec = *preset;
  MET_RETURN_IF_ERROR(apply_hybrid_options(o, spec));
  MET_RETURN_IF_ERROR(apply_mamba_options(o, spec));
  apply_mtp_options(o, spec);
  spec.num_experts = o.experts.value_or(0);
  spec.num_experts_used = o.experts_used.value_or(0);
  spec.expert_feed_forward_length = o.expert_ff.value_or(0);
  spec.shared_expert_feed_forward_length = o.shared_expert_ff.value_or(0);
  const bool windowed = spec.arch == Arch::kGptOss || spec.arch == Arch::kGemma2 || spec.arch == Arch::kGemma3 ||
                        spec.arch == Arch::kGemma4 || spec.arch == Arch::kOlmo2;
  if ((o.sliding_window || o.swa_pattern) && !windowed) {
    return invalid_argument("--sliding-window and --swa-pattern need --arch gpt-oss, gemma2, gemma3, gemma4 or olmo2");
  }
  spec.sliding_window = o.sliding_window.value_or(spec.sliding_window);
  spec.final_logit_softcap = o.logit_softcap.value_or(spec.final_logit_softcap);
  spec.attn_logit_softcap = o.attn_softcap.value_or(spec.attn_logit_softcap);
  spec.branch_scale = o.branch_scale;
  spec.successor_head = o.successor_head;
  spec.swa_pattern = o.swa_pattern.value_or(spec.swa_pattern);
  spec.num_layers = o.layers.value_or(spec.num_layers);
  spec.embedding_length = o.embd.value_or(spec.embedding_length);
  spec.num_heads = o.heads.value_or(spec.num_heads);
  spec.num_kv_heads = o.kv_heads.value_or(o.heads ? spec.num_heads : spec.num_kv_heads);
  spec.feed_forward_length = o.ff.value_or(spec.feed_forward_length);
  spec.vocab_size = o.vocab.value_or(spec.vocab_size);
  spec.context_length = o.ctx.value_or(spec.context_length);
  apply_moe_preset(o.preset, spec);
  if (spec.arch == Arch::kGraniteHybrid && spec.num_experts > 0 && spec.expert_feed_forward_length == 0) {
    spec.expert_feed_forward_length = spec.feed_forward_length;  // granite's experts are --ff wide
  }
  std::optional<GgmlType> dtype = parse_ggml_type(o.dtype);
  if (!dtype) return invalid_argument("--dtype '{}' is not a known type", o.dtype);
  spec.dtype = *dtype;
  spec.seed = o.seed;
  if (o.tokenizer == "spm") {
    spec.tokenizer = VocabKind::kSpm;
  } else if (o.tokenizer == "bpe") {
    spec.tokenizer = VocabKind::kBpe;
  } else if (!o.tokenizer.empty()) {
    return invalid_argument("--tokenizer '{}' is not spm or bpe", o.tokenizer);
  }
  if (o.chat_template != "chatml") {
    std::ifstream in(o.chat_template, std::ios::binary);
    if (!in) return io_error("--chat-template: cannot read '{}'", o.chat_template);
    std::ostringstream text;
    text << in.rdbuf();
    spec.chat_template = text.str();
    spec.control_tokens = chat_control_tokens(spec.chat_template);
  }
  spec.tied_output = o.tie_embeddings;
  spec.llama3_rope = o.llama3_rope;
  spec.longrope = o.longrope;
  if (!o.pooling.empty()) {
    spec.pooling = parse_pooling(o.pooling);
    if (!spec.pooling.has_value()) return invalid_argument("--pooling '{}' is not none, mean, cls or last", o.pooling);
  }
  spec.num_threads = o.threads > 0 ? o.threads : default_num_threads();
  MET_RETURN_IF_ERROR(validate_spec(spec));
  return spec;
}

Status run_make_model(const MakeModelOptions& o) {
  MET_ASSIGN_OR_RETURN(RandomModelSpec spec, build_spec(o));
  RandomModelSummary summary;
  {
    ProgressBar bar("making model");
    MET_ASSIGN_OR_RETURN(summary, make_random_model(spec, o.out_path, [&bar](size_t d, size_t t) {
                           bar.update(d, t);
                         }));
  }
  for (const auto& f : summary.fallbacks) std::cerr << "met make-model: note: " << f << "\n";
  std::cout << fmt::format("wrote {}: {} {} with {} parameters, {} bytes (random weights)\n",
                           o.out_path, arch_name(spec.arch), ggml_type_name(spec.dtype),
                           summary.num_params, summary.file_bytes);
  return ok_status();
}

}  // namespace

void add_make_model_command(CLI::App& app) {
  auto o = std::make_shared<MakeModelOptions>();
  CLI::App* cmd = app.add_subcommand(
      "make-model", "Write a random-weight model with a working tokenizer and chat template");
  cmd->add_option("-o,--output", o->out_path, "Output GGUF file")->required();
  cmd->add_option("--preset", o->preset, "tiny (~15M), small (~110M) or medium (~500M)")
      ->capture_default_str();
  cmd->add_option("--arch", o->arch,
                  "llama, mistral, qwen2, qwen3, qwen3moe, mixtral, gpt-oss, qwen35, qwen35moe, qwen3next, "
                  "granitehybrid, nemotron_h, gemma2, gemma3, gemma4, granite, smollm3, olmo2, phi3, bert or "
                  "nomic-bert")
      ->capture_default_str();
  cmd->add_option("--experts", o->experts, "Experts per MoE layer (default by preset: 8, 16, 32)");
  cmd->add_option("--experts-used", o->experts_used, "Experts each token uses (default by preset: 2, 4, 4)");
  cmd->add_option("--expert-ff", o->expert_ff, "Feed-forward length of each expert (default: --ff / 4)");
  cmd->add_option("--shared-expert-ff", o->shared_expert_ff,
                  "qwen3moe: add a shared expert of this feed-forward length (met only; llama.cpp's "
                  "qwen3moe loader refuses its tensors)");
  cmd->add_option("--sliding-window", o->sliding_window,
                  "gpt-oss, gemma2, gemma3, gemma4, olmo2: positions a windowed layer reads (defaults 128, 4096, 512, "
                  "512, none)");
  cmd->add_option("--swa-pattern", o->swa_pattern,
                  "gpt-oss, gemma2, gemma3, gemma4, olmo2: layer i is windowed when i % N < N - 1 (defaults 2, 2, 6, "
                  "4, 4; 0: every layer)");
  cmd->add_option("--logit-softcap", o->logit_softcap,
                  "gemma2, gemma3, gemma4: final logit soft-capping (defaults 30, none, 30)");
  cmd->add_option("--attn-softcap", o->attn_softcap, "gemma2: attention score soft-capping (default 50)");
  cmd->add_option("--head-dim", o->head_dim, "Attention head dimension (default: the preset's, or --embd / "
                  "--heads when either is given; qwen35 presets: 64, 128, 256)");
  cmd->add_option("--ssm-state", o->ssm_state, "qwen35: gated delta head dimension (presets: 64, 128, "
                  "128); granitehybrid/nemotron_h: Mamba2 d_state (64, 128, 128)");
  cmd->add_option("--ssm-groups", o->ssm_groups, "qwen35: gated delta key heads (presets: 4, 4, 8); "
                  "granitehybrid/nemotron_h: Mamba2 groups of B and C");
  cmd->add_option("--ssm-heads", o->ssm_heads, "qwen35: gated delta value heads, a multiple of --ssm-groups "
                  "(presets: 4, 8, 16); granitehybrid/nemotron_h: Mamba2 heads over d_inner = 2 --embd "
                  "(default: heads of 64)");
  cmd->add_option("--conv-kernel", o->conv_kernel, "qwen35: taps of the short convolution (default 4)");
  cmd->add_option("--full-attn-interval", o->full_attn_interval,
                  "qwen35: every N-th layer is full attention, the rest gated delta (default 4)");
  cmd->add_option("--mtp-layers", o->mtp_layers,
                  "MTP (nextn) blocks after the trunk (qwen35 presets: 1; others 0; llama.cpp reads them for the "
                  "qwen35 family only, and refuses other files that have them)");
  cmd->add_option("--branch-scale", o->branch_scale,
                  "Scale of every layer's output projection (attn_output, ffn_down, ssm_out): below 1 the layers "
                  "nudge the residual stream and the next token follows the last more (default 1)");
  cmd->add_flag("--successor-head", o->successor_head,
                "output.weight names each token's successor (a fixed permutation of the vocab) by a wide margin "
                "where the last layer's state is near the token's embedding (with --branch-scale below 1): logits "
                "a quantized copy agrees with, for measuring drafting with a quantized twin");
  cmd->add_flag("--mtp-copy-last-layer", o->mtp_copy_last_layer,
                "The MTP block's layer is the trunk's last attention layer and its projection passes the "
                "next token's embedding through, so its drafts often match (for measuring MTP drafting)");
  cmd->add_option("--pattern", o->pattern,
                  "granitehybrid/nemotron_h: layer kinds, repeated over the layers: M Mamba2, * attention, - an MLP "
                  "(nemotron_h) (presets: granitehybrid MMM*, MMMMM*, MMMMMMM*; nemotron_h M-M-M-M*-)");
  cmd->add_flag("--attn-rope", o->attn_rope,
                "granitehybrid: rope on the attention layers (rope.scaling.finetuned; Granite 4.0-H has none)");
  cmd->add_option("--layers", o->layers, "Transformer blocks (qwen35: trunk layers, without MTP blocks)");
  cmd->add_option("--embd", o->embd, "Embedding length");
  cmd->add_option("--heads", o->heads, "Attention heads");
  cmd->add_option("--kv-heads", o->kv_heads, "Key/value heads (default: --heads if given)");
  cmd->add_option("--ff", o->ff, "Feed-forward length");
  cmd->add_option("--vocab", o->vocab, "Vocabulary size (>= 512)");
  cmd->add_option("--ctx", o->ctx, "Training context length");
  cmd->add_option("--dtype", o->dtype,
                  "f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, iq4_nl, iq4_xs or mxfp4 (experts; the rest q8_0)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "spm or bpe (default: spm for llama/mistral)");
  cmd->add_option("--chat-template", o->chat_template,
                  "chatml or a Jinja file (its markers become control tokens)")
      ->capture_default_str();
  cmd->add_flag("--tie-embeddings", o->tie_embeddings, "Omit output.weight (reuse the embedding)");
  cmd->add_flag("--llama3-rope", o->llama3_rope, "Write rope_freqs.weight with Llama 3.1's rope scaling");
  cmd->add_flag("--longrope", o->longrope,
                "phi3: LongRoPE's long and short factors (an original context of --ctx / 4)");
  cmd->add_option("--pooling", o->pooling,
                  "Write {arch}.pooling_type: mean, cls, last or none (an embedding model; encoders default to "
                  "bert cls, nomic-bert mean)");
  cmd->add_option("--threads", o->threads, "Threads (default: all cores)");
  cmd->callback([o] { exit_on_error("make-model", run_make_model(*o)); });
}

}  // namespace met
