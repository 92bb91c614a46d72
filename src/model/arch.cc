// Architecture tensor lists. Tested by tests/model/arch_test.cc.
#include "model/arch.h"

#include <fmt/format.h>

namespace met {

std::optional<Arch> parse_arch(std::string_view name) {
  for (Arch a : {Arch::kLlama, Arch::kMistral, Arch::kQwen2, Arch::kQwen3, Arch::kQwen3Moe, Arch::kMixtral,
                 Arch::kGptOss}) {
    if (arch_name(a) == name) return a;
  }
  return std::nullopt;
}

std::string_view arch_name(Arch arch) {
  switch (arch) {
    case Arch::kLlama: return "llama";
    case Arch::kMistral: return "mistral";
    case Arch::kQwen2: return "qwen2";
    case Arch::kQwen3: return "qwen3";
    case Arch::kQwen3Moe: return "qwen3moe";
    case Arch::kMixtral: return "mixtral";
    case Arch::kGptOss: return "gpt-oss";
  }
  return "unknown";
}

std::string_view gguf_arch_name(Arch arch) {
  return arch == Arch::kMistral || arch == Arch::kMixtral ? "llama" : arch_name(arch);
}

namespace {

void add_moe_ffn(uint32_t layer, const ModelHParams& hp, bool biased, std::vector<TensorSpec>& t) {
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, ff = hp.expert_feed_forward_length, n = hp.expert_count;
  t.push_back({name("ffn_gate_inp.weight"), {embd, n}, TensorRole::kRouter});
  t.push_back({name("ffn_gate_exps.weight"), {embd, ff, n}, TensorRole::kMatrix});
  t.push_back({name("ffn_down_exps.weight"), {ff, embd, n}, TensorRole::kMatrix});
  t.push_back({name("ffn_up_exps.weight"), {embd, ff, n}, TensorRole::kMatrix});
  if (biased) {
    t.push_back({name("ffn_gate_inp.bias"), {n}, TensorRole::kBias});
    t.push_back({name("ffn_gate_exps.bias"), {ff, n}, TensorRole::kBias});
    t.push_back({name("ffn_down_exps.bias"), {embd, n}, TensorRole::kBias});
    t.push_back({name("ffn_up_exps.bias"), {ff, n}, TensorRole::kBias});
  }
  const uint64_t sh = hp.expert_shared_feed_forward_length;
  if (sh == 0) return;
  t.push_back({name("ffn_gate_inp_shexp.weight"), {embd}, TensorRole::kRouter});
  t.push_back({name("ffn_gate_shexp.weight"), {embd, sh}, TensorRole::kMatrix});
  t.push_back({name("ffn_up_shexp.weight"), {embd, sh}, TensorRole::kMatrix});
  t.push_back({name("ffn_down_shexp.weight"), {sh, embd}, TensorRole::kMatrix});
}

}  // namespace

std::vector<TensorSpec> arch_tensors(Arch arch, const ModelHParams& hp, bool tied_output) {
  const uint64_t embd = hp.embedding_length;
  const uint64_t q_dim = hp.q_dim();
  const uint64_t kv_dim = hp.kv_dim();
  const uint64_t ff = hp.feed_forward_length;
  std::vector<TensorSpec> t;
  t.push_back({"token_embd.weight", {embd, hp.vocab_size}, TensorRole::kMatrix});
  t.push_back({"output_norm.weight", {embd}, TensorRole::kNorm});
  if (!tied_output) t.push_back({"output.weight", {embd, hp.vocab_size}, TensorRole::kMatrix});
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
    t.push_back({name("attn_norm.weight"), {embd}, TensorRole::kNorm});
    t.push_back({name("attn_q.weight"), {embd, q_dim}, TensorRole::kMatrix});
    t.push_back({name("attn_k.weight"), {embd, kv_dim}, TensorRole::kMatrix});
    t.push_back({name("attn_v.weight"), {embd, kv_dim}, TensorRole::kMatrix});
    if (arch == Arch::kQwen2 || arch == Arch::kGptOss) {
      t.push_back({name("attn_q.bias"), {q_dim}, TensorRole::kBias});
      t.push_back({name("attn_k.bias"), {kv_dim}, TensorRole::kBias});
      t.push_back({name("attn_v.bias"), {kv_dim}, TensorRole::kBias});
    }
    if (arch == Arch::kQwen3 || arch == Arch::kQwen3Moe) {
      t.push_back({name("attn_q_norm.weight"), {hp.head_dim}, TensorRole::kNorm});
      t.push_back({name("attn_k_norm.weight"), {hp.head_dim}, TensorRole::kNorm});
    }
    t.push_back({name("attn_output.weight"), {q_dim, embd}, TensorRole::kMatrix});
    if (arch == Arch::kGptOss) {
      t.push_back({name("attn_output.bias"), {embd}, TensorRole::kBias});
      t.push_back({name("attn_sinks.weight"), {hp.num_heads}, TensorRole::kBias});
    }
    t.push_back({name(arch == Arch::kGptOss ? "post_attention_norm.weight" : "ffn_norm.weight"), {embd},
                 TensorRole::kNorm});
    if (hp.is_moe()) {
      add_moe_ffn(i, hp, arch == Arch::kGptOss, t);
      continue;
    }
    t.push_back({name("ffn_gate.weight"), {embd, ff}, TensorRole::kMatrix});
    t.push_back({name("ffn_up.weight"), {embd, ff}, TensorRole::kMatrix});
    t.push_back({name("ffn_down.weight"), {ff, embd}, TensorRole::kMatrix});
  }
  return t;
}

}  // namespace met
