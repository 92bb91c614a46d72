// Tests for paged_attention's per-layer options (backend/cpu/kernels/
// attention.h, AttnLayerOptions: gpt-oss's sliding window and attention
// sinks), per ISA tier the CPU has (others are skipped with a message),
// against the plain definition in double written here (window_reference)
// and against the scalar twin: windows smaller than, equal to and larger
// than the context and not multiples of 128, decode rows, prefill chunks
// after a cached prefix (rows of one tile with different window starts),
// GQA, head dims, KV dtypes, sinks from -200 to +200; the invariances
// (thread count, split-K, the rest of the batch never change a row's
// bits); that block table entries before every row's window are never
// read; that one plan serves windowed and full layers in turn; and that
// no call allocates. Helpers in attention_testing.h.
//
// Tolerance: as attention_test.cc's kTolerance (1e-5; observed errors are
// ~1e-6): a window or a sink only drops positions or grows a denominator,
// which makes outputs smaller, not errors larger. The scalar twin and a
// vector tier differ by float rounding only, within the same bound (Q8_0
// values: kQ8ValuesTolerance, attention_testing.h).
#include "backend/cpu/kernels/attention.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/attention_testing.h"
#include "backend/cpu/kernels/reference/attention_ref.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/worker_pool.h"
#include "core/check.h"
#include "core/cpu_features.h"
#include "testing/allocation_counter.h"

namespace met::cpu {
namespace {

using attention_testing::Batch;
using attention_testing::max_abs_error;
using attention_testing::mixed_batch;
using attention_testing::Placement;
using attention_testing::rows_of;
using attention_testing::run_kernel;
using attention_testing::RunOptions;
using attention_testing::same_bits;
using attention_testing::SeqSpec;
using attention_testing::Shape;
using attention_testing::tolerance_for;

constexpr float kWindowTolerance = 1e-5f;

// One row and head over K/V rows [0, n) (each of width floats, this kv
// head's at kv_offset), in double, with an optional sink logit.
// Raw pointers in the loops: the check build compiles tests at -O0, where
// every vector::operator[] is a call.
void attend_in_double(const float* q, const std::vector<float>& keys, const std::vector<float>& values,
                      int32_t n, int64_t width, int64_t kv_offset, int32_t head_dim, double scale,
                      const float* sink, double softcap, float* out) {
  std::vector<double> scores(static_cast<size_t>(n));
  double* s = scores.data();
  const float* k = keys.data() + kv_offset;
  const float* v = values.data() + kv_offset;
  for (int32_t t = 0; t < n; ++t) {
    double dot = 0.0;
    for (int32_t d = 0; d < head_dim; ++d) dot += double{q[d]} * k[t * width + d];
    s[t] = dot * scale;
    if (softcap > 0.0) s[t] = softcap * std::tanh(s[t] / softcap);
  }
  double m = *std::max_element(s, s + n);
  if (sink != nullptr) m = std::max(m, double{*sink});
  double l = sink != nullptr ? std::exp(*sink - m) : 0.0;
  for (int32_t t = 0; t < n; ++t) l += (s[t] = std::exp(s[t] - m));
  for (int32_t d = 0; d < head_dim; ++d) {
    double acc = 0.0;
    for (int32_t t = 0; t < n; ++t) acc += s[t] * v[t * width + d];
    out[d] = static_cast<float>(acc / l);
  }
}

// The definition: row r of a sequence reads positions [max(0, len - window),
// len), len = num_cached + r + 1 (window 0: from 0), loaded one by one
// through KvCache::load, so no position outside a window is touched.
std::vector<float> window_reference(const Batch& b, int32_t layer, const AttnLayerOptions& o) {
  const Shape& sh = b.shape_;
  const int32_t group = sh.num_heads / sh.num_kv_heads;
  std::vector<float> out(b.q.size(), NAN);
  for (const AttnSeq& seq : b.seqs) {
    for (int32_t r = 0; r < seq.num_rows; ++r) {
      const int32_t len = seq.num_cached + r + 1;
      const int32_t begin = o.window > 0 ? std::max(0, len - o.window) : 0;
      std::vector<float> k(static_cast<size_t>((len - begin) * sh.width()));
      std::vector<float> v(k.size());
      for (int32_t pos = begin; pos < len; ++pos) {
        const int64_t at = int64_t{pos - begin} * sh.width();
        b.cache->load(layer, seq.block_table, pos, k.data() + at, v.data() + at);
      }
      const int64_t row = seq.row_begin + r;
      for (int32_t h = 0; h < sh.num_heads; ++h) {
        const int64_t at = row * sh.q_width() + int64_t{h} * sh.head_dim;
        const std::vector<float> q = ref::attended_query(*b.cache, b.q.data() + at);
        attend_in_double(q.data(), k, v, len - begin, sh.width(),
                         int64_t{h / group} * sh.head_dim, sh.head_dim, sh.scale(),
                         o.sinks != nullptr ? o.sinks + h : nullptr, o.softcap, out.data() + at);
      }
    }
  }
  return out;
}

// Sink logits for num_heads heads: below, among and far above the scores
// (which are ~N(0, 1) here).
std::vector<float> some_sinks(int32_t num_heads) {
  constexpr float kValues[] = {-3.0f, 0.5f, 2.0f, 6.0f, -40.0f, 25.0f, 1.0f, 12.0f, -0.25f};
  std::vector<float> sinks;
  for (int32_t h = 0; h < num_heads; ++h) sinks.push_back(kValues[h % std::size(kValues)]);
  return sinks;
}

// The first position every row of a sequence reads, under `window`.
int32_t first_read(const AttnSeq& seq, int32_t window) {
  return window > 0 ? std::max(0, seq.num_cached + 1 - window) : 0;
}

class PagedAttentionWindowTier : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU cannot run the " << isa_name(GetParam()) << " kernels";
    }
  }
  Isa isa() const { return GetParam(); }

  // The tier's output for `o` against the definition and the scalar twin.
  void expect_matches(const Batch& b, const RunOptions& o, const std::string& what) {
    const std::vector<float> got = run_kernel(b, isa(), o);
    const float tolerance = tolerance_for(b.shape_.dtype, kWindowTolerance);
    EXPECT_LE(max_abs_error(got, window_reference(b, o.layer, o.attn)), tolerance) << what;
    EXPECT_LE(max_abs_error(got, run_kernel(b, Isa::kScalar, o)), tolerance) << what;
  }
};

TEST_P(PagedAttentionWindowTier, WindowedDecodeRowsMatchTheDefinitionAndTheScalarTwin) {
  for (const int32_t context : {1, 100, 128, 129, 300, 1000, 4096}) {
    const Batch b(Shape{}, {SeqSpec{.num_cached = context - 1, .num_rows = 1, .seed = 3}},
                  Placement::kShuffled);
    for (const int32_t window : {1, 16, 100, 128, 129, 200, 4096, 5000}) {
      expect_matches(b, RunOptions{.attn = {.window = window}},
                     "context " + std::to_string(context) + " window " + std::to_string(window));
    }
  }
}

TEST_P(PagedAttentionWindowTier, WindowedPrefillChunksMatchWhereRowsOfATileStartApart) {
  const SeqSpec cases[] = {{0, 37, 4},    {0, 200, 5},  {100, 50, 6},  {120, 20, 7},
                           {300, 129, 8}, {250, 40, 9}, {1000, 64, 10}};
  for (const SeqSpec& s : cases) {
    const Batch b(Shape{}, {s}, Placement::kShuffled);
    for (const int32_t window : {1, 16, 50, 128, 130, 257}) {
      expect_matches(b, RunOptions{.attn = {.window = window}},
                     "cached " + std::to_string(s.num_cached) + " rows " +
                         std::to_string(s.num_rows) + " window " + std::to_string(window));
    }
  }
}

TEST_P(PagedAttentionWindowTier, SinksJoinEveryHeadsSoftmaxWithAndWithoutAWindow) {
  const Batch b(Shape{}, mixed_batch(), Placement::kShuffled);
  const std::vector<float> sinks = some_sinks(b.shape_.num_heads);
  for (const int32_t window : {0, 100, 128}) {
    for (const int threads : {1, 3}) {
      expect_matches(
          b, RunOptions{.num_threads = threads, .attn = {.window = window, .sinks = sinks.data()}},
          "window " + std::to_string(window) + ", " + std::to_string(threads) + " threads");
    }
  }
}

// gemma2's soft-capping: caps below, among and far above the scores (~N(0,
// 1) times the scale here, so 0.05 caps every score hard and 50 barely).
TEST_P(PagedAttentionWindowTier, SoftCappedScoresMatchWithAndWithoutAWindow) {
  const Batch b(Shape{}, mixed_batch(), Placement::kShuffled);
  for (const float cap : {0.05f, 0.5f, 50.0f}) {
    for (const int32_t window : {0, 100}) {
      expect_matches(b, RunOptions{.num_threads = 2, .attn = {.window = window, .softcap = cap}},
                     "cap " + std::to_string(cap) + " window " + std::to_string(window));
    }
  }
  // A cap that bites changes the output; an enormous one changes nothing measurable.
  const std::vector<float> plain = run_kernel(b, isa(), RunOptions{});
  EXPECT_GT(max_abs_error(run_kernel(b, isa(), RunOptions{.attn = {.softcap = 0.05f}}), plain), 1e-3f);
  EXPECT_LE(max_abs_error(run_kernel(b, isa(), RunOptions{.attn = {.softcap = 1e6f}}), plain), kWindowTolerance);
}

TEST_P(PagedAttentionWindowTier, EveryGqaRatioAndHeadDimMatchesWithWindowAndSinks) {
  const Shape shapes[] = {{.num_heads = 2, .num_kv_heads = 2},
                          {.num_heads = 4, .num_kv_heads = 2},
                          {.num_heads = 8, .num_kv_heads = 2},
                          {.num_heads = 16, .num_kv_heads = 2},
                          {.num_heads = 64, .num_kv_heads = 8},  // gpt-oss
                          {.num_heads = 4, .num_kv_heads = 2, .head_dim = 8},
                          {.num_heads = 4, .num_kv_heads = 2, .head_dim = 40},
                          {.num_heads = 4, .num_kv_heads = 2, .head_dim = 128}};
  for (const Shape& shape : shapes) {
    const Batch b(shape, {{300, 1, 21}, {140, 24, 22}, {0, 9, 23}}, Placement::kShuffled);
    const std::vector<float> sinks = some_sinks(shape.num_heads);
    expect_matches(b, RunOptions{.attn = {.window = 128, .sinks = sinks.data()}},
                   std::to_string(shape.num_heads) + " heads x " + std::to_string(shape.head_dim));
  }
}

TEST_P(PagedAttentionWindowTier, EveryKvDtypeMatchesWithAWindow) {
  for (const GgmlType dtype : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0}) {
    const Batch b(Shape{.dtype = dtype}, {{1000, 1, 41}, {150, 30, 42}}, Placement::kShuffled);
    const std::vector<float> sinks = some_sinks(b.shape_.num_heads);
    expect_matches(b, RunOptions{.attn = {.window = 77, .sinks = sinks.data()}},
                   std::string(ggml_type_name(dtype)));
  }
}

TEST_P(PagedAttentionWindowTier, ASinkFarAboveGivesZerosAndFarBelowChangesNoBits) {
  const Batch b(Shape{}, {{500, 1, 51}, {0, 40, 52}}, Placement::kShuffled);
  const int32_t heads = b.shape_.num_heads;
  for (const int32_t window : {0, 100}) {
    const std::vector<float> plain = run_kernel(b, isa(), RunOptions{.attn = {.window = window}});
    const std::vector<float> below(static_cast<size_t>(heads), -200.0f);
    EXPECT_TRUE(same_bits(
        run_kernel(b, isa(), RunOptions{.attn = {.window = window, .sinks = below.data()}}),
        plain));
    const std::vector<float> above(static_cast<size_t>(heads), 200.0f);
    for (const float x :
         run_kernel(b, isa(), RunOptions{.attn = {.window = window, .sinks = above.data()}})) {
      ASSERT_EQ(x, 0.0f);
    }
    for (const float sink : {-30.0f, 30.0f}) {
      const std::vector<float> sinks(static_cast<size_t>(heads), sink);
      expect_matches(b, RunOptions{.attn = {.window = window, .sinks = sinks.data()}},
                     "sink " + std::to_string(sink));
    }
  }
}

TEST_P(PagedAttentionWindowTier, ThreadCountAndSplitKDoNotChangeWindowedBits) {
  const Batch b(Shape{}, mixed_batch(), Placement::kShuffled);
  const std::vector<float> sinks = some_sinks(b.shape_.num_heads);
  for (const int32_t window : {100, 128, 300}) {
    const AttnLayerOptions attn{.window = window, .sinks = sinks.data()};
    const std::vector<float> base =
        run_kernel(b, isa(), RunOptions{.num_threads = 1, .split = SplitK::kNever, .attn = attn});
    for (const int threads : {1, 2, 3}) {
      for (const SplitK split : {SplitK::kAuto, SplitK::kAlways, SplitK::kNever}) {
        const RunOptions o{.num_threads = threads, .split = split, .attn = attn};
        EXPECT_TRUE(same_bits(run_kernel(b, isa(), o), base))
            << "window " << window << ", " << threads << " threads, split "
            << static_cast<int>(split);
      }
    }
    EXPECT_TRUE(same_bits(
        run_kernel(
            b, isa(),
            RunOptions{
                .num_threads = 2, .split = SplitK::kAlways, .max_split_slots = 100, .attn = attn}),
        base))
        << "window " << window << ", some units split";
  }
}

TEST_P(PagedAttentionWindowTier, TheRestOfTheBatchDoesNotChangeAWindowedRowsBits) {
  const SeqSpec decode{2000, 1, 61}, prefill{300, 45, 62};
  const Batch alone_decode(Shape{}, {decode}, Placement::kContiguous);
  const Batch alone_prefill(Shape{}, {prefill}, Placement::kContiguous);
  std::vector<SeqSpec> specs = mixed_batch();
  specs.insert(specs.begin() + 3, prefill);
  specs.push_back(decode);
  const Batch crowd(Shape{}, specs, Placement::kShuffled, 5);
  const std::vector<float> sinks = some_sinks(crowd.shape_.num_heads);
  for (const int threads : {1, 3}) {
    const RunOptions o{.num_threads = threads, .attn = {.window = 90, .sinks = sinks.data()}};
    const std::vector<float> out = run_kernel(crowd, isa(), o);
    EXPECT_TRUE(same_bits(rows_of(crowd, out, 3), run_kernel(alone_prefill, isa(), o))) << threads;
    EXPECT_TRUE(
        same_bits(rows_of(crowd, out, specs.size() - 1), run_kernel(alone_decode, isa(), o)))
        << threads;
  }
}

// Points the table entries of blocks wholly before every row's window at
// `id`.
void retarget_blocks_before_windows(Batch& b, int32_t window, BlockId id) {
  for (size_t i = 0; i < b.seqs.size(); ++i) {
    const int32_t blocks_before = first_read(b.seqs[i], window) / kBlockTokens;
    std::fill_n(b.tables[i].begin(), blocks_before, id);
  }
}

// A copy of a block table whose first `num_guarded` entries lie in pages
// that cannot be read: reading any of them faults.
class GuardedTable {
 public:
  GuardedTable(std::span<const BlockId> table, size_t num_guarded) {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const auto pages_for = [&](size_t n) { return (n * sizeof(BlockId) + page - 1) / page * page; };
    const size_t guard_bytes = std::max(page, pages_for(num_guarded));
    bytes_ = guard_bytes + pages_for(table.size() - num_guarded);
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MET_CHECK(base_ != MAP_FAILED, "mmap of {} bytes", bytes_);
    entries_ = reinterpret_cast<BlockId*>(static_cast<uint8_t*>(base_) + guard_bytes) - num_guarded;
    std::copy(table.begin(), table.end(), entries_);
    MET_CHECK(mprotect(base_, guard_bytes, PROT_NONE) == 0, "mprotect");
    size_ = table.size();
  }
  ~GuardedTable() { munmap(base_, bytes_); }
  GuardedTable(const GuardedTable&) = delete;
  GuardedTable& operator=(const GuardedTable&) = delete;
  std::span<const BlockId> span() const { return {entries_, size_}; }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  BlockId* entries_ = nullptr;
  size_t size_ = 0;
};

TEST_P(PagedAttentionWindowTier, BlockTableEntriesBeforeEveryRowsWindowAreNeverRead) {
  const std::vector<SeqSpec> specs = {{4095, 1, 91}, {1000, 64, 92}, {300, 129, 93}, {40, 3, 94}};
  for (const int32_t window : {100, 128}) {
    Batch b(Shape{}, specs, Placement::kShuffled);
    const AttnLayerOptions attn{.window = window};
    const std::vector<float> intact = run_kernel(b, isa(), RunOptions{.attn = attn});
    std::vector<std::unique_ptr<GuardedTable>> guarded;
    for (AttnSeq& seq : b.seqs) {
      const auto before = static_cast<size_t>(first_read(seq, window) / kBlockTokens);
      guarded.push_back(std::make_unique<GuardedTable>(seq.block_table, before));
      seq.block_table = guarded.back()->span();
    }
    for (const RunOptions& o :
         {RunOptions{.num_threads = 1, .split = SplitK::kNever, .attn = attn},
          RunOptions{.num_threads = 3, .split = SplitK::kAlways, .attn = attn}}) {
      EXPECT_TRUE(same_bits(run_kernel(b, isa(), o), intact)) << "window " << window;
    }
  }
}

TEST_P(PagedAttentionWindowTier, BlocksBeforeEveryRowsWindowAreNeverRead) {
  // Window begins on a chunk edge (4096 - 128), inside a chunk's second
  // block (4096 - 100 = 3996) and, for the prefill tiles, spread over a
  // chunk.
  const std::vector<SeqSpec> specs = {{4095, 1, 81}, {1000, 64, 82}, {300, 129, 83}, {40, 3, 84}};
  for (const int32_t window : {100, 128}) {
    Batch b(Shape{}, specs, Placement::kShuffled);
    const std::vector<float> sinks = some_sinks(b.shape_.num_heads);
    const AttnLayerOptions attn{.window = window, .sinks = sinks.data()};
    const std::vector<float> intact = run_kernel(b, isa(), RunOptions{.attn = attn});
    const std::vector<float> want = window_reference(b, 1, attn);
    EXPECT_LE(max_abs_error(intact, want), kWindowTolerance);
    // A block of NaN: any read of it would turn outputs NaN.
    b.cache->write_block(b.spare.front(), std::vector<uint8_t>(static_cast<size_t>(b.cache->block_bytes()), 0xFF));
    retarget_blocks_before_windows(b, window, b.spare.front());
    const RunOptions runs[] = {{.num_threads = 1, .split = SplitK::kNever, .attn = attn},
                               {.num_threads = 3, .split = SplitK::kAlways, .attn = attn},
                               {.num_threads = 2, .split = SplitK::kAuto, .attn = attn}};
    for (const RunOptions& o : runs) {
      EXPECT_TRUE(same_bits(run_kernel(b, isa(), o), intact)) << "NaN blocks, window " << window;
    }
    // An id past the pool: a read would fail the kernel's MET_CHECK (or
    // fault).
    retarget_blocks_before_windows(b, window, BlockId(b.cache->layout().num_blocks + 100000));
    for (const RunOptions& o : runs) {
      EXPECT_TRUE(same_bits(run_kernel(b, isa(), o), intact)) << "bad ids, window " << window;
    }
  }
}

TEST_P(PagedAttentionWindowTier, AWindowCoveringEveryRowChangesNoBits) {
  const Batch b(Shape{}, mixed_batch(), Placement::kShuffled);
  const std::vector<float> plain = run_kernel(b, isa(), RunOptions{.num_threads = 2});
  EXPECT_TRUE(same_bits(
      run_kernel(b, isa(), RunOptions{.num_threads = 2, .attn = {.window = 4096}}), plain));
}

TEST_P(PagedAttentionWindowTier, OnePlanServesWindowedAndFullLayersInTurn) {
  const Shape shape{};
  const Batch first(shape, mixed_batch(), Placement::kShuffled);
  const Batch second(shape, {{700, 1, 71}, {0, 90, 72}, {31, 2, 73}}, Placement::kShuffled);
  const std::vector<float> sinks = some_sinks(shape.num_heads);
  const AttnLayerOptions windowed{.window = 128, .sinks = sinks.data()};
  AttentionScratch scratch(
      AttentionLimits{
          .num_heads = 8, .num_kv_heads = 2, .head_dim = 64, .max_rows = 200, .num_threads = 2},
      isa());
  WorkerPool pool(2);
  for (const Batch* b : {&first, &first, &second, &first}) {
    std::vector<float> out0(b->q.size(), NAN), out1(b->q.size(), NAN);
    pool.run([&](ThreadCtx& ctx) {
      paged_attention(ctx, *b->cache, 0, b->seqs, b->q.data(), 512, 8, shape.scale(), out0.data(),
                      512, scratch, windowed);
      paged_attention(ctx, *b->cache, 1, b->seqs, b->q.data(), 512, 8, shape.scale(), out1.data(),
                      512, scratch);
    });
    EXPECT_LE(max_abs_error(out0, window_reference(*b, 0, windowed)), kWindowTolerance);
    EXPECT_TRUE(same_bits(out1, run_kernel(*b, isa(), RunOptions{.num_threads = 2})));
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, PagedAttentionWindowTier,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

TEST(PagedAttentionOptions, NoCallAllocatesWithOrWithoutWindowAndSinks) {
  const Batch b(Shape{}, mixed_batch(), Placement::kShuffled);
  const Shape& sh = b.shape_;
  const std::vector<float> sinks = some_sinks(sh.num_heads);
  AttentionScratch scratch(AttentionLimits{.num_heads = sh.num_heads,
                                           .num_kv_heads = sh.num_kv_heads,
                                           .head_dim = sh.head_dim,
                                           .max_rows = b.rows,
                                           .num_threads = 1,
                                           .split = SplitK::kAlways});
  std::vector<float> out(b.q.size());
  WorkerPool pool(1);
  ThreadCtx ctx(pool, 0, 1);  // runs on this thread, where allocations are counted
  const int64_t before = testing::num_allocations();
  for (const AttnLayerOptions& attn : {AttnLayerOptions{.window = 128, .sinks = sinks.data()},
                                       AttnLayerOptions{}, AttnLayerOptions{.window = 7}}) {
    paged_attention(ctx, *b.cache, 1, b.seqs, b.q.data(), sh.q_width(), sh.num_heads, sh.scale(),
                    out.data(), sh.q_width(), scratch, attn);
  }
  EXPECT_EQ(testing::num_allocations() - before, 0);
}

}  // namespace
}  // namespace met::cpu
