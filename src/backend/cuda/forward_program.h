// The grid forward pass: a llama-family decoder step (token embedding;
// per layer RMSNorm, Q/K/V (with qwen2's biases, qwen3's per-head q/k
// norms), RoPE, KV store into paged blocks, attention,
// output projection and residual; RMSNorm, SwiGLU FFN and residual; the
// output rows' norm, the head, bans and argmax) as a sequence of
// forward_ops.h ops and matrix products on an executor. An executor has
//   template <class Op> void for_each(int64_t n, const Op& op);  // op(i) for i < n
//   void matmul(const MatrixRef& w, const float* x, int64_t rows, float* y);
// y[r * w.rows + j] = dot(row j of w, x[r * w.cols ..]).
// host_exec.h runs it on the host (tests), cuda_forward.cu on a GPU.
// Every pointer in the structs below is the executor's memory.
// C++17 (CUDA sources include it). Threading: one caller per executor.
// Tested by tests/model/grid_device_test.cc.
#pragma once

#include <cstdint>

#include "backend/cuda/forward_ops.h"

namespace met::cuda {

struct MatrixRef {
  HdWeightType type = HdWeightType::kF32;
  const uint8_t* data = nullptr;
  int64_t rows = 0;  // outputs
  int64_t cols = 0;  // inputs
  int64_t row_bytes = 0;
};

struct GridLayer {
  const float* attn_norm = nullptr;
  MatrixRef wq, wk, wv, wo;
  const float* bq = nullptr;  // qwen2: q/k/v biases (or null)
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // qwen3: RMSNorm over each head of Q and K (or null)
  const float* k_norm = nullptr;
  const float* ffn_norm = nullptr;
  MatrixRef gate, up, down;
};

struct GridModel {
  int32_t num_layers = 0;
  int32_t embd = 0;
  int32_t heads = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t ff = 0;
  int32_t vocab = 0;
  int32_t rope_dims = 0;
  bool neox = false;
  float eps = 1e-5f;
  float attn_scale = 1.0f;
  HdWeightType embd_type = HdWeightType::kF32;
  const uint8_t* embd_table = nullptr;
  int64_t embd_row_bytes = 0;
  const float* rope_table = nullptr;
  const GridLayer* layers = nullptr;  // host memory: num_layers of them
  const float* output_norm = nullptr;
  MatrixRef output;
  KvView kv;
};

// Activations, sized for the device's max_rows (max_outputs for out_x,
// logits and argmax).
struct GridScratch {
  float* x = nullptr;
  float* xn = nullptr;
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* attn = nullptr;
  float* tmp = nullptr;
  float* gate = nullptr;
  float* up = nullptr;
  float* out_x = nullptr;
  float* logits = nullptr;
  float* records = nullptr;  // split attention: a record per (partition, head)
  int32_t* argmax = nullptr;            // this step's
  const int32_t* prev_argmax = nullptr;  // the step launched before (FeedFromRow)
};

// A step's counts, as its staged header gives them.
struct StepCounts {
  int64_t rows = 0;
  int64_t outputs = 0;
  int64_t partitions = 0;  // attention partitions
  int64_t seqs = 0;
};

// One layer, from s.xn (its input norm, made by the step before) to the
// residual stream s.x, and the next layer's input norm in s.xn: each
// residual add is fused with the norm that follows it.
template <class Exec>
void run_layer(Exec& ex, const GridModel& m, const GridScratch& s, const StepView& step, int32_t layer,
               const StepCounts& n) {
  const GridLayer& l = m.layers[layer];
  const int64_t rows = n.rows;
  ex.matmul(l.wq, s.xn, rows, s.q);
  ex.matmul(l.wk, s.xn, rows, s.k);
  ex.matmul(l.wv, s.xn, rows, s.v);
  ex.for_each(rows * (m.heads + m.kv_heads),
              QkPostOp{m.heads, m.kv_heads, m.head_dim, m.rope_dims, m.neox, m.eps, l.bq, l.bk, l.bv, l.q_norm,
                       l.k_norm, m.rope_table, m.kv, layer, step, s.q, s.k, s.v});
  const AttnPartial attn{m.kv, layer, m.heads / m.kv_heads, m.head_dim, m.attn_scale};
  // Whole rows only where a seq has several (a decode step has none).
  ex.for_each(n.seqs < rows ? rows * m.heads : 0, AttentionOp{attn, m.heads, 0, step, s.q, s.attn});
  ex.for_each(n.partitions * m.heads, AttentionPartialOp{attn, m.heads, step, step.partitions, s.q, s.records});
  ex.for_each(rows * m.heads, AttentionMergeOp{m.heads, m.head_dim, step, s.records, s.attn});
  ex.matmul(l.wo, s.attn, rows, s.tmp);
  ex.for_each(rows, AddNormOp{s.x, s.tmp, l.ffn_norm, m.embd, m.eps, s.xn});
  ex.matmul(l.gate, s.xn, rows, s.gate);
  ex.matmul(l.up, s.xn, rows, s.up);
  ex.for_each(rows * m.ff, SwigluOp{s.gate, s.up});
  ex.matmul(l.down, s.gate, rows, s.tmp);
  if (layer + 1 < m.num_layers) {
    ex.for_each(rows, AddNormOp{s.x, s.tmp, m.layers[layer + 1].attn_norm, m.embd, m.eps, s.xn});
  } else {
    ex.for_each(rows * m.embd, AddOp{s.x, s.tmp});  // the output norm reads only the output rows
  }
}

// One step.
template <class Exec>
void run_forward(Exec& ex, const GridModel& m, const GridScratch& s, const StepView& step, const StepCounts& n) {
  const int64_t rows = n.rows, outputs = n.outputs;
  ex.for_each(rows * m.embd, EmbedOp{m.embd_type, m.embd_table, m.embd_row_bytes, m.embd, step, s.prev_argmax, s.x});
  ex.for_each(rows, RmsNormOp{s.x, m.layers[0].attn_norm, m.embd, m.eps, nullptr, s.xn});
  for (int32_t layer = 0; layer < m.num_layers; ++layer) run_layer(ex, m, s, step, layer, n);
  if (outputs == 0) return;
  ex.for_each(outputs, RmsNormOp{s.x, m.output_norm, m.embd, m.eps, step.outputs, s.out_x});
  ex.matmul(m.output, s.out_x, outputs, s.logits);
  ex.for_each(outputs, BanArgmaxOp{s.logits, m.vocab, step, s.argmax});
}

}  // namespace met::cuda
