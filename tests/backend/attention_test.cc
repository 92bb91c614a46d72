// Tests for backend/cpu/kernels/attention.h against the double-precision
// reference (kernels/reference/attention_ref.h), per ISA tier the CPU has
// (others are skipped with a message): decode rows at contexts 1 … 4096,
// prefill chunks with and without a cached prefix, a mixed batch of 8
// sequences, GQA ratios 1/2/4/8, head_dim 8/24/40/64/128/256, every KV
// dtype (Q8_0 keys at head_dim 32 … 256), one plan across layers and a
// replan for a new batch; and
// the invariances: block placement, thread count, split-K on or off, the
// rest of the batch and how a tile's queries are grouped never change a
// row's bits. Windows and sinks: attention_window_test.cc; shared helpers:
// attention_testing.h.
//
// Tolerance: outputs are convex combinations of V values drawn from N(0, 1)
// (|v| < 6). The kernels compute scores, exp and sums in float (the
// reference in double); the observed max error is 1.3e-6 over every case
// here (contexts to 4096, head_dim to 256). kTolerance = 1e-5 is 7x that
// and still catches any wrong position, scale or head (those move outputs
// by ~0.1). With peaked scores (q ~ N(0, 30^2), |score| ~ 100) float
// rounding of the score itself is ~1e-5, hence kPeakedTolerance = 1e-4
// (observed 2.3e-5). F16/BF16 need no more: the reference reads the
// same dequantized K/V (and over Q8_0 keys quantizes the query as the
// kernels do). Q8_0 values weigh tokens by 16-bit codes per block:
// kQ8ValuesTolerance (attention_testing.h).
#include "backend/cpu/kernels/attention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/attention_testing.h"
#include "backend/cpu/kernels/reference/attention_ref.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/worker_pool.h"
#include "core/cpu_features.h"

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
using ::testing::HasSubstr;

constexpr float kTolerance = 1e-5f;
constexpr float kPeakedTolerance = 1e-4f;

std::vector<float> run_reference(const Batch& b, int32_t layer = 1) {
  const Shape& sh = b.shape_;
  std::vector<float> out(b.q.size(), NAN);
  ref::paged_attention(*b.cache, layer, b.seqs, b.q.data(), sh.q_width(), sh.num_heads, sh.scale(),
                       out.data(), sh.q_width());
  return out;
}

class PagedAttentionTier : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU cannot run the " << isa_name(GetParam()) << " kernels";
    }
  }
  Isa isa() const { return GetParam(); }

  void expect_matches_reference(const Shape& shape, const std::vector<SeqSpec>& specs,
                                const std::string& what, RunOptions o = {}) {
    const Batch b(shape, specs, Placement::kShuffled);
    const float err = max_abs_error(run_kernel(b, isa(), o), run_reference(b, o.layer));
    EXPECT_LE(err, tolerance_for(shape.dtype, kTolerance)) << what;
  }
};

TEST_P(PagedAttentionTier, OnePositionGivesItsValueAndTwoGiveTheirSoftmaxBlend) {
  Shape shape{
      .dtype = GgmlType::kF32, .num_heads = 1, .num_kv_heads = 1, .head_dim = 8, .num_layers = 2};
  Batch b(shape, {SeqSpec{.num_cached = 1, .num_rows = 1}}, Placement::kContiguous);
  std::vector<float> k0(8, 0.0f), v0(8), k1(8, 0.0f), v1(8);
  for (int d = 0; d < 8; ++d) v0[d] = static_cast<float>(d), v1[d] = 10.0f;
  k1[0] = 2.0f;
  b.cache->store(1, b.tables[0], 0, k0.data(), v0.data());
  b.cache->store(1, b.tables[0], 1, k1.data(), v1.data());
  std::fill(b.q.begin(), b.q.end(), 0.0f);
  b.q[0] = std::sqrt(8.0f);  // score of position 1: 2 * sqrt(8) / sqrt(8) = 2; of position 0: 0
  const std::vector<float> out = run_kernel(b, isa());
  const double w1 = std::exp(2.0) / (1.0 + std::exp(2.0));
  for (int d = 0; d < 8; ++d) EXPECT_NEAR(out[d], (1 - w1) * d + w1 * 10.0, 1e-5) << d;

  Batch one(shape, {SeqSpec{.num_cached = 0, .num_rows = 1}}, Placement::kContiguous);
  one.cache->store(1, one.tables[0], 0, k1.data(), v0.data());
  EXPECT_EQ(run_kernel(one, isa()), v0);  // weight exactly 1
}

TEST_P(PagedAttentionTier, RowsThatAreNotCausalReadTheWholeSequence) {
  // An encoder's sequence: every row reads all of its positions, so its
  // last row is what a causal run gives and its first row is not.
  for (const int32_t n : {1, 7, 130, 300}) {
    const std::vector<SeqSpec> whole = {{0, n, 51, false}, {0, 3, 52, true}, {0, 20, 53, false}};
    expect_matches_reference(Shape{}, whole, "not causal, " + std::to_string(n) + " rows");
    expect_matches_reference(Shape{}, whole, "not causal, split",
                             RunOptions{.num_threads = 3, .split = SplitK::kAlways});
    const Batch causal(Shape{}, {{0, n, 51, true}}, Placement::kContiguous);
    const Batch full(Shape{}, {{0, n, 51, false}}, Placement::kContiguous);
    const std::vector<float> c = run_kernel(causal, isa()), f = run_kernel(full, isa());
    const size_t w = static_cast<size_t>(Shape{}.q_width());
    EXPECT_LE(max_abs_error(std::vector<float>(f.end() - static_cast<ptrdiff_t>(w), f.end()),
                            std::vector<float>(c.end() - static_cast<ptrdiff_t>(w), c.end())),
              kTolerance);
    if (n > 1) {
      EXPECT_GT(max_abs_error(std::vector<float>(f.begin(), f.begin() + static_cast<ptrdiff_t>(w)),
                              std::vector<float>(c.begin(), c.begin() + static_cast<ptrdiff_t>(w))),
                kTolerance)
          << "row 0 reads past itself";
    }
  }
}

TEST_P(PagedAttentionTier, DecodeRowsMatchReferenceAtEveryContext) {
  for (const int32_t context : {1, 15, 16, 17, 100, 1000, 4096}) {
    expect_matches_reference(Shape{},
                             {SeqSpec{.num_cached = context - 1, .num_rows = 1, .seed = 3}},
                             "context " + std::to_string(context));
  }
}

TEST_P(PagedAttentionTier, PrefillChunksMatchReferenceWithAndWithoutACachedPrefix) {
  const SeqSpec cases[] = {{0, 1, 4},    {0, 37, 5},   {0, 200, 6},
                           {100, 50, 7}, {120, 20, 8}, {300, 129, 9}};
  for (const SeqSpec& s : cases) {
    expect_matches_reference(
        Shape{}, {s},
        "cached " + std::to_string(s.num_cached) + " rows " + std::to_string(s.num_rows));
  }
}

TEST_P(PagedAttentionTier, MixedBatchOfEightSequencesMatchesReference) {
  expect_matches_reference(Shape{}, mixed_batch(), "mixed batch, 1 thread");
  expect_matches_reference(Shape{}, mixed_batch(), "mixed batch, 3 threads",
                           RunOptions{.num_threads = 3});
}

TEST_P(PagedAttentionTier, EveryGqaRatioMatchesReference) {
  for (const int32_t ratio : {1, 2, 4, 8}) {
    const Shape shape{.num_heads = 2 * ratio, .num_kv_heads = 2};
    expect_matches_reference(shape, {{300, 1, 21}, {40, 24, 22}}, "ratio " + std::to_string(ratio));
  }
}

TEST_P(PagedAttentionTier, EveryHeadDimMatchesReference) {
  // 8: stories260K; 24, 40: masked AVX-512 tails; 256: past the unrolled
  // widths (AVX-512's generic scores, V in column blocks).
  for (const int32_t head_dim : {8, 24, 40, 64, 128, 256}) {
    const Shape shape{.num_heads = 4, .num_kv_heads = 2, .head_dim = head_dim};
    expect_matches_reference(shape, {{300, 1, 31}, {40, 24, 32}},
                             "head_dim " + std::to_string(head_dim));
  }
}

TEST_P(PagedAttentionTier, EveryKvDtypeMatchesReference) {
  for (const GgmlType dtype : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0}) {
    const Shape shape{.dtype = dtype};
    expect_matches_reference(shape, {{1000, 1, 41}, {50, 30, 42}},
                             std::string(ggml_type_name(dtype)));
  }
}

// Q8_0 keys in every head size their layout takes: one 32-block (heads
// whose keys are not 64-byte aligned), three, and many, with GQA.
TEST_P(PagedAttentionTier, Q8_0KeysMatchReferenceAtEveryHeadDim) {
  for (const int32_t head_dim : {32, 96, 128, 256}) {
    const Shape shape{.dtype = GgmlType::kQ8_0, .num_heads = 8, .num_kv_heads = 2, .head_dim = head_dim};
    expect_matches_reference(shape, {{300, 1, 33}, {40, 24, 34}, {0, 17, 35}},
                             "head_dim " + std::to_string(head_dim));
  }
}

// Q8_0 values (q8_values.h): with every score 0 (zero queries) every tier's
// softmax weights are exactly 1, so each tier's values pass must give the
// scalar twin's bits: the same 16-bit weight codes per block, the same
// integer sums and the same fmas, at every head size the layout takes.
TEST_P(PagedAttentionTier, Q8_0ValuesGiveTheScalarTwinsBitsUnderEqualWeights) {
  for (const int32_t head_dim : {32, 64, 96, 256}) {
    const Shape shape{.dtype = GgmlType::kQ8_0, .num_heads = 8, .num_kv_heads = 2, .head_dim = head_dim};
    Batch b(shape, {{300, 1, 36}, {40, 24, 37}, {0, 17, 38}}, Placement::kShuffled);
    std::fill(b.q.begin(), b.q.end(), 0.0f);
    EXPECT_TRUE(same_bits(run_kernel(b, isa()), run_kernel(b, Isa::kScalar))) << "head_dim " << head_dim;
  }
}

TEST_P(PagedAttentionTier, PeakedScoresStayFiniteAndMatchReference) {
  const Shape shape{};
  const Batch b(shape, {{500, 1, 51}, {0, 40, 52}}, Placement::kShuffled, 7, /*q_sigma=*/30.0f);
  EXPECT_LE(max_abs_error(run_kernel(b, isa()), run_reference(b)), kPeakedTolerance);
}

TEST_P(PagedAttentionTier, BlockPlacementDoesNotChangeBits) {
  const Batch contiguous(Shape{}, mixed_batch(), Placement::kContiguous);
  const Batch shuffled(Shape{}, mixed_batch(), Placement::kShuffled, 99);
  EXPECT_TRUE(same_bits(run_kernel(contiguous, isa()), run_kernel(shuffled, isa())));
}

TEST_P(PagedAttentionTier, ThreadCountAndSplitKDoNotChangeBits) {
  const Batch b(Shape{}, mixed_batch(), Placement::kShuffled);
  const std::vector<float> base =
      run_kernel(b, isa(), RunOptions{.num_threads = 1, .split = SplitK::kNever});
  for (const int threads : {1, 2, 3}) {
    for (const SplitK split : {SplitK::kAuto, SplitK::kAlways, SplitK::kNever}) {
      const RunOptions o{.num_threads = threads, .split = split};
      EXPECT_TRUE(same_bits(run_kernel(b, isa(), o), base))
          << threads << " threads, split " << static_cast<int>(split);
    }
  }
  // Too few slots for every unit: some split, some whole.
  EXPECT_TRUE(same_bits(
      run_kernel(b, isa(),
                 RunOptions{.num_threads = 2, .split = SplitK::kAlways, .max_split_slots = 100}),
      base));
}

TEST_P(PagedAttentionTier, TheRestOfTheBatchDoesNotChangeARowsBits) {
  const SeqSpec decode{2000, 1, 61}, prefill{300, 45, 62};
  const Batch alone_decode(Shape{}, {decode}, Placement::kContiguous);
  const Batch alone_prefill(Shape{}, {prefill}, Placement::kContiguous);
  std::vector<SeqSpec> specs = mixed_batch();
  specs.insert(specs.begin() + 3, prefill);
  specs.push_back(decode);
  const Batch crowd(Shape{}, specs, Placement::kShuffled, 5);
  for (const int threads : {1, 3}) {
    const RunOptions o{.num_threads = threads};
    const std::vector<float> out = run_kernel(crowd, isa(), o);
    EXPECT_TRUE(same_bits(rows_of(crowd, out, 3), run_kernel(alone_prefill, isa(), o))) << threads;
    EXPECT_TRUE(
        same_bits(rows_of(crowd, out, specs.size() - 1), run_kernel(alone_decode, isa(), o)))
        << threads;
  }
}

// A kernel may work on several queries of a tile at once (AVX-512 pairs
// them to share K, and groups four of a wider head; with F16 keys it scores
// two blocks at once for the queries that read both, four at a time); a
// row's bits must not depend on its neighbours. With 2 to 5 heads per kv
// head, the last row of a 2-row chunk is grouped unlike the same row decoded
// alone (5 heads: the chunk's 10 queries go in fours 4, 4, 2, the last
// row's five split 3 | 2 across two of them, the row alone in 4, 1); 303
// cached: the row reads one block its neighbour does not, so in the chunk
// its last two blocks go one by one (the block kernel) and alone in a pair
// (the pair kernel).
TEST_P(PagedAttentionTier, HowQueriesAreGroupedDoesNotChangeARowsBits) {
  for (const GgmlType dtype : {GgmlType::kF16, GgmlType::kQ8_0}) {
    for (const int32_t head_dim : {64, 128, 256}) {
      for (const int32_t heads : {2, 3, 4, 5}) {
        const Shape shape{.dtype = dtype, .num_heads = heads, .num_kv_heads = 1, .head_dim = head_dim};
        for (const int32_t cached : {300, 303}) {
          const Batch chunk(shape, {{cached, 2, 81}}, Placement::kContiguous);
          const Batch alone(shape, {{cached + 1, 1, 81}}, Placement::kContiguous);
          const std::vector<float> out = run_kernel(chunk, isa());
          const std::vector<float> last(out.begin() + shape.q_width(), out.end());
          EXPECT_TRUE(same_bits(last, run_kernel(alone, isa())))
              << ggml_type_name(dtype) << " head_dim " << head_dim << " heads " << heads << " cached " << cached;
        }
      }
    }
  }
}

TEST_P(PagedAttentionTier, OnePlanServesEveryLayerAndANewBatchGetsANewPlan) {
  const Shape shape{};
  const Batch first(shape, mixed_batch(), Placement::kShuffled);
  const Batch second(shape, {{700, 1, 71}, {0, 90, 72}, {31, 2, 73}}, Placement::kShuffled);
  AttentionScratch scratch(
      AttentionLimits{
          .num_heads = 8, .num_kv_heads = 2, .head_dim = 64, .max_rows = 200, .num_threads = 2},
      isa());
  WorkerPool pool(2);
  for (const Batch* b : {&first, &first, &second, &first}) {
    std::vector<float> out0(b->q.size(), NAN), out1(b->q.size(), NAN);
    pool.run([&](ThreadCtx& ctx) {
      paged_attention(ctx, *b->cache, 0, b->seqs, b->q.data(), 512, 8, shape.scale(), out0.data(),
                      512, scratch);
      paged_attention(ctx, *b->cache, 1, b->seqs, b->q.data(), 512, 8, shape.scale(), out1.data(),
                      512, scratch);
    });
    EXPECT_LE(max_abs_error(out0, run_reference(*b, 0)), kTolerance);
    EXPECT_LE(max_abs_error(out1, run_reference(*b, 1)), kTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, PagedAttentionTier,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

TEST(AttentionPlan, AutoSplitSpreadsALongDecodeOverThreadsOnly) {
  const Batch b(Shape{}, {{4095, 1, 1}}, Placement::kContiguous);
  const Shape sh{};
  const auto limits = [&](int threads) {
    return AttentionLimits{.num_heads = sh.num_heads,
                           .num_kv_heads = sh.num_kv_heads,
                           .head_dim = sh.head_dim,
                           .max_rows = 1,
                           .num_threads = threads};
  };
  AttentionScratch one(limits(1));
  ASSERT_TRUE(one.plan(b.seqs).ok());
  EXPECT_EQ(one.num_split_units(), 0);
  EXPECT_EQ(one.num_items(), 2);  // one per kv head
  AttentionScratch four(limits(4));
  ASSERT_TRUE(four.plan(b.seqs).ok());
  EXPECT_EQ(four.num_split_units(), 2);
  EXPECT_EQ(four.num_items(), 2 * 4096 / kAttnChunkTokens);
}

TEST(AttentionPlan, RejectsBatchesOutsideItsLimitsWithAClearError) {
  const std::vector<BlockId> table(4, BlockId(0));  // 64 positions
  AttentionScratch scratch(
      AttentionLimits{.num_heads = 4, .num_kv_heads = 2, .head_dim = 64, .max_rows = 16});
  struct Bad {
    std::vector<AttnSeq> seqs;
    StatusCode code;
    const char* message;
  };
  const Bad cases[] = {
      {{{table, 0, 0, 17}}, StatusCode::kOutOfRange, "past the 16 rows planned for"},
      {{{table, 0, 0, 4}, {table, 0, 3, 2}},
       StatusCode::kInvalidArgument,
       "before the previous seq's end 4"},
      {{{table, 5, 0, 0}}, StatusCode::kInvalidArgument, "seq 0 has 0 rows"},
      {{{table, 63, 0, 2}}, StatusCode::kInvalidArgument, "has 4 blocks for 65 positions"},
  };
  for (const Bad& c : cases) {
    const Status s = scratch.plan(c.seqs);
    EXPECT_EQ(s.code(), c.code) << s.to_string();
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  EXPECT_TRUE(scratch.plan({}).ok());
  EXPECT_EQ(scratch.num_items(), 0);
}

}  // namespace
}  // namespace met::cpu
