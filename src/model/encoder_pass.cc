// The BERT-family encoder step. Tested by tests/model/encoder_model_test.cc.
#include "model/encoder_pass.h"

#include <cmath>

#include "model/hidden_outputs.h"

namespace met {

EncoderPass::EncoderPass(const Model& model, cpu::KvCache& kv, ForwardLimits limits, int num_threads)
    : model_(model), kv_(kv), limits_(limits), rope_(model.rope_params()) {
  const ModelHParams& hp = model.hparams();
  const auto rows = static_cast<size_t>(limits.max_rows);
  attn_scale_ = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  x_.resize(rows * hp.embedding_length);
  q_.resize(rows * hp.q_dim());
  k_.resize(rows * hp.kv_dim());
  v_.resize(rows * hp.kv_dim());
  attn_out_.resize(rows * hp.q_dim());
  tmp_.resize(rows * hp.embedding_length);
  gate_.resize(rows * hp.feed_forward_length);
  up_.resize(rows * hp.feed_forward_length);
  act_ = ActivationBuffers(static_cast<int64_t>(rows),
                           static_cast<int64_t>(std::max({hp.embedding_length, hp.q_dim(), hp.feed_forward_length})));
  attn_seqs_.reserve(static_cast<size_t>(limits.max_seqs));
  attn_scratch_ = attention_scratch(hp, limits.max_rows, num_threads);
}

void EncoderPass::prepare_result(const StepPlan& plan, StepResult& result) const {
  result.vocab_size = static_cast<int32_t>(model_.hparams().vocab_size);
  result.logits.clear();
  result.argmax.assign(plan.outputs.size(), 0);
  result.mtp_argmax.clear();
  result.mtp_chain_width = 0;
  result.mtp_chain.clear();
  size_hidden_result(plan, static_cast<int32_t>(model_.hparams().embedding_length), result);
}

void EncoderPass::embed(cpu::ThreadCtx& ctx, const StepPlan& plan, std::span<const TokenId> tokens) {
  const ModelHParams& hp = model_.hparams();
  const EncoderWeights& e = model_.weights().encoder;
  const cpu::WeightMatrix& table = model_.weights().token_embd;
  const int64_t embd = hp.embedding_length;
  std::vector<float>& pos_row = tmp_;  // row r's position embedding, at its own row of tmp_
  const auto [r0, r1] = ctx.split(plan.num_rows());
  for (int64_t r = r0; r < r1; ++r) {
    float* x = &x_[static_cast<size_t>(r * embd)];
    cpu::embedding_row(table.type, table.data, embd, tokens[static_cast<size_t>(r)], x);
    if (e.token_type != nullptr) cpu::add(x, e.token_type, embd, x);
    if (e.position.data != nullptr) {
      float* p = &pos_row[static_cast<size_t>(r * embd)];
      cpu::embedding_row(e.position.type, e.position.data, embd, plan.positions[static_cast<size_t>(r)], p);
      cpu::add(x, p, embd, x);
    }
    cpu::layer_norm(x, e.norm, e.norm_b, embd, hp.layer_norm_eps, x);
  }
  ctx.barrier();
}

void EncoderPass::attention_block(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = model_.weights().layers[static_cast<size_t>(layer)];
  const int64_t rows = plan.num_rows(), embd = hp.embedding_length, q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
  const Product qkv[] = {{&l.wq, q_.data()}, {&l.wk, k_.data()}, {&l.wv, v_.data()}};
  linear(ctx, x_.data(), rows, embd, qkv, act_);
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    float* q = &q_[static_cast<size_t>(r * q_dim)];
    float* k = &k_[static_cast<size_t>(r * kv_dim)];
    if (l.bq != nullptr) {
      cpu::add(q, l.bq, q_dim, q);
      cpu::add(k, l.bk, kv_dim, k);
      cpu::add(&v_[static_cast<size_t>(r * kv_dim)], l.bv, kv_dim, &v_[static_cast<size_t>(r * kv_dim)]);
    }
    if (model_.arch() == Arch::kNomicBert) {
      const int32_t pos = plan.positions[static_cast<size_t>(r)];
      cpu::rope(q, static_cast<int32_t>(hp.num_heads), pos, rope_);
      cpu::rope(k, static_cast<int32_t>(hp.num_kv_heads), pos, rope_);
    }
  }
  for (const StepSeq& s : plan.seqs) {
    for (int32_t i = 0; i < s.num_rows; ++i) {
      const int64_t r = s.row_begin + i;
      if (r < r0 || r >= r1) continue;
      kv_.store(layer, s.block_table, s.num_cached + i, &k_[static_cast<size_t>(r * kv_dim)],
                &v_[static_cast<size_t>(r * kv_dim)]);
    }
  }
  ctx.barrier();
  cpu::paged_attention(ctx, kv_, layer, attn_seqs_, q_.data(), q_dim, static_cast<int32_t>(hp.num_heads),
                       attn_scale_, attn_out_.data(), q_dim, attn_scratch_);
  ctx.barrier();
  const Product o[] = {{&l.wo, tmp_.data()}};
  linear(ctx, attn_out_.data(), rows, q_dim, o, act_);
  add_and_norm(ctx, rows, l.bo, l.attn_post_norm, l.attn_post_norm_b);
}

void EncoderPass::ffn_block(cpu::ThreadCtx& ctx, int layer, int64_t rows) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = model_.weights().layers[static_cast<size_t>(layer)];
  const int64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  const bool gated = l.w_gate.data != nullptr;
  const Product gate_up[] = {{&l.w_up, up_.data()}, {&l.w_gate, gate_.data()}};
  linear(ctx, x_.data(), rows, embd, std::span(gate_up, gated ? 2 : 1), act_);
  {
    const auto [r0, r1] = ctx.split(rows);
    for (int64_t r = r0; r < r1; ++r) {
      float* up = &up_[static_cast<size_t>(r * ff)];
      if (gated) {
        cpu::swiglu(&gate_[static_cast<size_t>(r * ff)], up, ff, up);
        continue;
      }
      if (l.b_up != nullptr) cpu::add(up, l.b_up, ff, up);
      cpu::gelu(up, ff, up);
    }
    ctx.barrier();
  }
  const Product down[] = {{&l.w_down, tmp_.data()}};
  linear(ctx, up_.data(), rows, ff, down, act_);
  add_and_norm(ctx, rows, l.b_down, l.ffn_post_norm, l.ffn_post_norm_b);
}

void EncoderPass::add_and_norm(cpu::ThreadCtx& ctx, int64_t rows, const float* bias, const float* w,
                               const float* b) {
  const ModelHParams& hp = model_.hparams();
  const int64_t embd = hp.embedding_length;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    float* x = &x_[static_cast<size_t>(r * embd)];
    float* t = &tmp_[static_cast<size_t>(r * embd)];
    if (bias != nullptr) cpu::add(t, bias, embd, t);
    cpu::add(x, t, embd, x);
    cpu::layer_norm(x, w, b, embd, hp.layer_norm_eps, x);
  }
  ctx.barrier();
}

void EncoderPass::run(cpu::ThreadCtx& ctx, const StepPlan& plan, std::span<const TokenId> tokens,
                      StepResult& result) {
  if (ctx.ith() == 0) {
    attn_seqs_.clear();
    for (const StepSeq& s : plan.seqs) {
      attn_seqs_.push_back(cpu::AttnSeq{s.block_table, s.num_cached, s.row_begin, s.num_rows, false});
    }
  }
  embed(ctx, plan, tokens);
  const int64_t rows = plan.num_rows();
  for (int layer = 0; layer < static_cast<int>(model_.hparams().num_layers); ++layer) {
    attention_block(ctx, layer, plan);
    ffn_block(ctx, layer, rows);
  }
  const int64_t embd = model_.hparams().embedding_length;
  write_hidden_outputs(ctx, plan, nullptr, embd, result,
                       [&](int64_t r) { return static_cast<const float*>(&x_[static_cast<size_t>(r * embd)]); });
}

}  // namespace met
