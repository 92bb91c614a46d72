// paged_attention: runs a planned step for one layer. The arithmetic of one
// row is fixed: chunk c of its positions gives a partial (the tier's chunk
// kernel); fold() merges partial c into the total of chunks 0..c-1 and
// finalize() divides. A whole-unit item folds as it goes; split items leave
// each chunk's partial in a slot, and after a barrier the merge phase folds
// the slots in the same order with the same two functions, so both give the
// same bits.
// Threading: see attention.h. Tested by tests/backend/attention_test.cc.
#include "backend/cpu/kernels/attention.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/kernels/attention_state.h"
#include "core/check.h"

namespace met::cpu {
namespace {

// total <- total (+) part, both records over head_dim. Never inlined and
// with explicit fma, so every caller runs the very same instructions.
[[gnu::noinline]] void fold(float* total, const float* part, int32_t head_dim) {
  const float m = std::max(total[0], part[0]);
  const float a = std::exp(total[0] - m);
  const float b = std::exp(part[0] - m);
  total[0] = m;
  total[1] = std::fma(total[1], a, part[1] * b);
  float* acc = total + attn::kRecordHeader;
  const float* other = part + attn::kRecordHeader;
  for (int32_t d = 0; d < head_dim; ++d) acc[d] = std::fma(acc[d], a, other[d] * b);
}

[[gnu::noinline]] void finalize(const float* total, int32_t head_dim, float* out) {
  const float* acc = total + attn::kRecordHeader;
  for (int32_t d = 0; d < head_dim; ++d) out[d] = acc[d] / total[1];
}

// One call's inputs, shared by every item.
struct Run {
  const AttentionState& s;
  const KvCache& cache;
  int32_t layer;
  const float* q;
  int64_t q_stride;
  float scale;
  float* out;
  int64_t out_stride;
  attn::ChunkKernel kernel;

  const AttnSeq& seq(const AttnUnit& u) const { return s.seqs[static_cast<size_t>(u.seq)]; }
  int32_t row_of(const AttnUnit& u, int32_t query) const { return u.row_begin + query / s.group; }
  int32_t head_of(const AttnUnit& u, int32_t query) const {
    return u.kv_head * s.group + query % s.group;
  }
  float* out_of(const AttnUnit& u, int32_t query) const {
    const int64_t row = seq(u).row_begin + row_of(u, query);
    return out + row * out_stride + int64_t{head_of(u, query)} * s.limits.head_dim;
  }
};

// Fills the per-query pointers and lengths of unit `u` into `tb`.
void gather_queries(const Run& run, const AttnUnit& u, AttnThreadBuffers& tb) {
  const AttnSeq& seq = run.seq(u);
  for (int32_t i = 0; i < run.s.queries(u); ++i) {
    const int64_t row = seq.row_begin + run.row_of(u, i);
    tb.q[static_cast<size_t>(i)] =
        run.q + row * run.q_stride + int64_t{run.head_of(u, i)} * run.s.limits.head_dim;
    tb.len[static_cast<size_t>(i)] = seq.num_cached + run.row_of(u, i) + 1;
  }
}

constexpr int32_t kBlocksPerChunk = kAttnChunkTokens / kBlockTokens;

// The kernel's job for chunk c of unit u and its queries [first, nq), whose
// limits and records tb holds. `next_is_mine`: this thread runs chunk c + 1
// next, so the kernel may prefetch it.
attn::ChunkJob chunk_job(const Run& run, const AttnUnit& u, int32_t c, int32_t first,
                         bool next_is_mine, AttnThreadBuffers& tb) {
  const int32_t nq = run.s.queries(u);
  const BlockId* blocks = run.seq(u).block_table.data() + c * kBlocksPerChunk;
  const int32_t num_tokens = tb.limit[static_cast<size_t>(nq - 1)];  // the last row reads the most
  const int32_t pool_blocks = run.cache.layout().num_blocks;
  for (int32_t b = 0; b < (num_tokens + kBlockTokens - 1) / kBlockTokens; ++b) {
    MET_CHECK(blocks[b].value() >= 0 && blocks[b].value() < pool_blocks,
              "attention: block {} of {}", blocks[b].value(), pool_blocks);
  }
  const int32_t unit_blocks =
      (tb.len[static_cast<size_t>(nq - 1)] + kBlockTokens - 1) / kBlockTokens;
  const bool prefetch_next = next_is_mine && c + 1 < u.num_chunks;
  return attn::ChunkJob{
      .kv_base = run.cache.data(),
      .block_bytes = run.cache.block_bytes(),
      .blocks = blocks,
      .k_offset = run.cache.k_offset(run.layer, u.kv_head),
      .v_offset = run.cache.v_offset(run.layer, u.kv_head),
      .row_bytes = run.cache.row_bytes(),
      .head_dim = run.s.limits.head_dim,
      .num_tokens = num_tokens,
      .num_queries = nq - first,
      .q = tb.q.data() + first,
      .limit = tb.limit.data() + first,
      .scale = run.scale,
      .scores = tb.scores.get(),
      .records = tb.records.data() + first,
      .next_blocks = prefetch_next ? blocks + kBlocksPerChunk : nullptr,
      .num_next_blocks =
          prefetch_next ? std::min(kBlocksPerChunk, unit_blocks - (c + 1) * kBlocksPerChunk) : 0};
}

// Runs the chunk kernel on chunk c of unit u for the queries whose row
// reaches it (a suffix, as rows go up), writing query i's partial to
// record(i). Returns the first such query.
template <typename RecordOf>
int32_t run_chunk(const Run& run, const AttnUnit& u, int32_t c, bool next_is_mine,
                  AttnThreadBuffers& tb, RecordOf record) {
  const int32_t t0 = c * kAttnChunkTokens;
  const int32_t nq = run.s.queries(u);
  int32_t first = 0;
  while (tb.len[static_cast<size_t>(first)] <= t0) ++first;
  for (int32_t i = first; i < nq; ++i) {
    tb.limit[static_cast<size_t>(i)] =
        std::min(tb.len[static_cast<size_t>(i)] - t0, kAttnChunkTokens);
    tb.records[static_cast<size_t>(i)] = record(i);
  }
  run.kernel(chunk_job(run, u, c, first, next_is_mine, tb));
  return first;
}

// Every chunk of unit u, folded into tb.total as it comes, then written out.
void run_whole(const Run& run, const AttnUnit& u, AttnThreadBuffers& tb) {
  const int32_t hd = run.s.limits.head_dim;
  const int32_t rf = run.s.record_floats;
  const int32_t nq = run.s.queries(u);
  for (int32_t c = 0; c < u.num_chunks; ++c) {
    float* target = c == 0 ? tb.total.get() : tb.partial.get();
    const int32_t first =
        run_chunk(run, u, c, /*next_is_mine=*/true, tb, [&](int32_t i) { return target + i * rf; });
    if (c == 0) continue;
    for (int32_t i = first; i < nq; ++i)
      fold(tb.total.get() + i * rf, tb.partial.get() + i * rf, hd);
  }
  for (int32_t i = 0; i < nq; ++i) finalize(tb.total.get() + i * rf, hd, run.out_of(u, i));
}

// Folds the slots of one query of a split unit, in chunk order.
void run_merge(const Run& run, const AttnMerge& m) {
  const AttnUnit& u = run.s.units[static_cast<size_t>(m.unit)];
  const int32_t len = run.seq(u).num_cached + run.row_of(u, m.query) + 1;
  const int32_t chunks = (len + kAttnChunkTokens - 1) / kAttnChunkTokens;
  const int32_t hd = run.s.limits.head_dim;
  float* total = run.s.slot(u, 0, m.query);
  for (int32_t c = 1; c < chunks; ++c) fold(total, run.s.slot(u, c, m.query), hd);
  finalize(total, hd, run.out_of(u, m.query));
}

void check_inputs(const ThreadCtx& ctx, const KvCache& cache, int32_t layer, int32_t num_heads,
                  const AttentionState& s) {
  const KvLayout& kv = cache.layout();
  MET_CHECK(num_heads == s.limits.num_heads, "attention: {} heads, scratch for {}", num_heads,
            s.limits.num_heads);
  MET_CHECK(ctx.nth() <= s.limits.num_threads, "attention: {} threads, scratch for {}", ctx.nth(),
            s.limits.num_threads);
  MET_CHECK(kv.num_kv_heads == s.limits.num_kv_heads && kv.head_dim == s.limits.head_dim,
            "attention: cache of {} kv heads x {}, scratch for {} x {}", kv.num_kv_heads,
            kv.head_dim, s.limits.num_kv_heads, s.limits.head_dim);
  MET_CHECK(layer >= 0 && layer < kv.num_layers, "attention: layer {} of {}", layer, kv.num_layers);
}

}  // namespace

void paged_attention(ThreadCtx& ctx, const KvCache& cache, int32_t layer,
                     std::span<const AttnSeq> seqs, const float* q, int64_t q_stride,
                     int32_t num_heads, float scale, float* out, int64_t out_stride,
                     AttentionScratch& scratch) {
  MET_CHECK(scratch.s_ != nullptr, "attention: an empty AttentionScratch");
  AttentionState& s = *scratch.s_;
  check_inputs(ctx, cache, layer, num_heads, s);
  if (ctx.ith() == 0) scratch.plan_for(seqs);
  ctx.barrier();  // the plan is ready
  const attn::ChunkKernel kernel = attn::chunk_kernel(s.isa, cache.layout().dtype);
  MET_CHECK(kernel != nullptr, "attention: no kernel for kv dtype {}",
            ggml_type_name(cache.layout().dtype));
  const Run run{s, cache, layer, q, q_stride, scale, out, out_stride, kernel};
  AttnThreadBuffers& tb = s.threads[static_cast<size_t>(ctx.ith())];
  const auto num_items = static_cast<int32_t>(s.items.size());
  for (;;) {
    const int32_t i = s.next_item.fetch_add(1, std::memory_order_relaxed);
    if (i >= num_items) break;
    const AttnItem& item = s.items[static_cast<size_t>(i)];
    const AttnUnit& u = s.units[static_cast<size_t>(item.unit)];
    gather_queries(run, u, tb);
    if (item.whole) {
      run_whole(run, u, tb);
    } else {
      run_chunk(run, u, item.chunk, /*next_is_mine=*/false, tb,
                [&](int32_t qi) { return s.slot(u, item.chunk, qi); });
    }
  }
  ctx.barrier();  // every item done: slots complete, nobody takes from next_item
  if (ctx.ith() == 0) s.next_item.store(0, std::memory_order_relaxed);
  const auto [begin, end] = ctx.split(static_cast<int64_t>(s.merges.size()));
  for (int64_t m = begin; m < end; ++m) run_merge(run, s.merges[static_cast<size_t>(m)]);
  ctx.barrier();
}

}  // namespace met::cpu
