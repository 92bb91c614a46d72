// gemma4's parts of the forward step: attention at each layer's own head
// size and KV heads through the cache's widest rows, shared-KV layers, and
// the per-layer embeddings (see forward_pass.h). Tested by
// tests/model/cpu_device_test.cc against the reference forward.
#include <algorithm>
#include <cmath>

#include "model/forward_pass.h"

namespace met {

void ForwardPass::wide_attention_block(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const auto il = static_cast<uint32_t>(layer);
  const int64_t rows = plan.num_rows(), embd = hp.embedding_length;
  const int64_t hd = hp.layer_head_dim(il), q_dim = hd * hp.num_heads;
  input_norm(ctx, l.attn_norm, rows);
  Product qkv[3] = {{&l.wq, qc_.data(), LoraTarget::kQ}};
  size_t num_products = 1;
  if (!l.kv_from) {
    qkv[num_products++] = {&l.wk, kc_.data(), LoraTarget::kK};
    if (l.wv.data != nullptr) qkv[num_products++] = {&l.wv, vc_.data(), LoraTarget::kV};
  }
  linear(ctx, xn_.data(), rows, embd, std::span<const Product>(qkv, num_products), act_, lora_for(layer));
  wide_qkv_post(ctx, layer, plan);
  const cpu::AttnLayerOptions opts{.window = static_cast<int32_t>(l.window), .sinks = nullptr, .softcap = 0.0f};
  cpu::paged_attention(ctx, kv_, kind_index_[static_cast<size_t>(layer)], attn_seqs_, q_.data(), hp.q_dim(),
                       static_cast<int32_t>(hp.num_heads), attn_scale_, attn_out_.data(), hp.q_dim(),
                       attn_scratch_, opts);
  {  // each head's first hd outputs, compact, for wo
    const auto [r0, r1] = ctx.split(rows);
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t h = 0; h < hp.num_heads; ++h) {
        const float* from = &attn_out_[static_cast<size_t>(r * hp.q_dim() + h * hp.head_dim)];
        std::copy(from, from + hd, &qc_[static_cast<size_t>(r * q_dim + h * hd)]);
      }
    }
    ctx.barrier();
  }
  const Product o[] = {{&l.wo, tmp_.data(), LoraTarget::kO}};
  linear(ctx, qc_.data(), rows, q_dim, o, act_, lora_for(layer));
  add_residual(ctx, rows, l.attn_post_norm);
}

// Q (and where the layer keeps KV, K and V) normed per head and rotated at
// the layer's sizes, then widened to the cache's rows; K and V stored.
void ForwardPass::wide_qkv_post(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const auto il = static_cast<uint32_t>(layer);
  const int64_t hd = hp.layer_head_dim(il), q_dim = hd * hp.num_heads;
  const int64_t kv_heads = hp.layer_kv_heads(il), kv_dim = hd * kv_heads;
  const float eps = hp.rms_norm_eps;
  const cpu::RopeParams& rope = l.window > 0 ? rope_swa_ : rope_;
  const auto [r0, r1] = ctx.split(plan.num_rows());
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t pos = plan.positions[static_cast<size_t>(r)];
    float* q = &qc_[static_cast<size_t>(r * q_dim)];
    for (int64_t h = 0; h < hp.num_heads; ++h) cpu::rms_norm(q + h * hd, l.q_norm, hd, eps, q + h * hd);
    cpu::rope(q, static_cast<int32_t>(hp.num_heads), pos, rope);
    float* wide_q = &q_[static_cast<size_t>(r * hp.q_dim())];
    std::fill(wide_q, wide_q + hp.q_dim(), 0.0f);
    for (int64_t h = 0; h < hp.num_heads; ++h) std::copy(q + h * hd, q + (h + 1) * hd, wide_q + h * hp.head_dim);
    if (l.kv_from) continue;
    float* k = &kc_[static_cast<size_t>(r * kv_dim)];
    float* v = &vc_[static_cast<size_t>(r * kv_dim)];
    if (l.wv.data == nullptr) std::copy(k, k + kv_dim, v);  // K's projection serves as V
    for (int64_t h = 0; h < kv_heads; ++h) {
      cpu::rms_norm(v + h * hd, ones_.data(), hd, eps, v + h * hd);
      cpu::rms_norm(k + h * hd, l.k_norm, hd, eps, k + h * hd);
    }
    cpu::rope(k, static_cast<int32_t>(kv_heads), pos, rope);
    widen_kv_row(layer, r);
  }
  if (!l.kv_from) {
    for (const StepSeq& s : plan.seqs) {
      for (int32_t i = 0; i < s.num_rows; ++i) {
        const int64_t r = s.row_begin + i;
        if (r < r0 || r >= r1) continue;
        kv_.store(kind_index_[static_cast<size_t>(layer)], s.block_table, s.num_cached + i,
                  &k_[static_cast<size_t>(r * hp.kv_dim())], &v_[static_cast<size_t>(r * hp.kv_dim())]);
      }
    }
  }
  ctx.barrier();
}

// Cache head c holds the layer's KV head c / (cache heads / layer heads),
// its first hd values, zeros after.
void ForwardPass::widen_kv_row(int layer, int64_t r) {
  const ModelHParams& hp = model_.hparams();
  const auto il = static_cast<uint32_t>(layer);
  const int64_t hd = hp.layer_head_dim(il), kv_heads = hp.layer_kv_heads(il), width = hp.head_dim;
  const int64_t repeat = hp.num_kv_heads / kv_heads;
  const float* k = &kc_[static_cast<size_t>(r * hd * kv_heads)];
  const float* v = &vc_[static_cast<size_t>(r * hd * kv_heads)];
  float* wide_k = &k_[static_cast<size_t>(r * hp.kv_dim())];
  float* wide_v = &v_[static_cast<size_t>(r * hp.kv_dim())];
  std::fill(wide_k, wide_k + hp.kv_dim(), 0.0f);
  std::fill(wide_v, wide_v + hp.kv_dim(), 0.0f);
  for (int64_t c = 0; c < hp.num_kv_heads; ++c) {
    const int64_t h = c / repeat;
    std::copy(k + h * hd, k + (h + 1) * hd, wide_k + c * width);
    std::copy(v + h * hd, v + (h + 1) * hd, wide_v + c * width);
  }
}

// Per row: (rms_norm(per_layer_model_proj · x / sqrt(embd)) per layer's
// slice + per_layer_token_embd[token] · sqrt(pl)) / sqrt(2), x the scaled
// token embedding (llama.cpp's project_per_layer_inputs).
void ForwardPass::per_layer_inputs(cpu::ThreadCtx& ctx, std::span<const TokenId> tokens, int64_t rows) {
  const ModelHParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  const int64_t pl = hp.embedding_length_per_layer, all = pl * hp.num_layers;
  if (pl == 0) return;
  const Product proj[] = {{&w.per_layer_model_proj, per_layer_inputs_.data(), LoraTarget::kNone}};
  linear(ctx, x_.data(), rows, hp.embedding_length, proj, act_);
  const float proj_scale = 1.0f / std::sqrt(static_cast<float>(hp.embedding_length));
  const float token_scale = std::sqrt(static_cast<float>(pl)), sum_scale = 1.0f / std::sqrt(2.0f);
  float* token_row = &per_layer_row_[static_cast<size_t>(ctx.ith() * all)];
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    float* in = &per_layer_inputs_[static_cast<size_t>(r * all)];
    for (int64_t i = 0; i < all; ++i) in[i] *= proj_scale;
    for (int64_t s = 0; s < all; s += pl) cpu::rms_norm(in + s, w.per_layer_proj_norm, pl, hp.rms_norm_eps, in + s);
    const cpu::WeightMatrix& table = w.per_layer_token_embd;
    cpu::embedding_row(table.type, table.data, all, tokens[static_cast<size_t>(r)], token_row);
    for (int64_t i = 0; i < all; ++i) in[i] = (in[i] + token_row[i] * token_scale) * sum_scale;
  }
  ctx.barrier();
}

// x += rms_norm(proj · (gelu(inp_gate · x) ⊙ the layer's per-layer input))
// by post_norm; then x *= the layer output scale.
void ForwardPass::per_layer_block(cpu::ThreadCtx& ctx, int layer, int64_t rows) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const int64_t embd = hp.embedding_length, pl = hp.embedding_length_per_layer, all = pl * hp.num_layers;
  if (pl > 0) {
    const Product gate[] = {{&l.pe_gate, pe_.data(), LoraTarget::kNone}};
    linear(ctx, x_.data(), rows, embd, gate, act_);
    {
      const auto [r0, r1] = ctx.split(rows);
      for (int64_t r = r0; r < r1; ++r) {
        float* g = &pe_[static_cast<size_t>(r * pl)];
        cpu::geglu(g, &per_layer_inputs_[static_cast<size_t>(r * all + layer * pl)], pl, g);
      }
      ctx.barrier();
    }
    const Product proj[] = {{&l.pe_proj, tmp_.data(), LoraTarget::kNone}};
    linear(ctx, pe_.data(), rows, pl, proj, act_);
    add_residual(ctx, rows, l.pe_post_norm);
  }
  if (l.out_scale == nullptr) return;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t i = r0 * embd; i < r1 * embd; ++i) x_[static_cast<size_t>(i)] *= *l.out_scale;
  ctx.barrier();
}

}  // namespace met
