// ForwardPass's per-row attention inputs (forward_pass.h): the rows' q, k
// and v biases, q/k norms and rope (by the step's rope tables, filled once
// before the layers), and k and v stored into the KV cache; split by (row,
// q | k and v) units across the threads. Tested by
// tests/model/cpu_device_test.cc and dense_archs_test.cc (logits against the
// double-precision reference forward) and the other architectures' tests.
#include <vector>

#include "backend/cpu/kernels/ops.h"
#include "model/forward_pass.h"
#include "model/linear.h"

namespace met {

void ForwardPass::qkv_post(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan, bool with_q) {
  // Unit u: row u / parts, its q (part 0 of 2) or its k and v (the last).
  const int64_t parts = with_q ? 2 : 1;
  const auto [u0, u1] = ctx.split(plan.num_rows() * parts);
  for (int64_t u = u0; u < u1; ++u) {
    if (u % parts == parts - 1) {
      kv_post(layer, plan, u / parts);
    } else {
      q_post(layer, plan, u / parts);
    }
  }
  ctx.barrier();
}

void ForwardPass::q_post(int layer, const StepPlan& plan, int64_t row) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const int64_t q_dim = hp.q_dim(), head_dim = hp.head_dim;
  if (!qg_.empty()) split_q_gate(row, row + 1);
  float* q = &q_[row * q_dim];
  if (l.bq != nullptr) cpu::add(q, l.bq, q_dim, q);
  if (l.q_norm != nullptr && model_.traits().qk_norm_full) {
    cpu::rms_norm(q, l.q_norm, q_dim, hp.rms_norm_eps, q);
  } else if (l.q_norm != nullptr) {
    for (uint32_t h = 0; h < hp.num_heads; ++h) {
      cpu::rms_norm(q + h * head_dim, l.q_norm, head_dim, hp.rms_norm_eps, q + h * head_dim);
    }
  }
  if (!hp.layer_uses_rope(static_cast<uint32_t>(layer))) return;
  rope_row(q, static_cast<int32_t>(hp.num_heads), layer, plan, row);
}

void ForwardPass::kv_post(int layer, const StepPlan& plan, int64_t row) {
  const ModelHParams& hp = model_.hparams();
  const LayerWeights& l = layer_weights(layer);
  const int64_t kv_dim = hp.kv_dim(), head_dim = hp.head_dim;
  float* k = &k_[row * kv_dim];
  float* v = &v_[row * kv_dim];
  if (l.bq != nullptr) {
    cpu::add(k, l.bk, kv_dim, k);
    cpu::add(v, l.bv, kv_dim, v);
  }
  if (l.q_norm != nullptr && model_.traits().qk_norm_full) {
    cpu::rms_norm(k, l.k_norm, kv_dim, hp.rms_norm_eps, k);
  } else if (l.q_norm != nullptr) {
    for (uint32_t h = 0; h < hp.num_kv_heads; ++h) {
      cpu::rms_norm(k + h * head_dim, l.k_norm, head_dim, hp.rms_norm_eps, k + h * head_dim);
    }
  }
  if (hp.layer_uses_rope(static_cast<uint32_t>(layer))) {
    rope_row(k, static_cast<int32_t>(hp.num_kv_heads), layer, plan, row);
  }
  // Stored into its own sequence's slot.
  for (const StepSeq& s : plan.seqs) {
    if (row < s.row_begin || row >= s.row_begin + s.num_rows) continue;
    kv_.store(kind_index_[static_cast<size_t>(layer)], s.block_table,
              s.num_cached + static_cast<int32_t>(row - s.row_begin), k, v);
    return;
  }
}

void ForwardPass::fill_rope_rows(cpu::ThreadCtx& ctx, const StepPlan& plan) {
  const auto [r0, r1] = ctx.split(plan.num_rows());
  for (int t = 0; t < 2; ++t) {
    const cpu::RopeParams& rope = t == 0 ? rope_ : rope_swa_;
    std::vector<float>& table = rope_rows_[t];
    if (table.empty()) continue;  // no rotation, or gemma4's own path
    for (int64_t r = r0; r < r1; ++r) {
      cpu::rope_table(plan.positions[static_cast<size_t>(r)], rope, &table[static_cast<size_t>(r * rope.rope_dims)]);
    }
  }
}

void ForwardPass::rope_row(float* x, int32_t heads, int layer, const StepPlan& plan, int64_t row) const {
  const bool windowed = layer_weights(layer).window > 0;
  const cpu::RopeParams& rope = windowed ? rope_swa_ : rope_;
  const std::vector<float>& table = rope_rows_[windowed ? 1 : 0];
  if (&plan != rope_plan_ || table.empty()) {  // the MTP chain's plan: its own positions
    cpu::rope(x, heads, plan.positions[static_cast<size_t>(row)], rope);
    return;
  }
  cpu::rope_from(x, heads, rope, &table[static_cast<size_t>(row * rope.rope_dims)]);
}

void ForwardPass::store_kv_only(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan) {
  const LayerWeights& l = layer_weights(layer);
  MET_CHECK(l.kind == LayerKind::kAttention, "store_kv_only: layer {} is not an attention layer", layer);
  const LoraCall lora = lora_for(layer);
  const int64_t rows = plan.num_rows();
  input_norm(ctx, l.attn_norm, rows, !input_feeds_own_rows(lora));
  const Product kv[] = {{&l.wk, k_.data(), LoraTarget::kK}, {&l.wv, v_.data(), LoraTarget::kV}};
  linear(ctx, xn_.data(), rows, model_.hparams().embedding_length, kv, act_, lora);
  qkv_post(ctx, layer, plan, false);
}

void ForwardPass::split_q_gate(int64_t r0, int64_t r1) {
  const ModelHParams& hp = model_.hparams();
  const int64_t q_dim = hp.q_dim(), head_dim = hp.head_dim;
  for (int64_t r = r0; r < r1; ++r) {
    for (uint32_t h = 0; h < hp.num_heads; ++h) {
      const float* from = &qg_[static_cast<size_t>(r * 2 * q_dim + 2 * h * head_dim)];
      std::copy(from, from + head_dim, &q_[static_cast<size_t>(r * q_dim + h * head_dim)]);
      std::copy(from + head_dim, from + 2 * head_dim, &attn_gate_[static_cast<size_t>(r * q_dim + h * head_dim)]);
    }
  }
}

}  // namespace met
