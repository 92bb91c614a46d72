// The operations of the grid forward pass (forward_program.h), each a
// functor applied to every index of a range: the host executor
// (host_exec.h) runs them in a loop, the CUDA executor (cuda_forward.cu)
// runs index i on thread i, except where a cooperative kernel takes the op
// (norms and argmax a block per row, the Q/K post-processing and attention
// a block per head: attention_kernels.h), which must give what the functor
// gives within float summation order. So the program is tested on any
// machine against the CPU backend and runs on the GPU.
// KV blocks are the CPU backend's spill images (backend/cpu/kv_cache.h's
// read_block): block b, layer l, K then V, kv head h, slot s at b *
// block_bytes + l * layer_stride + h * head_stride + s * row_bytes (+
// kv_stride for V), F32, F16 or Q8_0 rows (quantized to the CPU's bytes), so
// spill images move between backends. Over a Q8_0 cache the query is
// quantized too (hd_q8_0_round_trip), as the CPU's kernels quantize it.
// C++17 (CUDA sources include it). Threading: pure functions of their
// pointers. Tested by tests/model/grid_device_test.cc through the host
// executor, and on a GPU by the same suite through CudaDevice.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/cuda/dequant_hd.h"
#include "backend/cuda/rope_hd.h"
#include "backend/cuda/staged_step.h"
#include "backend/softmax_fold.h"

namespace met::cuda {

inline constexpr int32_t kMaxGridHeadDim = 256;

enum class HdKvType : int32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8 };

MET_HD inline uint16_t hd_to_fp16(float f) {
#if defined(__CUDACC__)
  return __half_as_ushort(__float2half_rn(f));
#else
  return f32_to_fp16(f);
#endif
}

// The nearest integer to v, half to even, after clamping to [lo, hi] as
// the CPU's quantizers do (tensor/reference/rounding.h: a NaN gives lo).
MET_HD inline float hd_round_code(float v, float lo, float hi) {
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
#if defined(__CUDA_ARCH__)
  return rintf(v);
#else
  return std::nearbyint(v);
#endif
}

// One Q8_0 block of x[0 .. 32) as the CPU reference quantizes it (the max
// magnitude / 127 as the fp16 scale, codes rounded half to even), given
// the block's max magnitude: the same bytes the CPU's KV cache stores.
MET_HD inline void hd_q8_0_scale(float amax, uint8_t* block) {
  const uint16_t h = hd_to_fp16(amax / 127.0f);
  block[0] = static_cast<uint8_t>(h & 0xFF);
  block[1] = static_cast<uint8_t>(h >> 8);
}
MET_HD inline int8_t hd_q8_0_code(float amax, float x) {
  const float d = amax / 127.0f;
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  return static_cast<int8_t>(hd_round_code(x * inverse, -127.0f, 127.0f));
}

// x[0 .. 32) through Q8_0 and back: the codes and fp16 scale the CPU
// reference quantizer gives, dequantized. Attention over a Q8_0 cache
// attends with its query so, as the CPU's kernels do (cpu/q8_keys.h) and as
// llama.cpp's do for quantized keys.
MET_HD inline void hd_q8_0_round_trip(float* x) {
  float amax = 0.0f;  // the CPU's max: a NaN is skipped
  for (int32_t j = 0; j < kHdQk; ++j) amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
  uint8_t scale[2];
  hd_q8_0_scale(amax, scale);
  const float d = hd_fp16(static_cast<uint16_t>(scale[0] | scale[1] << 8));
  for (int32_t j = 0; j < kHdQk; ++j) x[j] = d * static_cast<float>(hd_q8_0_code(amax, x[j]));
}

struct KvView {
  uint8_t* base = nullptr;
  int64_t block_bytes = 0;
  int64_t row_bytes = 0;    // one head's slot (Q8_0: head_dim / 32 blocks of 34 bytes)
  int64_t head_stride = 0;  // block_tokens * row_bytes
  int64_t kv_stride = 0;    // kv_heads * head_stride: K to V
  int64_t layer_stride = 0;
  int32_t block_tokens = 16;
  HdKvType type = HdKvType::kF16;

  MET_HD uint8_t* k_row(int32_t layer, int32_t block, int32_t head, int32_t slot) const {
    return base + block * block_bytes + layer * layer_stride + head * head_stride + slot * row_bytes;
  }
  MET_HD float load(const uint8_t* row, int32_t d) const {
    if (type == HdKvType::kF32) return f32_element(row, d);
    if (type == HdKvType::kQ8_0) return q8_0_element(row, d);
    return hd_fp16(hd_load_u16(row + 2 * d));
  }
  // x[0 .. n) into `row` (n a multiple of 32 for Q8_0).
  MET_HD void store_row(uint8_t* row, const float* x, int32_t n) const {
    if (type == HdKvType::kQ8_0) {
      for (int32_t b = 0; b < n / kHdQk; ++b) {
        const float* xb = x + b * kHdQk;
        float amax = 0.0f;  // the CPU's max: a NaN is skipped
        for (int32_t j = 0; j < kHdQk; ++j) amax = fabsf(xb[j]) > amax ? fabsf(xb[j]) : amax;
        uint8_t* block = row + b * kHdQ8_0Bytes;
        hd_q8_0_scale(amax, block);
        for (int32_t j = 0; j < kHdQk; ++j) block[2 + j] = static_cast<uint8_t>(hd_q8_0_code(amax, xb[j]));
      }
      return;
    }
    for (int32_t d = 0; d < n; ++d) {
      if (type == HdKvType::kF32) {
        std::memcpy(row + 4 * d, &x[d], 4);
        continue;
      }
      const uint16_t h = hd_to_fp16(x[d]);
      row[2 * d] = static_cast<uint8_t>(h & 0xFF);
      row[2 * d + 1] = static_cast<uint8_t>(h >> 8);
    }
  }
};

// The step's staged sections, where the program reads them.
struct StepView {
  const int32_t* tokens = nullptr;
  const int32_t* feeds = nullptr;
  const int32_t* positions = nullptr;
  const int32_t* row_seq = nullptr;
  const PackedSeq* seqs = nullptr;
  const PackedOutput* outputs = nullptr;
  const int32_t* banned = nullptr;
  const PackedPartition* partitions = nullptr;
  const int32_t* tables = nullptr;
};

// x[r, c] = the embedding of row r's token (given, or the previous step's
// argmax of output feeds[r]).
struct EmbedOp {
  HdWeightType type;
  const uint8_t* table;
  int64_t row_bytes;
  int64_t embd;
  StepView step;
  const int32_t* prev_argmax;
  float* x;
  MET_HD void operator()(int64_t i) const {
    const int64_t r = i / embd;
    const int32_t feed = step.feeds[r];
    const int32_t token = feed == kNoFeed ? step.tokens[r] : prev_argmax[feed];
    x[i] = weight_element(type, table + token * row_bytes, i % embd);
  }
};

// out = rms_norm(row) * w over `width`: sums of squares in double. `out`
// may be `row` (each element is read before it is written).
MET_HD inline void rms_norm_row(const float* row, const float* w, int64_t width, float eps, float* out) {
  double sum = 0.0;
  for (int64_t c = 0; c < width; ++c) sum += static_cast<double>(row[c]) * row[c];
  const auto mean = static_cast<float>(sum / static_cast<double>(width));
  const float scale = 1.0f / sqrtf(mean + eps);
  for (int64_t c = 0; c < width; ++c) out[c] = row[c] * scale * w[c];
}

// out[r] = rms_norm(x[src(r)]) * w over `width`, src(r) = r, or the row of
// output r when `outputs` is set.
struct RmsNormOp {
  const float* x;
  const float* w;
  int64_t width;
  float eps;
  const PackedOutput* outputs;
  float* out;
  MET_HD void operator()(int64_t r) const {
    const int64_t src = outputs == nullptr ? r : outputs[r].row;
    rms_norm_row(x + src * width, w, width, eps, out + r * width);
  }
};

// Everything between the Q/K/V products and attention, per head: index i
// is (row r, head h) over the heads of Q and then those of K. A head gets
// its bias (qwen2), its RMSNorm (qwen3), RoPE from the angle table; a K
// head (and its V row, biased too) is then stored into the row's slot of
// its seq's block (the CPU's layout).
struct QkPostOp {
  int32_t heads;
  int32_t kv_heads;
  int32_t head_dim;
  int32_t rope_dims;
  bool neox;
  float eps;
  const float* bq;  // null: no biases
  const float* bk;
  const float* bv;
  const float* q_norm;  // null: no q/k norms
  const float* k_norm;
  const float* rope_table;
  KvView kv;
  int32_t layer;
  StepView step;
  float* q;
  float* k;
  float* v;

  MET_HD void operator()(int64_t i) const {
    const int64_t r = i / (heads + kv_heads);
    const auto h = static_cast<int32_t>(i % (heads + kv_heads));
    const bool is_q = h < heads;
    const int32_t hh = is_q ? h : h - heads;
    float* x = is_q ? q + (r * heads + hh) * head_dim : k + (r * kv_heads + hh) * head_dim;
    float* vrow = v + (r * kv_heads + hh) * head_dim;
    if (bq != nullptr) {
      const float* b = (is_q ? bq : bk) + int64_t{hh} * head_dim;
      for (int32_t d = 0; d < head_dim; ++d) x[d] = x[d] + b[d];
      if (!is_q) {
        for (int32_t d = 0; d < head_dim; ++d) vrow[d] = vrow[d] + bv[int64_t{hh} * head_dim + d];
      }
    }
    if (q_norm != nullptr) rms_norm_row(x, is_q ? q_norm : k_norm, head_dim, eps, x);
    const int32_t pos = step.positions[r];
    for (int32_t pair = 0; pair < rope_dims / 2; ++pair) {
      rope_rotate_pair(x, pair, rope_dims, neox, rope_table + int64_t{pos} * rope_dims);
    }
    if (is_q) return;
    const PackedSeq& seq = step.seqs[step.row_seq[r]];
    const int32_t block = step.tables[seq.table_begin + pos / kv.block_tokens];
    uint8_t* krow = kv.k_row(layer, block, hh, pos % kv.block_tokens);
    kv.store_row(krow, x, head_dim);
    kv.store_row(krow + kv.kv_stride, vrow, head_dim);
  }
};

// The attention of query head h of row r: softmax(q . K^T * scale) V over
// the positions its row reads (its window's), partition by partition
// (kAttnPartitionTokens, aligned to absolute positions), each partition's
// partial (m, l, acc) folded into the total in order with softmax_fold.h.
// A seq of one row (a decode row) runs split (AttentionPartialOp, one
// partial per partition into its slot, then AttentionMergeOp folds them in
// order); longer seqs run whole (AttentionOp). Both compute each partial
// with AttnPartial::run and fold in the same order: the same bits.
struct AttnPartial {
  KvView kv;
  int32_t layer;
  int32_t group;  // query heads per kv head
  int32_t head_dim;
  float scale;

  MET_HD float score(const float* qh, int32_t block, int32_t kvh, int32_t slot) const {
    const uint8_t* krow = kv.k_row(layer, block, kvh, slot);
    float s = 0.0f;
    for (int32_t d = 0; d < head_dim; ++d) s = fmaf(qh[d], kv.load(krow, d), s);
    return s * scale;
  }

  // Positions [begin, end) of the seq whose blocks are `table`, for query
  // head h: m, l and acc[head_dim]. Each score is computed once and kept
  // (a partition is at most kAttnPartitionTokens long).
  // REQUIRES: end - begin <= kAttnPartitionTokens.
  MET_HD void run(const float* qh, const int32_t* table, int32_t h, int32_t begin, int32_t end, float& m, float& l,
                  float* acc) const {
    float quantized[kMaxGridHeadDim];
    if (kv.type == HdKvType::kQ8_0) {  // the query through Q8_0 (hd_q8_0_round_trip)
      for (int32_t d = 0; d < head_dim; ++d) quantized[d] = qh[d];
      for (int32_t b = 0; b < head_dim / kHdQk; ++b) hd_q8_0_round_trip(quantized + b * kHdQk);
      qh = quantized;
    }
    const int32_t kvh = h / group;
    float scores[kAttnPartitionTokens];
    m = -INFINITY;
    for (int32_t t = begin; t < end; ++t) {
      const float s = score(qh, table[t / kv.block_tokens], kvh, t % kv.block_tokens);
      scores[t - begin] = s;
      m = s > m ? s : m;
    }
    l = 0.0f;
    for (int32_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
    for (int32_t t = begin; t < end; ++t) {
      const int32_t block = table[t / kv.block_tokens];
      const float e = expf(scores[t - begin] - m);
      l += e;
      const uint8_t* vrow = kv.k_row(layer, block, kvh, t % kv.block_tokens) + kv.kv_stride;
      for (int32_t d = 0; d < head_dim; ++d) acc[d] = fmaf(e, kv.load(vrow, d), acc[d]);
    }
  }
};

// Folds `part` into the running total.
MET_HD inline void fold_record(float& total_m, float& total_l, float* total, float m, float l, const float* part,
                               int32_t head_dim) {
  const FoldWeights w = fold_weights(total_m, m);
  total_m = w.m;
  total_l = fold_term(total_l, l, w);
  for (int32_t d = 0; d < head_dim; ++d) total[d] = fold_term(total[d], part[d], w);
}

// The first position row r reads (its window's start).
MET_HD inline int32_t first_read(int32_t pos, int32_t window) {
  return window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
}

// Rows of seqs with more than one row: index i is (row, head).
struct AttentionOp {
  AttnPartial attn;
  int32_t heads;
  int32_t window;  // 0: the whole context
  StepView step;
  const float* q;
  float* out;

  MET_HD void operator()(int64_t i) const {
    const int64_t r = i / heads;
    const PackedSeq& seq = step.seqs[step.row_seq[r]];
    if (seq.num_rows == 1) return;  // split: AttentionMergeOp
    const auto h = static_cast<int32_t>(i % heads);
    const int32_t pos = step.positions[r];
    const int32_t first = first_read(pos, window);
    const int32_t hd = attn.head_dim;
    float total_m = -INFINITY, total_l = 0.0f, m = 0.0f, l = 0.0f;
    float total[kMaxGridHeadDim], part[kMaxGridHeadDim];
    for (int32_t d = 0; d < hd; ++d) total[d] = 0.0f;
    for (int32_t p = first / kAttnPartitionTokens; p <= pos / kAttnPartitionTokens; ++p) {
      const int32_t begin = p * kAttnPartitionTokens > first ? p * kAttnPartitionTokens : first;
      const int32_t end = (p + 1) * kAttnPartitionTokens < pos + 1 ? (p + 1) * kAttnPartitionTokens : pos + 1;
      attn.run(q + i * hd, step.tables + seq.table_begin, h, begin, end, m, l, part);
      fold_record(total_m, total_l, total, m, l, part, hd);
    }
    for (int32_t d = 0; d < hd; ++d) out[i * hd + d] = total[d] / total_l;
  }
};

// A record of the split path: m, l, then head_dim of acc.
MET_HD inline int64_t attn_record_floats(int32_t head_dim) { return 2 + int64_t{head_dim}; }

// Partitions of one-row seqs: index i is (partition p of the step's list,
// head); its partial goes to record p * heads + h of `records`.
struct AttentionPartialOp {
  AttnPartial attn;
  int32_t heads;
  StepView step;
  const PackedPartition* partitions;
  const float* q;
  float* records;

  MET_HD void operator()(int64_t i) const {
    const PackedPartition& part = partitions[i / heads];
    const PackedSeq& seq = step.seqs[part.seq];
    if (seq.num_rows != 1) return;  // whole: AttentionOp
    const auto h = static_cast<int32_t>(i % heads);
    float* rec = records + i * attn_record_floats(attn.head_dim);
    attn.run(q + (int64_t{seq.row_begin} * heads + h) * attn.head_dim, step.tables + seq.table_begin, h,
             part.token_begin, part.token_end, rec[0], rec[1], rec + 2);
  }
};

// Rows of one-row seqs: index i is (row, head); folds the row's partition
// records in order.
struct AttentionMergeOp {
  int32_t heads;
  int32_t head_dim;
  StepView step;
  const float* records;
  float* out;

  MET_HD void operator()(int64_t i) const {
    const int64_t r = i / heads;
    const PackedSeq& seq = step.seqs[step.row_seq[r]];
    if (seq.num_rows != 1) return;
    const auto h = static_cast<int32_t>(i % heads);
    const int64_t rf = attn_record_floats(head_dim);
    float total_m = -INFINITY, total_l = 0.0f;
    float total[kMaxGridHeadDim];
    for (int32_t d = 0; d < head_dim; ++d) total[d] = 0.0f;
    for (int32_t p = 0; p < seq.num_partitions; ++p) {
      const float* rec = records + (int64_t{seq.partition_begin + p} * heads + h) * rf;
      fold_record(total_m, total_l, total, rec[0], rec[1], rec + 2, head_dim);
    }
    for (int32_t d = 0; d < head_dim; ++d) out[i * head_dim + d] = total[d] / total_l;
  }
};

// The residual add and the next norm in one pass over row r: x += t, then
// out = rms_norm(x) * w (RmsNormOp's arithmetic on the sum).
struct AddNormOp {
  float* x;
  const float* t;
  const float* w;
  int64_t width;
  float eps;
  float* out;
  MET_HD void operator()(int64_t r) const {
    float* row = x + r * width;
    for (int64_t c = 0; c < width; ++c) row[c] = row[c] + t[r * width + c];
    rms_norm_row(row, w, width, eps, out + r * width);
  }
};

struct AddOp {
  float* x;
  const float* y;
  MET_HD void operator()(int64_t i) const { x[i] = x[i] + y[i]; }
};

// gate[i] = silu(gate[i]) * up[i], as cpu::ref::swiglu.
struct SwigluOp {
  float* gate;
  const float* up;
  MET_HD void operator()(int64_t i) const {
    const float g = gate[i];
    gate[i] = g / (1.0f + expf(-g)) * up[i];
  }
};

// Output o's banned ids read -inf, then its argmax: the first maximum, NaN
// skipped (cpu::argmax's rule).
struct BanArgmaxOp {
  float* logits;
  int64_t vocab;
  StepView step;
  int32_t* argmax;
  MET_HD void operator()(int64_t o) const {
    float* row = logits + o * vocab;
    const PackedOutput& out = step.outputs[o];
    for (int32_t k = 0; k < out.num_banned; ++k) row[step.banned[out.banned_begin + k]] = -INFINITY;
    int64_t best = -1;
    for (int64_t t = 0; t < vocab; ++t) {
      if (row[t] != row[t]) continue;  // NaN
      if (best < 0 || row[t] > row[best]) best = t;
    }
    argmax[o] = static_cast<int32_t>(best < 0 ? 0 : best);
  }
};

}  // namespace met::cuda
