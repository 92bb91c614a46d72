// paged_attention: runs a planned step for one layer. The arithmetic of one
// row is fixed: chunk c of its positions gives a partial (the tier's chunk
// kernel, masked to the row's window); fold() merges partial c into the
// total of the row's chunks before it, from the first one its window meets,
// and finalize() divides (finalize_with_sink() when the layer has sinks). A
// whole-unit item folds as it goes; split items leave each chunk's partial
// in a slot, and after a barrier the merge phase folds the slots in the same
// order with the same functions, so both give the same bits. A windowed
// layer runs the window-free plan: a split item of a chunk no row of its
// unit reaches returns at once, and a whole unit starts at its first row's
// window.
// Threading: see attention.h. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc (windows, sinks).
#include "backend/cpu/kernels/attention.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/kernels/attention_state.h"
#include "backend/softmax_fold.h"
#include "core/check.h"

namespace met::cpu {
namespace {

// total <- total (+) part, both records over head_dim (softmax_fold.h's
// definition, which the CUDA backend's merge runs too). Never inlined, so
// every caller runs the very same instructions.
[[gnu::noinline]] void fold(float* total, const float* part, int32_t head_dim) {
  const FoldWeights w = fold_weights(total[0], part[0]);
  total[0] = w.m;
  total[1] = fold_term(total[1], part[1], w);
  float* acc = total + attn::kRecordHeader;
  const float* other = part + attn::kRecordHeader;
  for (int32_t d = 0; d < head_dim; ++d) acc[d] = fold_term(acc[d], other[d], w);
}

[[gnu::noinline]] void finalize(const float* total, int32_t head_dim, float* out) {
  const float* acc = total + attn::kRecordHeader;
  for (int32_t d = 0; d < head_dim; ++d) out[d] = acc[d] / total[1];
}

// finalize() with one more logit, `sink`, in the softmax. A sink far above
// the scores makes the scale 0 and the output 0, its limit (no inf / inf).
[[gnu::noinline]] void finalize_with_sink(const float* total, float sink, int32_t head_dim,
                                          float* out) {
  const SinkWeights w = sink_weights(total[0], total[1], sink);
  const float* acc = total + attn::kRecordHeader;
  for (int32_t d = 0; d < head_dim; ++d) out[d] = acc[d] * w.acc_scale / w.l;
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
  int32_t window;
  const float* sinks;
  float softcap;
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
  // The first position read by a row whose positions end at len (exclusive).
  int32_t window_begin(int32_t len) const { return window > 0 ? std::max(0, len - window) : 0; }
  // Divides query `query`'s folded total into its output.
  void write_out(const AttnUnit& u, int32_t query, const float* total) const {
    if (sinks == nullptr) {
      finalize(total, s.limits.head_dim, out_of(u, query));
    } else {
      finalize_with_sink(total, sinks[head_of(u, query)], s.limits.head_dim, out_of(u, query));
    }
  }
};

// Fills the per-query pointers and position ranges of unit `u` into `tb`.
void gather_queries(const Run& run, const AttnUnit& u, AttnThreadBuffers& tb) {
  const AttnSeq& seq = run.seq(u);
  for (int32_t i = 0; i < run.s.queries(u); ++i) {
    const int64_t row = seq.row_begin + run.row_of(u, i);
    const auto q = static_cast<size_t>(i);
    tb.q[q] = run.q + row * run.q_stride + int64_t{run.head_of(u, i)} * run.s.limits.head_dim;
    tb.len[q] = row_read_end(seq, run.row_of(u, i));
    tb.begin[q] = run.window_begin(tb.len[q]);
  }
}

constexpr int32_t kBlocksPerChunk = kAttnChunkTokens / kBlockTokens;

// Queries [first, last) of a unit: those whose rows read some position of
// a chunk. A range, since rows (their ends and window begins) go up.
struct QueryRange {
  int32_t first = 0;
  int32_t last = 0;
};

QueryRange queries_reading(const Run& run, const AttnUnit& u, int32_t c,
                           const AttnThreadBuffers& tb) {
  const int32_t t0 = c * kAttnChunkTokens;
  const int32_t nq = run.s.queries(u);
  QueryRange r;
  while (r.first < nq && tb.len[static_cast<size_t>(r.first)] <= t0) ++r.first;
  r.last = nq;
  if (run.window > 0) {
    r.last = r.first;
    while (r.last < nq && tb.begin[static_cast<size_t>(r.last)] < t0 + kAttnChunkTokens) ++r.last;
  }
  return r;
}

// The blocks of the chunk a thread runs next, which the kernel prefetches
// while it ends the current one; none (null) where that is unknown.
struct NextChunk {
  const BlockId* blocks = nullptr;
  int32_t num_blocks = 0;
};

// The blocks of chunk c of unit u, up to the last one its rows read.
NextChunk chunk_blocks(const Run& run, const AttnUnit& u, int32_t c) {
  const AttnSeq& seq = run.seq(u);
  const int32_t len = row_read_end(seq, u.row_begin + u.num_rows - 1);
  const int32_t unit_blocks = (len + kBlockTokens - 1) / kBlockTokens;
  return {seq.block_table.data() + c * kBlocksPerChunk,
          std::max(0, std::min(kBlocksPerChunk, unit_blocks - c * kBlocksPerChunk))};
}

// The first chunk of `item` (the item a thread claimed ahead), so the chunk
// before it can prefetch it. None in a windowed layer, whose first chunks'
// early blocks may have been released (their table entries are not read).
NextChunk first_chunk(const Run& run, const AttnItem& item) {
  if (run.window > 0) return {};
  const AttnUnit& u = run.s.units[static_cast<size_t>(item.unit)];
  return chunk_blocks(run, u, item.whole ? 0 : item.chunk);
}

// The kernel's job for chunk c of unit u and its queries r, whose starts,
// limits and records tb holds; `next` is the chunk this thread runs after
// it. Only the blocks from the first query's start on are checked (and read).
attn::ChunkJob chunk_job(const Run& run, const AttnUnit& u, int32_t c, QueryRange r,
                         NextChunk next, AttnThreadBuffers& tb) {
  const BlockId* blocks = run.seq(u).block_table.data() + c * kBlocksPerChunk;
  // The last query reads the most; the first starts the earliest.
  const int32_t num_tokens = tb.limit[static_cast<size_t>(r.last - 1)];
  const int32_t first_block =
      run.window > 0 ? tb.start[static_cast<size_t>(r.first)] / kBlockTokens : 0;
  const int32_t pool_blocks = run.cache.layout().num_blocks;
  for (int32_t b = first_block; b < (num_tokens + kBlockTokens - 1) / kBlockTokens; ++b) {
    MET_CHECK(blocks[b].value() >= 0 && blocks[b].value() < pool_blocks,
              "attention: block {} of {}", blocks[b].value(), pool_blocks);
  }
  return attn::ChunkJob{
      .kv_base = run.cache.data(),
      .block_stride = run.cache.block_stride(),
      .blocks = blocks,
      .k_offset = run.cache.k_offset(run.layer, u.kv_head),
      .v_offset = run.cache.v_offset(run.layer, u.kv_head),
      .row_bytes = run.cache.row_bytes(),
      .head_dim = run.s.limits.head_dim,
      .num_tokens = num_tokens,
      .num_queries = r.last - r.first,
      .q = tb.q.data() + r.first,
      .limit = tb.limit.data() + r.first,
      .start = run.window > 0 ? tb.start.data() + r.first : nullptr,
      .scale = run.scale,
      .softcap = run.softcap,
      .scores = tb.scores.get(),
      .query_codes = reinterpret_cast<uint8_t*>(tb.query_codes.get()),
      .records = tb.records.data() + r.first,
      .next_blocks = next.blocks,
      .num_next_blocks = next.num_blocks};
}

// Runs the chunk kernel on chunk c of unit u for the queries whose rows
// read some of it, writing query i's partial to record(i). Returns them
// (none: the kernel did not run).
template <typename RecordOf>
QueryRange run_chunk(const Run& run, const AttnUnit& u, int32_t c, NextChunk next,
                     AttnThreadBuffers& tb, RecordOf record) {
  const int32_t t0 = c * kAttnChunkTokens;
  const QueryRange r = queries_reading(run, u, c, tb);
  if (r.first == r.last) return r;
  for (int32_t i = r.first; i < r.last; ++i) {
    const auto q = static_cast<size_t>(i);
    if (run.window > 0) tb.start[q] = std::max(tb.begin[q] - t0, 0);
    tb.limit[q] = std::min(tb.len[q] - t0, kAttnChunkTokens);
    tb.records[q] = record(i);
  }
  run.kernel(chunk_job(run, u, c, r, next, tb));
  return r;
}

// Every chunk of unit u from its first row's window on, folded into
// tb.total as it comes (a query's first chunk goes there directly), then
// written out. `after`: the chunk this thread runs after the unit.
void run_whole(const Run& run, const AttnUnit& u, NextChunk after, AttnThreadBuffers& tb) {
  const int32_t hd = run.s.limits.head_dim;
  const int32_t rf = run.s.record_floats;
  float* total = tb.total.get();
  float* partial = tb.partial.get();
  const auto opens = [&](int32_t i, int32_t c) {  // chunk c is query i's first
    return run.window > 0 ? tb.begin[static_cast<size_t>(i)] / kAttnChunkTokens == c : c == 0;
  };
  for (int32_t c = tb.begin[0] / kAttnChunkTokens; c < u.num_chunks; ++c) {
    const NextChunk next = c + 1 < u.num_chunks ? chunk_blocks(run, u, c + 1) : after;
    const QueryRange r = run_chunk(run, u, c, next, tb, [&](int32_t i) {
      return (opens(i, c) ? total : partial) + i * rf;
    });
    for (int32_t i = r.first; i < r.last; ++i) {
      if (!opens(i, c)) fold(total + i * rf, partial + i * rf, hd);
    }
  }
  for (int32_t i = 0; i < run.s.queries(u); ++i) run.write_out(u, i, total + i * rf);
}

// Folds the slots of one query of a split unit, in chunk order from the
// first chunk its window meets.
void run_merge(const Run& run, const AttnMerge& m) {
  const AttnUnit& u = run.s.units[static_cast<size_t>(m.unit)];
  const int32_t len = row_read_end(run.seq(u), run.row_of(u, m.query));
  const int32_t first = run.window_begin(len) / kAttnChunkTokens;
  const int32_t chunks = (len + kAttnChunkTokens - 1) / kAttnChunkTokens;
  const int32_t hd = run.s.limits.head_dim;
  float* total = run.s.slot(u, first, m.query);
  for (int32_t c = first + 1; c < chunks; ++c) fold(total, run.s.slot(u, c, m.query), hd);
  run.write_out(u, m.query, total);
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
                     AttentionScratch& scratch, const AttnLayerOptions& opts) {
  MET_CHECK(scratch.s_ != nullptr, "attention: an empty AttentionScratch");
  AttentionState& s = *scratch.s_;
  check_inputs(ctx, cache, layer, num_heads, s);
  MET_CHECK(opts.window >= 0, "attention: window {}", opts.window);
  if (ctx.ith() == 0) scratch.plan_for(seqs);
  ctx.barrier();  // the plan is ready
  const attn::ChunkKernel kernel = attn::chunk_kernel(s.isa, cache.layout().dtype);
  MET_CHECK(kernel != nullptr, "attention: no kernel for kv dtype {}",
            ggml_type_name(cache.layout().dtype));
  const Run run{.s = s,
                .cache = cache,
                .layer = layer,
                .q = q,
                .q_stride = q_stride,
                .scale = scale,
                .out = out,
                .out_stride = out_stride,
                .window = opts.window,
                .sinks = opts.sinks,
                .softcap = opts.softcap,
                .kernel = kernel};
  AttnThreadBuffers& tb = s.threads[static_cast<size_t>(ctx.ith())];
  // Each thread claims its next item before running the current one, so the
  // current one's last chunk can prefetch the next one's first.
  const auto num_items = static_cast<int32_t>(s.items.size());
  for (int32_t i = s.next_item.fetch_add(1, std::memory_order_relaxed); i < num_items;) {
    const int32_t next = s.next_item.fetch_add(1, std::memory_order_relaxed);
    const NextChunk after =
        next < num_items ? first_chunk(run, s.items[static_cast<size_t>(next)]) : NextChunk{};
    const AttnItem& item = s.items[static_cast<size_t>(i)];
    const AttnUnit& u = s.units[static_cast<size_t>(item.unit)];
    gather_queries(run, u, tb);
    if (item.whole) {
      run_whole(run, u, after, tb);
    } else {
      run_chunk(run, u, item.chunk, after, tb, [&](int32_t qi) { return s.slot(u, item.chunk, qi); });
    }
    i = next;
  }
  ctx.barrier();  // every item done: slots complete, nobody takes from next_item
  if (ctx.ith() == 0) s.next_item.store(0, std::memory_order_relaxed);
  const auto [begin, end] = ctx.split(static_cast<int64_t>(s.merges.size()));
  for (int64_t m = begin; m < end; ++m) run_merge(run, s.merges[static_cast<size_t>(m)]);
  ctx.barrier();
}

}  // namespace met::cpu
