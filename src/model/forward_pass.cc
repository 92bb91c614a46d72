// The llama-family forward step. Tested by tests/model/cpu_device_test.cc and dense_archs_test.cc.
#include "model/forward_pass.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/hidden_outputs.h"

namespace met {
ForwardPass::ForwardPass(const Model& model, cpu::KvCache& kv, cpu::RecurrentState* state, ForwardLimits limits,
                         int num_threads, ForwardOptions options)
    : model_(model), kv_(kv), state_(state), limits_(limits), rope_(model.rope_params()), rope_swa_(rope_) {
  const ModelHParams& hp = model.hparams();
  int32_t num_attention = 0, num_recurrent = 0, num_mamba = 0;
  for (const LayerWeights& l : model.weights().layers) {
    switch (l.kind) {
      case LayerKind::kAttention:
        // gemma4's shared-KV layers read their source's cache layer.
        kind_index_.push_back(l.kv_from ? kind_index_[*l.kv_from] : num_attention++);
        break;
      case LayerKind::kGatedDelta: kind_index_.push_back(num_recurrent++); break;
      case LayerKind::kMamba2:
        ++num_mamba;
        kind_index_.push_back(num_recurrent++);
        break;
      case LayerKind::kFfnOnly: kind_index_.push_back(0); break;
    }
  }
  mtp_ = options.mtp;
  if (mtp_) kind_index_.push_back(num_attention);  // the MTP block: the cache's last layer
  rope_swa_.freq_base = hp.rope_freq_base_swa;
  if (hp.swa_rope_unscaled) {  // gemma3, olmo2: the windowed layers' rope has no scaling
    rope_swa_.freq_scale = 1.0f;
    rope_swa_.ext_factor = 0.0f;
    rope_swa_.attn_factor = 1.0f;
  }
  if (model.traits().layer_shapes) {  // gemma4: each kind's own head size and rope dimensions
    rope_.head_dim = static_cast<int32_t>(hp.head_dim_full);
    rope_swa_.head_dim = static_cast<int32_t>(hp.head_dim_swa);
    rope_swa_.rope_dims = static_cast<int32_t>(hp.rope_dims_swa);
    rope_swa_.freq_factors = nullptr;  // rope_freqs is the global layers' proportional rope
  }
  const size_t rows = static_cast<size_t>(limits.max_rows);
  const auto& layers = model.weights().layers;
  const bool windowed = std::any_of(layers.begin(), layers.end(), [](const LayerWeights& l) { return l.window > 0; });
  if (!model.traits().layer_shapes) {
    rope_rows_[0].resize(rows * static_cast<size_t>(rope_.rope_dims));
    if (windowed) rope_rows_[1].resize(rows * static_cast<size_t>(rope_swa_.rope_dims));
  }
  attn_scale_ = hp.attention_scale != 0.0f ? hp.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  x_.resize(rows * hp.embedding_length);
  xn_.resize(rows * std::max(hp.embedding_length, hp.q_dim()));
  q_.resize(rows * hp.q_dim());
  k_.resize(rows * hp.kv_dim());
  v_.resize(rows * hp.kv_dim());
  attn_out_.resize(rows * hp.q_dim());
  tmp_.resize(rows * hp.embedding_length);
  gate_.resize(rows * hp.feed_forward_length);
  up_.resize(rows * hp.feed_forward_length);
  out_x_.resize(static_cast<size_t>(limits.max_outputs) * hp.embedding_length);
  const uint32_t mtp_width = mtp_ ? 2 * hp.embedding_length : 0;  // eh_proj's input
  const uint64_t widest = std::max({hp.embedding_length, hp.q_dim(), hp.feed_forward_length, hp.ssm_inner_size,
                                    mtp_width, hp.embedding_length_per_layer});
  if (model.traits().layer_shapes) {
    const size_t all = size_t{hp.embedding_length_per_layer} * hp.num_layers;
    qc_.resize(rows * hp.q_dim());
    kc_.resize(rows * hp.kv_dim());
    vc_.resize(rows * hp.kv_dim());
    per_layer_inputs_.resize(rows * all);
    per_layer_row_.resize(static_cast<size_t>(num_threads) * all);
    pe_.resize(rows * hp.embedding_length_per_layer);
    ones_.assign(hp.head_dim, 1.0f);
  }
  if (mtp_) {
    mtp_in_.resize(rows * mtp_width);
    mtp_logits_.resize(static_cast<size_t>(limits.max_outputs) * hp.vocab_size);
    row_output_.resize(rows);
    row_next_.resize(rows);
    chain_max_ = std::clamp(options.mtp_chain, 0, kMaxMtpChain);
    chain_seqs_ = scratch_blocks(options, limits) / 2;
    first_scratch_ = kv.layout().num_blocks - 2 * chain_seqs_;
    chain_.reserve(static_cast<size_t>(chain_seqs_));
    chain_plan_.inputs.reserve(static_cast<size_t>(chain_seqs_));
    chain_plan_.positions.reserve(static_cast<size_t>(chain_seqs_));
    chain_plan_.seqs.resize(static_cast<size_t>(chain_seqs_));
    chain_h_.resize(static_cast<size_t>(chain_seqs_) * hp.embedding_length);
    chain_tok_.resize(static_cast<size_t>(chain_seqs_));
  }
  if (model.traits().gated_attention) {
    qg_.resize(rows * 2 * hp.q_dim());
    attn_gate_.resize(rows * hp.q_dim());
  }
  if (num_recurrent > num_mamba) gdn_ = GatedDeltaLayer(hp, limits.max_rows, num_threads, options.chunked_delta_rule);
  if (num_mamba > 0) mamba_ = Mamba2Layer(hp, limits.max_rows, num_threads, options.chunked_ssm_scan);
  act_ = ActivationBuffers(static_cast<int64_t>(rows), static_cast<int64_t>(widest));
  lora_ = LoraStep(limits.max_rows, limits.max_outputs, options.max_lora_rank);
  if (hp.is_moe()) {
    moe_ = MoeFfn(hp, limits.max_rows);
    expert_load_ = ExpertLoad(static_cast<int32_t>(hp.num_layers), static_cast<int32_t>(hp.expert_count));
  }
  attn_seqs_.reserve(static_cast<size_t>(limits.max_seqs));
  attn_scratch_ = attention_scratch(hp, limits.max_rows, num_threads);
}

cpu::AttentionScratch attention_scratch(const ModelHParams& hp, int32_t max_rows, int num_threads) {
  cpu::AttentionLimits attn;
  attn.num_heads = static_cast<int32_t>(hp.num_heads);
  attn.num_kv_heads = static_cast<int32_t>(hp.num_kv_heads);
  attn.head_dim = static_cast<int32_t>(hp.head_dim);
  attn.max_rows = max_rows;
  attn.num_threads = num_threads;
  return cpu::AttentionScratch(attn);
}

void ForwardPass::prepare_result(const StepPlan& plan, StepResult& result) const {
  const size_t vocab = model_.hparams().vocab_size;
  result.vocab_size = static_cast<int32_t>(vocab);
  result.logits.resize(plan.outputs.size() * vocab);
  result.argmax.resize(plan.outputs.size());
  result.mtp_argmax.resize(mtp_ && plan.mtp_guesses ? plan.outputs.size() : 0);
  result.mtp_chain_width = chain_max_;
  result.mtp_chain.assign(plan.outputs.size() * static_cast<size_t>(chain_max_), kNoChainToken);
  size_hidden_result(plan, static_cast<int32_t>(model_.hparams().embedding_length), result);
}

int32_t ForwardPass::scratch_blocks(const ForwardOptions& options, const ForwardLimits& limits) {
  if (!options.mtp || options.mtp_chain <= 0) return 0;
  return 2 * std::min({options.mtp_chain_seqs, limits.max_seqs, limits.max_outputs, limits.max_rows});
}

int32_t ForwardPass::kv_layers(const Model& model, bool mtp) {
  int32_t n = mtp ? 1 : 0;
  for (const LayerWeights& l : model.weights().layers) n += l.kind == LayerKind::kAttention && !l.kv_from ? 1 : 0;
  return n;
}

LoraCall ForwardPass::lora_for(int layer) const {
  return layer < static_cast<int>(model_.hparams().num_layers) ? lora_.rows_call(layer) : LoraCall{};
}

const LayerWeights& ForwardPass::layer_weights(int layer) const {
  const auto num_layers = static_cast<int>(model_.hparams().num_layers);
  if (layer < num_layers) return model_.weights().layers[static_cast<size_t>(layer)];
  return model_.weights().mtp[static_cast<size_t>(layer - num_layers)].block;
}

void ForwardPass::embed(cpu::ThreadCtx& ctx, std::span<const TokenId> tokens, int64_t rows) {
  const cpu::WeightMatrix& table = model_.weights().token_embd;
  const int64_t embd = table.cols;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    cpu::embedding_row(table.type, table.data, embd, tokens[static_cast<size_t>(r)], &x_[r * embd]);
  }
  const float scale = model_.hparams().embedding_scale;  // granite's
  if (scale != 0.0f) {
    for (int64_t i = r0 * embd; i < r1 * embd; ++i) x_[static_cast<size_t>(i)] *= scale;
  }
  ctx.barrier();
}

void ForwardPass::attention_block(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const int64_t rows = plan.num_rows(), embd = hp.embedding_length;
  if (l.kind == LayerKind::kFfnOnly) return;
  // A recurrent layer's state version is filled before the norm's barrier.
  if (l.kind == LayerKind::kGatedDelta || l.kind == LayerKind::kMamba2) {
    // The layer copies its SSM state head by head as it reads it.
    sync_states(ctx, kind_index_[static_cast<size_t>(layer)], plan, state_->layout().conv_floats);
  }
  // An attention layer's norm feeds linear() alone; the recurrent layers'
  // runs read xn_ across rows.
  const LoraCall lora = lora_for(layer);
  input_norm(ctx, l.attn_norm, rows, l.kind != LayerKind::kAttention || !input_feeds_own_rows(lora));
  const int32_t index = kind_index_[static_cast<size_t>(layer)];
  if (l.kind == LayerKind::kGatedDelta) {
    gdn_.run(ctx, l, index, plan, xn_.data(), *state_, act_, tmp_.data());
    add_residual(ctx, rows);
    return;
  }
  if (l.kind == LayerKind::kMamba2) {
    mamba_.run(ctx, l, index, plan, xn_.data(), *state_, act_, tmp_.data());
    add_residual(ctx, rows);
    return;
  }
  const Product qkv[] = {{&l.wq, qg_.empty() ? q_.data() : qg_.data(), LoraTarget::kQ},
                         {&l.wk, k_.data(), LoraTarget::kK},
                         {&l.wv, v_.data(), LoraTarget::kV}};
  linear(ctx, xn_.data(), rows, embd, qkv, act_, lora);
  qkv_post(ctx, layer, plan, true);
  const cpu::AttnLayerOptions opts{
      .window = static_cast<int32_t>(l.window), .sinks = l.sinks, .softcap = hp.attn_logit_softcap};
  // Returns after a barrier, every row of attn_out_ written.
  cpu::paged_attention(ctx, kv_, kind_index_[static_cast<size_t>(layer)], attn_seqs_, q_.data(), hp.q_dim(),
                       static_cast<int32_t>(hp.num_heads), attn_scale_, attn_out_.data(), hp.q_dim(),
                       attn_scratch_, opts);
  if (!qg_.empty()) apply_attn_gate(ctx, rows);
  const Product o[] = {{&l.wo, tmp_.data(), LoraTarget::kO}};
  linear(ctx, attn_out_.data(), rows, hp.q_dim(), o, act_, lora);
  if (l.bo != nullptr) {
    const auto [r0, r1] = ctx.split(rows);
    for (int64_t r = r0; r < r1; ++r) cpu::add(&tmp_[r * embd], l.bo, embd, &tmp_[r * embd]);
  }
  add_residual(ctx, rows, l.attn_post_norm);
}

void ForwardPass::input_norm(cpu::ThreadCtx& ctx, const float* norm, int64_t rows, bool barrier) {
  const ModelHParams& hp = model_.hparams();
  const int64_t embd = hp.embedding_length;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    if (norm == nullptr) {  // olmo2: no pre-norm
      std::copy(&x_[r * embd], &x_[(r + 1) * embd], &xn_[r * embd]);
    } else {
      cpu::rms_norm(&x_[r * embd], norm, embd, hp.rms_norm_eps, &xn_[r * embd]);
    }
  }
  if (barrier) ctx.barrier();
}

void ForwardPass::apply_attn_gate(cpu::ThreadCtx& ctx, int64_t rows) {
  const int64_t q_dim = model_.hparams().q_dim();
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t i = r0 * q_dim; i < r1 * q_dim; ++i) {
    attn_out_[static_cast<size_t>(i)] *= 1.0f / (1.0f + std::exp(-attn_gate_[static_cast<size_t>(i)]));
  }
  ctx.barrier();
}

Status ForwardPass::prepare_states(const StepPlan& plan) {
  if (state_ == nullptr) return ok_status();
  for (const StateCopy& c : plan.state_restores) state_->copy(c.from, c.to);
  for (const StepSeq& s : plan.seqs) {
    // Checked for every seq first, so a refused step leaves no slot begun.
    if (!state_->holds(*s.state_slot, s.num_cached)) {
      return state_->begin_step(*s.state_slot, s.num_cached, s.num_cached + s.num_rows);  // names what it holds
    }
  }
  for (const StepSeq& s : plan.seqs) {
    MET_RETURN_IF_ERROR(
        state_->begin_step(*s.state_slot, s.num_cached, s.num_cached + s.num_rows, s.state_checkpoints));
  }
  return ok_status();
}

Status ForwardPass::materialize_state(StateSlotId slot, int64_t position) {
  MET_CHECK(state_ != nullptr, "materialize_state: the model keeps no recurrent state");
  MET_RETURN_IF_ERROR(state_->begin_step(slot, position, position));
  for (const LayerWeights& l : model_.weights().layers) {
    if (l.kind != LayerKind::kGatedDelta && l.kind != LayerKind::kMamba2) continue;
    const int32_t rlayer = kind_index_[static_cast<size_t>(&l - model_.weights().layers.data())];
    if (state_->needs_sync(slot)) state_->sync_layer(slot, rlayer, 0, state_->layout().conv_floats);
    if (l.kind == LayerKind::kGatedDelta) {
      gdn_.replay(l, rlayer, slot, *state_);
    } else {
      mamba_.replay(l, rlayer, slot, *state_);
    }
  }
  return ok_status();
}

void ForwardPass::sync_states(cpu::ThreadCtx& ctx, int32_t rlayer, const StepPlan& plan, int64_t floats) {
  const auto [f0, f1] = ctx.split(floats);
  for (const StepSeq& s : plan.seqs) {
    if (f0 < f1 && state_->needs_sync(*s.state_slot)) state_->sync_layer(*s.state_slot, rlayer, f0, f1);
  }
}

void ForwardPass::take_snapshots(cpu::ThreadCtx& ctx, const StepPlan& plan) {
  if (state_ == nullptr || ctx.ith() != 0) return;
  for (const StateCopy& c : plan.state_snapshots) state_->copy(c.from, c.to);
}

void ForwardPass::add_residual(cpu::ThreadCtx& ctx, int64_t rows, const float* post_norm) {
  const ModelHParams& hp = model_.hparams();
  const int64_t embd = hp.embedding_length;
  const auto [r0, r1] = ctx.split(rows);
  if (post_norm != nullptr) {  // gemma3, olmo2: the block's output is normalised first
    for (int64_t r = r0; r < r1; ++r) {
      cpu::rms_norm(&tmp_[r * embd], post_norm, embd, hp.rms_norm_eps, &tmp_[r * embd]);
    }
  }
  const float scale = hp.residual_scale;  // granite's
  if (scale != 0.0f) {
    for (int64_t i = r0 * embd; i < r1 * embd; ++i) tmp_[static_cast<size_t>(i)] *= scale;
  }
  if (r0 < r1) cpu::add(&x_[r0 * embd], &tmp_[r0 * embd], (r1 - r0) * embd, &x_[r0 * embd]);
  ctx.barrier();
}

void ForwardPass::ffn_block(cpu::ThreadCtx& ctx, int layer, int64_t rows) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const int64_t embd = hp.embedding_length, ff = hp.layer_ffn_length(static_cast<uint32_t>(layer));
  if (!l.has_ffn) return;  // nemotron_h's mixer layers
  // The norm and the dense FFNs' activation each feed linear() or MoeFfn,
  // which read each thread's own rows first.
  const LoraCall lora = lora_for(layer);
  const bool own_rows = input_feeds_own_rows(lora);
  input_norm(ctx, l.ffn_norm, rows, !own_rows);
  if (model_.traits().ffn_relu2) {
    relu2_ffn(ctx, layer, rows);
    return;
  }
  if (model_.traits().moe) {
    moe_.run(ctx, l.moe, xn_.data(), rows, tmp_.data());
    if (ctx.ith() == 0 && layer < static_cast<int>(hp.num_layers)) expert_load_.add(layer, moe_.group_offsets());
    add_residual(ctx, rows);
    return;
  }
  const Product gate_up[] = {{&l.w_gate, gate_.data(), LoraTarget::kGate}, {&l.w_up, up_.data(), LoraTarget::kUp}};
  linear(ctx, xn_.data(), rows, embd, gate_up, act_, lora);
  {
    const auto [r0, r1] = ctx.split(rows);
    if (r0 < r1 && model_.traits().ffn_geglu) {
      cpu::geglu(&gate_[r0 * ff], &up_[r0 * ff], (r1 - r0) * ff, &gate_[r0 * ff]);
    } else if (r0 < r1) {
      cpu::swiglu(&gate_[r0 * ff], &up_[r0 * ff], (r1 - r0) * ff, &gate_[r0 * ff]);
    }
    if (!own_rows) ctx.barrier();
  }
  const Product down[] = {{&l.w_down, tmp_.data(), LoraTarget::kDown}};
  linear(ctx, gate_.data(), rows, ff, down, act_, lora);
  add_residual(ctx, rows, l.ffn_post_norm);
}

// nemotron_h: down · relu(up · xn)², no gate.
void ForwardPass::relu2_ffn(cpu::ThreadCtx& ctx, int layer, int64_t rows) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const int64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  const Product up[] = {{&l.w_up, up_.data(), LoraTarget::kUp}};
  linear(ctx, xn_.data(), rows, embd, up, act_, lora_for(layer));
  {
    const auto [r0, r1] = ctx.split(rows);
    for (int64_t i = r0 * ff; i < r1 * ff; ++i) {
      const float u = std::max(up_[static_cast<size_t>(i)], 0.0f);
      up_[static_cast<size_t>(i)] = u * u;
    }
    ctx.barrier();
  }
  const Product down[] = {{&l.w_down, tmp_.data(), LoraTarget::kDown}};
  linear(ctx, up_.data(), rows, ff, down, act_, lora_for(layer));
  add_residual(ctx, rows);
}

void ForwardPass::output(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result) {
  const ModelHParams& hp = model_.hparams();
  const int64_t embd = hp.embedding_length, vocab = hp.vocab_size;
  const int64_t num_out = static_cast<int64_t>(plan.outputs.size());
  {
    const auto [o0, o1] = ctx.split(num_out);
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t r = plan.outputs[static_cast<size_t>(o)].row;
      cpu::rms_norm(&x_[r * embd], model_.weights().output_norm, embd, hp.rms_norm_eps, &out_x_[o * embd]);
    }
    ctx.barrier();
  }
  const Product logits[] = {{&model_.weights().output, result.logits.data(), LoraTarget::kOutput}};
  linear(ctx, out_x_.data(), num_out, embd, logits, act_, lora_.outputs_call());
  const auto [o0, o1] = ctx.split(num_out);
  const float logit_scale = hp.logit_scale;  // granite's: the logits are divided by it
  const float cap = hp.final_logit_softcap;  // gemma's: cap * tanh(logit / cap)
  for (int64_t o = o0; o < o1; ++o) {
    const OutputRow& out = plan.outputs[static_cast<size_t>(o)];
    float* row = &result.logits[static_cast<size_t>(o * vocab)];
    if (logit_scale != 0.0f) {
      for (int64_t i = 0; i < vocab; ++i) row[i] *= 1.0f / logit_scale;
    }
    if (cap != 0.0f) {
      for (int64_t i = 0; i < vocab; ++i) row[i] = cap * std::tanh(row[i] / cap);
    }
    for (int32_t k = 0; k < out.num_banned; ++k) {
      const TokenId t = plan.banned[static_cast<size_t>(out.banned_begin + k)];
      result.logits[static_cast<size_t>(o * vocab + t)] = -std::numeric_limits<float>::infinity();
    }
    result.argmax[static_cast<size_t>(o)] =
        static_cast<TokenId>(cpu::argmax(&result.logits[static_cast<size_t>(o * vocab)], vocab));
  }
  if (result.hidden.empty()) return;
  // Hidden outputs: the rows the head read (out_x_), or for a sum every row
  // of the seq normalised the same way (into tmp_, which no op needs now).
  const float* norm = model_.weights().output_norm;
  const float eps = hp.rms_norm_eps;
  write_hidden_outputs(ctx, plan, out_x_.data(), embd, result, [&](int64_t r) {
    float* to = &tmp_[static_cast<size_t>(r * embd)];
    cpu::rms_norm(&x_[static_cast<size_t>(r * embd)], norm, embd, eps, to);
    return to;
  });
}

void ForwardPass::run(cpu::ThreadCtx& ctx, const StepPlan& plan, std::span<const TokenId> tokens,
                      StepResult& result) {
  const int64_t rows = plan.num_rows();
  if (ctx.ith() == 0) {
    rope_plan_ = &plan;
    attn_seqs_.clear();
    for (const StepSeq& s : plan.seqs) {
      attn_seqs_.push_back(cpu::AttnSeq{s.block_table, s.num_cached, s.row_begin, s.num_rows, true});
    }
    if (mtp_) index_mtp_rows(plan, tokens);
  }
  fill_rope_rows(ctx, plan);  // read after embed's barrier
  embed(ctx, tokens, rows);
  const bool gemma4 = model_.traits().layer_shapes;
  if (gemma4) per_layer_inputs(ctx, tokens, rows);
  const int num_layers = static_cast<int>(model_.hparams().num_layers);
  for (int layer = 0; layer < num_layers; ++layer) {
    if (gemma4) {
      wide_attention_block(ctx, layer, plan);
    } else {
      attention_block(ctx, layer, plan);
    }
    ffn_block(ctx, layer, rows);
    if (gemma4) per_layer_block(ctx, layer, rows);
  }
  take_snapshots(ctx, plan);  // the last layer ended with a barrier; no later op touches a state
  output(ctx, plan, result);
  if (mtp_) run_mtp(ctx, plan, result);
  if (chain_max_ > 0) run_mtp_chain(ctx, plan, result);
}

}  // namespace met
