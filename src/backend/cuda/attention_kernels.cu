// Attention kernels (see attention_kernels.h).
#include "backend/cuda/attention_kernels.h"

#include <cuda_fp16.h>

#include "backend/cuda/block_reduce.h"

namespace met::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarp;
constexpr int kDimsPerThread = kMaxGridHeadDim / kThreads;
static_assert(kMaxGridHeadDim % kThreads == 0, "a thread takes whole dims");

__device__ float kv_element(const KvView& kv, const uint8_t* row, int32_t d) {
  if (kv.type == HdKvType::kF32) return reinterpret_cast<const float*>(row)[d];
  if (kv.type == HdKvType::kQ8_0) {
    const uint8_t* block = row + (d / kHdQk) * kHdQ8_0Bytes;
    return static_cast<float>(static_cast<int8_t>(block[2 + d % kHdQk])) *
           __half2float(*reinterpret_cast<const __half*>(block));
  }
  return __half2float(reinterpret_cast<const __half*>(row)[d]);
}

// The block's scratch: the head's query, a partition's scores (then their
// exponentials).
struct Scratch {
  float q[kMaxGridHeadDim];
  float scores[kAttnPartitionTokens];
};

struct Partial {
  float m;
  float l;
  float acc[kDimsPerThread];  // dims tid, tid + kThreads, ...
};

// Positions [begin, end) of the seq whose blocks are `table`, for query
// head h (its query in s.q): m, l and this thread's dims of acc.
__device__ Partial partial_block(const AttnPartial& a, Scratch& s, const int32_t* table, int32_t h, int32_t begin,
                                 int32_t end) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid % kWarp, warp = tid / kWarp;
  const int32_t kvh = h / a.group, n = end - begin, hd = a.head_dim;
  for (int32_t t = warp; t < n; t += kWarps) {
    const int32_t pos = begin + t;
    const uint8_t* krow = a.kv.k_row(a.layer, table[pos / a.kv.block_tokens], kvh, pos % a.kv.block_tokens);
    float dot = 0.0f;
    for (int32_t d = lane; d < hd; d += kWarp) dot = fmaf(s.q[d], kv_element(a.kv, krow, d), dot);
    for (int offset = kWarp / 2; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xFFFFFFFFu, dot, offset);
    if (lane == 0) s.scores[t] = dot * a.scale;
  }
  __syncthreads();
  float m = -INFINITY;
  for (int32_t t = tid; t < n; t += kThreads) m = fmaxf(m, s.scores[t]);
  m = block_reduce<kThreads>(m, [](float x, float y) { return fmaxf(x, y); });
  float l = 0.0f;
  for (int32_t t = tid; t < n; t += kThreads) {
    const float e = expf(s.scores[t] - m);
    s.scores[t] = e;
    l += e;
  }
  l = block_reduce<kThreads>(l, [](float x, float y) { return x + y; });  // its barriers publish the exponentials
  Partial p{m, l, {}};
  for (int k = 0; k < kDimsPerThread; ++k) {
    const int32_t d = tid + k * kThreads;
    if (d >= hd) break;
    float acc = 0.0f;
    for (int32_t t = 0; t < n; ++t) {
      const int32_t pos = begin + t;
      const uint8_t* vrow =
          a.kv.k_row(a.layer, table[pos / a.kv.block_tokens], kvh, pos % a.kv.block_tokens) + a.kv.kv_stride;
      acc = fmaf(s.scores[t], kv_element(a.kv, vrow, d), acc);
    }
    p.acc[k] = acc;
  }
  __syncthreads();  // the scores are read before the next partition writes them
  return p;
}

// The head's query into s.q; over a Q8_0 cache through Q8_0 and back, a
// thread per block of 32 (hd_q8_0_round_trip, as the host's AttnPartial).
__device__ void load_query(Scratch& s, const float* qh, int32_t hd, HdKvType kv_type) {
  for (int32_t d = static_cast<int32_t>(threadIdx.x); d < hd; d += kThreads) s.q[d] = qh[d];
  __syncthreads();
  if (kv_type != HdKvType::kQ8_0) return;
  for (int32_t b = static_cast<int32_t>(threadIdx.x); b < hd / kHdQk; b += kThreads) {
    hd_q8_0_round_trip(s.q + b * kHdQk);
  }
  __syncthreads();
}

// Element d of a head row into `row`, by the thread of dim d: for Q8_0 the
// warp holding d's block of 32 (a block's dims are one warp's lanes, as
// kThreads and head_dim are multiples of 32) finds its max magnitude and
// quantizes as the CPU does (forward_ops.h's hd_q8_0_*).
__device__ void kv_store(const KvView& kv, uint8_t* row, int32_t d, float value) {
  if (kv.type == HdKvType::kF32) {
    reinterpret_cast<float*>(row)[d] = value;
  } else if (kv.type == HdKvType::kQ8_0) {
    float amax = fabsf(value) > 0.0f ? fabsf(value) : 0.0f;  // NaN counts as 0, as the CPU's max skips it
    for (int offset = kWarp / 2; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    uint8_t* block = row + (d / kHdQk) * kHdQ8_0Bytes;
    if (d % kHdQk == 0) hd_q8_0_scale(amax, block);
    block[2 + d % kHdQk] = static_cast<uint8_t>(hd_q8_0_code(amax, value));
  } else {
    reinterpret_cast<__half*>(row)[d] = __float2half_rn(value);
  }
}

// QkPostOp, a block per index (row, head of Q then of K), a thread per dim:
// the bias, the head's RMSNorm (a block sum in double), RoPE a thread per
// pair, then a K head and its V row into the row's KV slot.
__global__ void __launch_bounds__(kThreads) qk_post_kernel(QkPostOp op) {
  __shared__ float x[kMaxGridHeadDim];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t i = blockIdx.x;
  const int64_t r = i / (op.heads + op.kv_heads);
  const auto h = static_cast<int32_t>(i % (op.heads + op.kv_heads));
  const bool is_q = h < op.heads;
  const int32_t hh = is_q ? h : h - op.heads, hd = op.head_dim;
  float* head = is_q ? op.q + (r * op.heads + hh) * hd : op.k + (r * op.kv_heads + hh) * hd;
  float* vrow = op.v + (r * op.kv_heads + hh) * hd;
  const float* bias = op.bq == nullptr ? nullptr : (is_q ? op.bq : op.bk) + int64_t{hh} * hd;
  for (int32_t d = tid; d < hd; d += kThreads) {
    x[d] = bias == nullptr ? head[d] : head[d] + bias[d];
    if (!is_q && bias != nullptr) vrow[d] = vrow[d] + op.bv[int64_t{hh} * hd + d];
  }
  __syncthreads();
  if (op.q_norm != nullptr) {
    double sum = 0.0;
    for (int32_t d = tid; d < hd; d += kThreads) sum += static_cast<double>(x[d]) * x[d];
    sum = block_reduce<kThreads>(sum, [](double a, double b) { return a + b; });
    const auto mean = static_cast<float>(sum / static_cast<double>(hd));
    const float scale = 1.0f / sqrtf(mean + op.eps);
    const float* w = is_q ? op.q_norm : op.k_norm;
    for (int32_t d = tid; d < hd; d += kThreads) x[d] = x[d] * scale * w[d];
    __syncthreads();
  }
  const int32_t pos = op.step.positions[r];
  for (int32_t pair = tid; pair < op.rope_dims / 2; pair += kThreads) {
    rope_rotate_pair(x, pair, op.rope_dims, op.neox, op.rope_table + int64_t{pos} * op.rope_dims);
  }
  __syncthreads();
  for (int32_t d = tid; d < hd; d += kThreads) head[d] = x[d];
  if (is_q) return;
  const PackedSeq& seq = op.step.seqs[op.step.row_seq[r]];
  const int32_t block = op.step.tables[seq.table_begin + pos / op.kv.block_tokens];
  uint8_t* krow = op.kv.k_row(op.layer, block, hh, pos % op.kv.block_tokens);
  for (int32_t d = tid; d < hd; d += kThreads) {
    kv_store(op.kv, krow, d, x[d]);
    kv_store(op.kv, krow + op.kv.kv_stride, d, vrow[d]);
  }
}

// AttentionOp, a block per index: the row's partitions in order, each
// partial folded into the total as AttentionMergeOp folds records.
__global__ void __launch_bounds__(kThreads) attention_whole_kernel(AttentionOp op) {
  __shared__ Scratch s;
  const int64_t i = blockIdx.x;
  const int64_t r = i / op.heads;
  const PackedSeq& seq = op.step.seqs[op.step.row_seq[r]];
  if (seq.num_rows == 1) return;  // split
  const auto h = static_cast<int32_t>(i % op.heads);
  const int32_t pos = op.step.positions[r], first = first_read(pos, op.window), hd = op.attn.head_dim;
  load_query(s, op.q + i * hd, hd, op.attn.kv.type);
  float total_m = -INFINITY, total_l = 0.0f, total[kDimsPerThread] = {};
  for (int32_t p = first / kAttnPartitionTokens; p <= pos / kAttnPartitionTokens; ++p) {
    const int32_t begin = p * kAttnPartitionTokens > first ? p * kAttnPartitionTokens : first;
    const int32_t end = (p + 1) * kAttnPartitionTokens < pos + 1 ? (p + 1) * kAttnPartitionTokens : pos + 1;
    const Partial part = partial_block(op.attn, s, op.step.tables + seq.table_begin, h, begin, end);
    const FoldWeights w = fold_weights(total_m, part.m);
    total_m = w.m;
    total_l = fold_term(total_l, part.l, w);
    for (int k = 0; k < kDimsPerThread; ++k) total[k] = fold_term(total[k], part.acc[k], w);
  }
  for (int k = 0; k < kDimsPerThread; ++k) {
    const int32_t d = static_cast<int32_t>(threadIdx.x) + k * kThreads;
    if (d < hd) op.out[i * hd + d] = total[k] / total_l;
  }
}

// AttentionPartialOp, a block per index: the partition's record.
__global__ void __launch_bounds__(kThreads) attention_partial_kernel(AttentionPartialOp op) {
  __shared__ Scratch s;
  const int64_t i = blockIdx.x;
  const PackedPartition& part = op.partitions[i / op.heads];
  const PackedSeq& seq = op.step.seqs[part.seq];
  if (seq.num_rows != 1) return;  // whole
  const auto h = static_cast<int32_t>(i % op.heads);
  const int32_t hd = op.attn.head_dim;
  load_query(s, op.q + (int64_t{seq.row_begin} * op.heads + h) * hd, hd, op.attn.kv.type);
  const Partial p = partial_block(op.attn, s, op.step.tables + seq.table_begin, h, part.token_begin, part.token_end);
  float* rec = op.records + i * attn_record_floats(hd);
  if (threadIdx.x == 0) {
    rec[0] = p.m;
    rec[1] = p.l;
  }
  for (int k = 0; k < kDimsPerThread; ++k) {
    const int32_t d = static_cast<int32_t>(threadIdx.x) + k * kThreads;
    if (d < hd) rec[2 + d] = p.acc[k];
  }
}

// AttentionMergeOp, a block per index, a thread per dim: the records
// folded in partition order, as the whole kernel folds its partials.
__global__ void __launch_bounds__(kThreads) attention_merge_kernel(AttentionMergeOp op) {
  const int64_t i = blockIdx.x;
  const PackedSeq& seq = op.step.seqs[op.step.row_seq[i / op.heads]];
  if (seq.num_rows != 1) return;
  const auto h = static_cast<int32_t>(i % op.heads);
  const int64_t rf = attn_record_floats(op.head_dim);
  float total_m = -INFINITY, total_l = 0.0f, total[kDimsPerThread] = {};
  for (int32_t p = 0; p < seq.num_partitions; ++p) {
    const float* rec = op.records + (int64_t{seq.partition_begin + p} * op.heads + h) * rf;
    const FoldWeights w = fold_weights(total_m, rec[0]);
    total_m = w.m;
    total_l = fold_term(total_l, rec[1], w);
    for (int k = 0; k < kDimsPerThread; ++k) {
      const int32_t d = static_cast<int32_t>(threadIdx.x) + k * kThreads;
      if (d < op.head_dim) total[k] = fold_term(total[k], rec[2 + d], w);
    }
  }
  for (int k = 0; k < kDimsPerThread; ++k) {
    const int32_t d = static_cast<int32_t>(threadIdx.x) + k * kThreads;
    if (d < op.head_dim) op.out[i * op.head_dim + d] = total[k] / total_l;
  }
}

}  // namespace

cudaError_t launch_attention_whole(const AttentionOp& op, int64_t n, cudaStream_t stream) {
  attention_whole_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(op);
  return cudaGetLastError();
}

cudaError_t launch_attention_partials(const AttentionPartialOp& op, int64_t n, cudaStream_t stream) {
  attention_partial_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(op);
  return cudaGetLastError();
}

cudaError_t launch_attention_merge(const AttentionMergeOp& op, int64_t n, cudaStream_t stream) {
  attention_merge_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(op);
  return cudaGetLastError();
}

cudaError_t launch_qk_post(const QkPostOp& op, int64_t n, cudaStream_t stream) {
  qk_post_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(op);
  return cudaGetLastError();
}

}  // namespace met::cuda
