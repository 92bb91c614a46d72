// Decode attention throughput: one sequence, one query row, reading its
// whole context of K and V through a shuffled block table (BM_DecodeAttention
// ordered:1, the table in the pool's order), head_dim 64,
// 8 kv heads, 16 query heads, F16 KV (or, `wide`, Qwen3.5's: head_dim 256,
// 2 kv heads, 8 query heads); on 1 and 2 threads of a WorkerPool;
// DecodeAttentionQ8_0, the same over a Q8_0 cache (bytes/s counts its bytes).
// bytes/s counts the K and V bytes read (context * kv heads * head_dim * 2
// bytes * 2). Each iteration reads the next layer of a pool of ~256 MiB, so the KV
// comes from DRAM, not cache, as it does in a real decode step.
// Peers, the bandwidth ceilings attention should stay near at every
// context (DESIGN.md, "Performance rules"): StreamRead sums as many
// contiguous bytes of the pool on the same threads; KvGatherRead sums the
// very bytes attention reads, in its order (kv head by kv head, blocks in
// table order).
// PrefillAttentionInline: a prefill chunk of several row tiles;
// DecodeAttentionHotInline: one layer read over and over from cache (F16
// and Q8_0 KV, both geometries), the kernel's arithmetic ceiling;
// WindowedDecodeAttentionInline: a layer with a 128-position window and
// sinks, whose time must not grow with the context.
// The *Inline variants run on the benchmark's own thread and report rates
// per CPU second, so they stay meaningful on a loaded machine (the pooled
// ones include the pool's wake-up and barrier costs and need idle cores).
// Run: build-rel/bench/backend/met_attention_bench [--benchmark_filter=4096]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/worker_pool.h"
#include "tensor/half.h"

namespace met::cpu {
namespace {

constexpr int64_t kPoolBytes = int64_t{256} << 20;

struct Geometry {
  int32_t heads = 16, kv_heads = 8, head_dim = 64;
  int32_t q_width() const { return heads * head_dim; }
};
constexpr Geometry kWide{.heads = 8, .kv_heads = 2, .head_dim = 256};  // Qwen3.5's attention layers

struct DecodeSetup {
  explicit DecodeSetup(int32_t context, GgmlType dtype = GgmlType::kF16, Geometry geometry = {},
                       bool shuffled = true)
      : g(geometry) {
    const int64_t layer_bytes = int64_t{context} * g.kv_heads * g.head_dim * 2 * 2;
    const auto layers =
        static_cast<int32_t>(std::clamp<int64_t>(kPoolBytes / layer_bytes, 2, kMaxKvLayers));
    const int32_t blocks = context / cpu::kBlockTokens;
    cache.emplace(
        KvCache::create(KvLayout{dtype, layers, g.kv_heads, g.head_dim, blocks}).value());
    fill_random_f16();
    for (int32_t b = 0; b < blocks; ++b) table.emplace_back(b);
    if (shuffled) std::shuffle(table.begin(), table.end(), std::mt19937(1));
    seq = AttnSeq{.block_table = table, .num_cached = context - 1, .row_begin = 0, .num_rows = 1};
    std::mt19937 rng(2);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    q.resize(static_cast<size_t>(g.q_width()));
    for (float& x : q) x = dist(rng);
    out.resize(q.size());
  }

  void fill_random_f16() {
    std::vector<uint16_t> values(4096);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (uint16_t& v : values) v = f32_to_fp16(dist(rng));
    std::vector<uint8_t> image(static_cast<size_t>(cache->block_bytes()));
    for (size_t i = 0; i < image.size(); i += sizeof(uint16_t) * values.size()) {
      std::memcpy(image.data() + i, values.data(), std::min(image.size() - i, values.size() * sizeof(uint16_t)));
    }
    for (int32_t b = 0; b < cache->layout().num_blocks; ++b) cache->write_block(BlockId(b), image);
  }

  int64_t kv_bytes_read() const { return int64_t{seq.num_cached + 1} * g.kv_heads * cache->row_bytes() * 2; }

  AttentionLimits limits(int32_t rows, int32_t threads) const {
    return AttentionLimits{.num_heads = g.heads,
                           .num_kv_heads = g.kv_heads,
                           .head_dim = g.head_dim,
                           .max_rows = rows,
                           .num_threads = threads};
  }

  // One decode row's attention over `layer`.
  void attend(ThreadCtx& ctx, int32_t layer, AttentionScratch& scratch, const AttnLayerOptions& opts = {}) {
    paged_attention(ctx, *cache, layer, std::span(&seq, 1), q.data(), g.q_width(), g.heads,
                    1.0f / std::sqrt(static_cast<float>(g.head_dim)), out.data(), g.q_width(), scratch, opts);
  }

  Geometry g;
  std::optional<KvCache> cache;
  std::vector<BlockId> table;
  AttnSeq seq;
  std::vector<float> q, out;
};

void decode_attention(benchmark::State& state, GgmlType dtype) {
  const auto context = static_cast<int32_t>(state.range(0));
  const auto threads = static_cast<int>(state.range(1));
  DecodeSetup setup(context, dtype, state.range(2) == 0 ? Geometry{} : kWide, state.range(3) == 0);
  AttentionScratch scratch(setup.limits(1, threads));
  if (!scratch.plan(std::span(&setup.seq, 1)).ok()) state.SkipWithError("plan failed");
  WorkerPool pool(threads);
  const int32_t layers = setup.cache->layout().num_layers;
  int32_t layer = 0;
  for (auto _ : state) {
    pool.run([&](ThreadCtx& ctx) { setup.attend(ctx, layer, scratch); });
    benchmark::DoNotOptimize(setup.out.data());
    layer = (layer + 1) % layers;
  }
  state.SetBytesProcessed(state.iterations() * setup.kv_bytes_read());
  state.counters["split_units"] = scratch.num_split_units();
}

void BM_DecodeAttention(benchmark::State& state) { decode_attention(state, GgmlType::kF16); }
// The same over a Q8_0 cache (--kv-dtype q8_0): about half the bytes, so
// at the same bytes/s about twice the rate.
void BM_DecodeAttentionQ8_0(benchmark::State& state) { decode_attention(state, GgmlType::kQ8_0); }

// Sums as many contiguous bytes as one decode reads, from the next slice of
// the same pool, split over the same threads.
void BM_StreamRead(benchmark::State& state) {
  const auto context = static_cast<int32_t>(state.range(0));
  const auto threads = static_cast<int>(state.range(1));
  DecodeSetup setup(context, GgmlType::kF16, state.range(2) == 0 ? Geometry{} : kWide);
  const int64_t words = setup.kv_bytes_read() / 8;
  const int64_t slices = setup.cache->total_bytes() / 8 / words;
  const auto* base = reinterpret_cast<const uint64_t*>(setup.cache->data());
  std::vector<uint64_t> sums(static_cast<size_t>(threads) * 8);
  WorkerPool pool(threads);
  int64_t slice = 0;
  for (auto _ : state) {
    pool.run([&](ThreadCtx& ctx) {
      const auto [begin, end] = ctx.split(words, 64);
      const uint64_t* p = base + slice * words;
      sums[static_cast<size_t>(ctx.ith()) * 8] = std::accumulate(p + begin, p + end, uint64_t{0});
    });
    benchmark::DoNotOptimize(sums.data());
    slice = (slice + 1) % slices;
  }
  state.SetBytesProcessed(state.iterations() * words * 8);
}

// The same decode on the calling thread (a one-thread pool's context).
void BM_DecodeAttentionInline(benchmark::State& state) {
  const auto context = static_cast<int32_t>(state.range(0));
  DecodeSetup setup(context, GgmlType::kF16, state.range(1) == 0 ? Geometry{} : kWide);
  AttentionScratch scratch(setup.limits(1, 1));
  WorkerPool pool(1);
  ThreadCtx ctx(pool, 0, 1);
  const int32_t layers = setup.cache->layout().num_layers;
  int32_t layer = 0;
  for (auto _ : state) {
    setup.attend(ctx, layer, scratch);
    benchmark::DoNotOptimize(setup.out.data());
    layer = (layer + 1) % layers;
  }
  state.SetBytesProcessed(state.iterations() * setup.kv_bytes_read());
}

// The same decode reading one layer over and over: at context 1024 its 2
// MiB of K and V (F16; arg 1: Q8_0, 1.1 MiB) stay in cache, so this is the
// kernel's arithmetic rate, the ceiling the DRAM-bound variants cannot pass.
void BM_DecodeAttentionHotInline(benchmark::State& state) {
  const auto context = static_cast<int32_t>(state.range(0));
  DecodeSetup setup(context, state.range(1) == 0 ? GgmlType::kF16 : GgmlType::kQ8_0,
                    state.range(2) == 0 ? Geometry{} : kWide);
  AttentionScratch scratch(setup.limits(1, 1));
  WorkerPool pool(1);
  ThreadCtx ctx(pool, 0, 1);
  for (auto _ : state) {
    setup.attend(ctx, 0, scratch);
    benchmark::DoNotOptimize(setup.out.data());
  }
  state.SetBytesProcessed(state.iterations() * setup.kv_bytes_read());
}

// The decode of a windowed layer with sinks (gpt-oss's even layers): its
// time should not grow with the context. bytes/s counts the window's K and V.
void BM_WindowedDecodeAttentionInline(benchmark::State& state) {
  const auto context = static_cast<int32_t>(state.range(0));
  const auto window = static_cast<int32_t>(state.range(1));
  DecodeSetup setup(context);
  AttentionScratch scratch(setup.limits(1, 1));
  WorkerPool pool(1);
  ThreadCtx ctx(pool, 0, 1);
  const std::vector<float> sinks(static_cast<size_t>(setup.g.heads), 1.0f);
  const AttnLayerOptions opts{.window = window, .sinks = sinks.data()};
  const int32_t layers = setup.cache->layout().num_layers;
  int32_t layer = 0;
  for (auto _ : state) {
    setup.attend(ctx, layer, scratch, opts);
    benchmark::DoNotOptimize(setup.out.data());
    layer = (layer + 1) % layers;
  }
  state.SetBytesProcessed(state.iterations() * int64_t{std::min(window, context)} * setup.g.kv_heads *
                          setup.g.head_dim * 2 * 2);
}

void BM_KvGatherReadInline(benchmark::State& state) {
  const auto context = static_cast<int32_t>(state.range(0));
  DecodeSetup setup(context, GgmlType::kF16, state.range(1) == 0 ? Geometry{} : kWide);
  const KvCache& cache = *setup.cache;
  const int32_t layers = cache.layout().num_layers;
  const int64_t words = cpu::kBlockTokens * cache.row_bytes() / 8;
  int32_t layer = 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (int32_t h = 0; h < setup.g.kv_heads; ++h) {
      for (const BlockId b : setup.table) {
        const uint8_t* block = cache.data() + b.value() * cache.block_stride();
        const auto* k = reinterpret_cast<const uint64_t*>(block + cache.k_offset(layer, h));
        const auto* v = reinterpret_cast<const uint64_t*>(block + cache.v_offset(layer, h));
        for (int64_t i = 0; i < words; ++i) sum += k[i] ^ v[i];
      }
    }
    benchmark::DoNotOptimize(sum);
    layer = (layer + 1) % layers;
  }
  state.SetBytesProcessed(state.iterations() * setup.kv_bytes_read());
}

// A prefill chunk on the calling thread: `rows` query rows after `cached`
// positions of one sequence (the tiles of several rows, the causal mask).
// items/s counts (query head, position) scores.
void BM_PrefillAttentionInline(benchmark::State& state) {
  const auto cached = static_cast<int32_t>(state.range(0));
  const auto rows = static_cast<int32_t>(state.range(1));
  DecodeSetup setup(cached + rows);
  const AttnSeq seq{
      .block_table = setup.table, .num_cached = cached, .row_begin = 0, .num_rows = rows};
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const int32_t width = setup.g.q_width();
  std::vector<float> q(static_cast<size_t>(rows) * width), out(q.size());
  for (float& x : q) x = dist(rng);
  AttentionScratch scratch(setup.limits(rows, 1));
  WorkerPool pool(1);
  ThreadCtx ctx(pool, 0, 1);
  for (auto _ : state) {
    paged_attention(ctx, *setup.cache, 0, std::span(&seq, 1), q.data(), width, setup.g.heads, 0.125f, out.data(),
                    width, scratch);
    benchmark::DoNotOptimize(out.data());
  }
  const int64_t scores = (int64_t{rows} * cached + int64_t{rows} * (rows + 1) / 2) * setup.g.heads;
  state.SetItemsProcessed(state.iterations() * scores);
}

void window_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"context", "window"});
  for (const int64_t context : {4096, 16384}) b->Args({context, 128});
}

void prefill_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"cached", "rows"});
  b->Args({0, 512});
  b->Args({1536, 512});
}

void inline_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"context", "wide"});
  for (const int64_t context : {1024, 4096, 16384}) b->Args({context, 0});
  b->Args({16384, 1});
}

void stream_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"context", "threads", "wide"});
  for (const int64_t context : {1024, 4096}) {
    for (const int64_t threads : {1, 2}) b->Args({context, threads, 0});
  }
  b->Args({16384, 2, 1});
  b->UseRealTime();
}

// ordered: the block table in the pool's order, as a sequence's table is
// when the pool handed its blocks out one after another (a head's rows are
// then one run, kv_cache.h); otherwise shuffled, a fragmented pool.
void decode_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"context", "threads", "wide", "ordered"});
  for (const int64_t context : {1024, 4096}) {
    for (const int64_t threads : {1, 2}) {
      for (const int64_t ordered : {0, 1}) b->Args({context, threads, 0, ordered});
    }
  }
  b->Args({16384, 2, 1, 0});
  b->UseRealTime();
}

void hot_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"context", "q8_0", "wide"});
  for (const int64_t wide : {0, 1}) {
    for (const int64_t q8 : {0, 1}) b->Args({1024, q8, wide});
  }
}

BENCHMARK(BM_DecodeAttention)->Apply(decode_args);
BENCHMARK(BM_DecodeAttentionQ8_0)->Apply(decode_args);
BENCHMARK(BM_StreamRead)->Apply(stream_args);
BENCHMARK(BM_DecodeAttentionInline)->Apply(inline_args);
BENCHMARK(BM_KvGatherReadInline)->Apply(inline_args);
BENCHMARK(BM_DecodeAttentionHotInline)->Apply(hot_args);
BENCHMARK(BM_PrefillAttentionInline)->Apply(prefill_args);
BENCHMARK(BM_WindowedDecodeAttentionInline)->Apply(window_args);

}  // namespace
}  // namespace met::cpu

BENCHMARK_MAIN();
