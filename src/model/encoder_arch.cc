// The encoders' tensor lists (bert, nomic-bert), split from arch.cc.
// Tested by tests/model/arch_test.cc and tests/model/encoder_model_test.cc.
#include <fmt/format.h>

#include "model/arch.h"

namespace met {
namespace {

// A LayerNorm's weight and bias.
void add_layer_norm(const std::string& name, uint64_t n, std::vector<TensorSpec>& t) {
  t.push_back({name + ".weight", {n}, TensorRole::kNorm});
  t.push_back({name + ".bias", {n}, TensorRole::kBias});
}

void add_encoder_layer(Arch arch, uint32_t i, const ModelHParams& hp, std::vector<TensorSpec>& t) {
  auto name = [i](std::string_view what) { return fmt::format("blk.{}.{}", i, what); };
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  const bool bert = arch == Arch::kBert;
  if (bert) {
    for (const char* m : {"attn_q", "attn_k", "attn_v"}) {
      t.push_back({name(m) + ".weight", {embd, embd}, TensorRole::kMatrix});
      t.push_back({name(m) + ".bias", {embd}, TensorRole::kBias});
    }
  } else {
    t.push_back({name("attn_qkv.weight"), {embd, 3 * embd}, TensorRole::kMatrix});
  }
  t.push_back({name("attn_output.weight"), {embd, embd}, TensorRole::kMatrix});
  if (bert) t.push_back({name("attn_output.bias"), {embd}, TensorRole::kBias});
  add_layer_norm(name("attn_output_norm"), embd, t);
  t.push_back({name("ffn_up.weight"), {embd, ff}, TensorRole::kMatrix});
  if (bert) t.push_back({name("ffn_up.bias"), {ff}, TensorRole::kBias});
  if (!bert) t.push_back({name("ffn_gate.weight"), {embd, ff}, TensorRole::kMatrix});
  t.push_back({name("ffn_down.weight"), {ff, embd}, TensorRole::kMatrix});
  if (bert) t.push_back({name("ffn_down.bias"), {embd}, TensorRole::kBias});
  add_layer_norm(name("layer_output_norm"), embd, t);
}

}  // namespace

bool arch_is_encoder(Arch arch) { return arch == Arch::kBert || arch == Arch::kNomicBert; }

std::vector<TensorSpec> encoder_tensors(Arch arch, const ModelHParams& hp) {
  const uint64_t embd = hp.embedding_length;
  std::vector<TensorSpec> t;
  t.push_back({"token_embd.weight", {embd, hp.vocab_size}, TensorRole::kMatrix});
  t.push_back({"token_types.weight", {embd, hp.token_type_count}, TensorRole::kBias});
  if (arch == Arch::kBert) t.push_back({"position_embd.weight", {embd, hp.context_length}, TensorRole::kMatrix});
  add_layer_norm("token_embd_norm", embd, t);
  for (uint32_t i = 0; i < hp.num_layers; ++i) add_encoder_layer(arch, i, hp, t);
  return t;
}

}  // namespace met
