// Helpers for the paged-attention tests (attention_test.cc,
// attention_window_test.cc): a batch of sequences laid out in a KV pool
// whose contents depend only on each sequence's seed, running
// paged_attention on it, and error and bit comparisons. Test-only.
// Threading: a Batch is built and read by the test thread; run_kernel runs
// its own WorkerPool.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/worker_pool.h"
#include "core/cpu_features.h"
#include "testing/random_data.h"

namespace met::cpu::attention_testing {

struct Shape {
  GgmlType dtype = GgmlType::kF16;
  int32_t num_heads = 8;
  int32_t num_kv_heads = 2;
  int32_t head_dim = 64;
  int32_t num_layers = 2;
  int32_t width() const { return num_kv_heads * head_dim; }
  int32_t q_width() const { return num_heads * head_dim; }
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }
};

// A sequence by content: its K/V at position p and its query at position p
// depend only on (seed, p), never on where it sits in a batch or the pool.
struct SeqSpec {
  int32_t num_cached = 0;
  int32_t num_rows = 1;
  uint32_t seed = 1;
  bool causal = true;
};

inline uint32_t mix(uint32_t seed, uint32_t a, uint32_t b) {
  return seed * 2654435761u + a * 40503u + b * 97u + 11u;
}

enum class Placement { kContiguous, kShuffled };

// A batch laid out in a KV pool: block tables, the cache holding every
// position of every sequence (all layers), the query rows, and 8 spare
// blocks no table uses.
struct Batch {
  Batch(const Shape& shape, const std::vector<SeqSpec>& specs, Placement placement,
        uint32_t pool_seed = 7, float q_sigma = 1.0f)
      : shape_(shape) {
    int32_t blocks = 8;  // spare blocks, so shuffled tables spread out
    for (const SeqSpec& s : specs)
      blocks += (s.num_cached + s.num_rows + cpu::kBlockTokens - 1) / cpu::kBlockTokens;
    cache.emplace(KvCache::create(KvLayout{shape.dtype, shape.num_layers, shape.num_kv_heads,
                                           shape.head_dim, blocks})
                      .value());
    std::vector<BlockId> pool;
    for (int32_t b = 0; b < blocks; ++b) pool.emplace_back(b);
    if (placement == Placement::kShuffled)
      std::shuffle(pool.begin(), pool.end(), std::mt19937(pool_seed));
    size_t next = 0;
    for (const SeqSpec& s : specs) {
      const int32_t len = s.num_cached + s.num_rows;
      tables.emplace_back(pool.begin() + static_cast<ptrdiff_t>(next),
                          pool.begin() + static_cast<ptrdiff_t>(next) +
                              (len + cpu::kBlockTokens - 1) / cpu::kBlockTokens);
      next += tables.back().size();
      fill_kv(s, tables.back());
      seqs.push_back(AttnSeq{.block_table = {},
                             .num_cached = s.num_cached,
                             .row_begin = rows,
                             .num_rows = s.num_rows,
                             .causal = s.causal});
      for (int32_t r = 0; r < s.num_rows; ++r) {
        const std::vector<float> row =
            testing::gaussian(static_cast<size_t>(shape.q_width()),
                              mix(s.seed, 1, static_cast<uint32_t>(s.num_cached + r)), q_sigma);
        q.insert(q.end(), row.begin(), row.end());
      }
      rows += s.num_rows;
    }
    spare.assign(pool.begin() + static_cast<ptrdiff_t>(next), pool.end());
    for (size_t i = 0; i < seqs.size(); ++i) seqs[i].block_table = tables[i];
  }

  void fill_kv(const SeqSpec& s, const std::vector<BlockId>& table) {
    for (int32_t layer = 0; layer < shape_.num_layers; ++layer) {
      for (int32_t pos = 0; pos < s.num_cached + s.num_rows; ++pos) {
        const std::vector<float> kv = testing::gaussian(
            static_cast<size_t>(2 * shape_.width()),
            mix(s.seed, 2 + static_cast<uint32_t>(layer), static_cast<uint32_t>(pos)));
        cache->store(layer, table, pos, kv.data(), kv.data() + shape_.width());
      }
    }
  }

  Shape shape_;
  std::optional<KvCache> cache;
  std::vector<std::vector<BlockId>> tables;
  std::vector<AttnSeq> seqs;
  std::vector<float> q;
  std::vector<BlockId> spare;
  int32_t rows = 0;
};

struct RunOptions {
  int num_threads = 1;
  SplitK split = SplitK::kAuto;
  int64_t max_split_slots = 0;
  int32_t layer = 1;
  AttnLayerOptions attn = {};
};

inline std::vector<float> run_kernel(const Batch& b, Isa isa, const RunOptions& o = {}) {
  const Shape& sh = b.shape_;
  AttentionScratch scratch(AttentionLimits{.num_heads = sh.num_heads,
                                           .num_kv_heads = sh.num_kv_heads,
                                           .head_dim = sh.head_dim,
                                           .max_rows = b.rows,
                                           .num_threads = o.num_threads,
                                           .max_split_slots = o.max_split_slots,
                                           .split = o.split},
                           isa);
  std::vector<float> out(b.q.size(), NAN);
  WorkerPool pool(o.num_threads);
  pool.run([&](ThreadCtx& ctx) {
    paged_attention(ctx, *b.cache, o.layer, b.seqs, b.q.data(), sh.q_width(), sh.num_heads,
                    sh.scale(), out.data(), sh.q_width(), scratch, o.attn);
  });
  return out;
}

// Q8_0 values (q8_values.h) weigh each block's tokens by 16-bit codes on
// the block's largest weight: a token's weight is off by up to 2^-16 of
// that, so an output moves by about 1/32767 of the block's largest weighted
// value (far below Q8_0's own rounding of the values, which the reference
// shares: it reads the same dequantized values). Observed at most 8.3e-5
// in these tests (values N(0, 1), |v| < 6); 2.5e-4 is 3x that and still
// catches any wrong position, scale or head (those move outputs by ~0.1).
inline constexpr float kQ8ValuesTolerance = 2.5e-4f;
inline float tolerance_for(GgmlType dtype, float tolerance) {
  return dtype == GgmlType::kQ8_0 ? std::max(tolerance, kQ8ValuesTolerance) : tolerance;
}

inline float max_abs_error(const std::vector<float>& got, const std::vector<float>& want) {
  float worst = 0.0f;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    worst = std::max(worst, std::fabs(got[i] - want[i]));
  }
  return worst;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The rows of sequence `i` of a batch.
inline std::vector<float> rows_of(const Batch& b, const std::vector<float>& out, size_t i) {
  const int64_t w = b.shape_.q_width();
  const auto begin = out.begin() + b.seqs[i].row_begin * w;
  return {begin, begin + b.seqs[i].num_rows * w};
}

// Decode rows at short and long contexts, prefill chunks with and without
// a cached prefix.
inline std::vector<SeqSpec> mixed_batch() {
  return {{0, 33, 11},   {4095, 1, 12}, {16, 1, 13},  {127, 1, 14},
          {200, 64, 15}, {0, 1, 16},    {999, 1, 17}, {64, 17, 18}};
}

}  // namespace met::cpu::attention_testing
