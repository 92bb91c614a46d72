// Tests for backend/cpu/kv_cache.h: layout validation and sizing errors,
// block geometry, store/load round trips per dtype (exact for F32; for F16,
// BF16 and Q8_0 exactly the bytes quantize_row writes, and Q8_0 within its
// half-step error bound), F16 and Q8_0 keys' tokens-in-lanes layouts
// (f16_keys.h, q8_keys.h), Q8_0 values' token pairs in lanes (q8_values.h,
// with their weight codes) and the query quantization the kernels use with
// Q8_0 keys, copy_slots, stores
// touching only their own slot, and block()
// spans that are exactly block_bytes, disjoint, aligned, and carry a
// sequence's K/V when copied (spill save/restore).
#include "backend/cpu/block_tokens.h"
#include "backend/cpu/f16_keys.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/q8_keys.h"
#include "backend/cpu/q8_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor/row_kernels.h"
#include "tensor/tensor_testing.h"

namespace met::cpu {
namespace {

using ::testing::HasSubstr;

KvLayout layout_of(GgmlType dtype, int32_t layers, int32_t heads, int32_t head_dim,
                   int32_t blocks) {
  return KvLayout{.dtype = dtype,
                  .num_layers = layers,
                  .num_kv_heads = heads,
                  .head_dim = head_dim,
                  .num_blocks = blocks};
}

using testing::gaussian;

std::vector<BlockId> shuffled_blocks(int32_t n, uint32_t seed) {
  std::vector<BlockId> ids;
  for (int32_t i = 0; i < n; ++i) ids.emplace_back(i);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
  return ids;
}

struct BadLayout {
  KvLayout layout;
  StatusCode code;
  const char* message;
};

TEST(KvCache, CreateRejectsLayoutsItCannotHoldWithAClearError) {
  const BadLayout cases[] = {
      {layout_of(GgmlType::kQ4_0, 1, 1, 64, 1), StatusCode::kInvalidArgument,
       "dtype q4_0 is not supported"},
      {layout_of(GgmlType::kQ8_0, 1, 1, 48, 1), StatusCode::kInvalidArgument,
       "q8_0 needs head_dim a multiple of 32"},
      {layout_of(GgmlType::kF16, 1, 1, 12, 1), StatusCode::kUnimplemented, "head_dim 12"},
      {layout_of(GgmlType::kF16, 1, 1, 2048, 1), StatusCode::kUnimplemented, "head_dim 2048"},
      {layout_of(GgmlType::kF16, 0, 1, 64, 1), StatusCode::kOutOfRange, "0 layers"},
      {layout_of(GgmlType::kF16, 1, 0, 64, 1), StatusCode::kOutOfRange, "0 kv heads"},
      {layout_of(GgmlType::kF16, 1, 1, 64, 0), StatusCode::kOutOfRange, "0 blocks"},
      {layout_of(GgmlType::kF32, 1024, 1024, 1024, 1 << 30), StatusCode::kOutOfRange, "GiB limit"},
  };
  for (const BadLayout& c : cases) {
    const Result<KvCache> cache = KvCache::create(c.layout);
    ASSERT_FALSE(cache.ok()) << c.message;
    EXPECT_EQ(cache.status().code(), c.code) << cache.status().to_string();
    EXPECT_THAT(cache.status().message(), HasSubstr(c.message));
  }
}

TEST(KvCache, CreateRefusesAPoolLargerThanPhysicalMemory) {
  const int64_t physical = int64_t{sysconf(_SC_PHYS_PAGES)} * sysconf(_SC_PAGESIZE);
  const KvLayout one = layout_of(GgmlType::kF32, 32, 8, 128, 1);
  const int64_t block = kv_block_bytes(one).value();
  if (physical + block > kMaxKvCacheBytes) GTEST_SKIP() << "this machine has over 1 TiB of memory";
  KvLayout layout = one;
  layout.num_blocks = static_cast<int32_t>(physical / block + 1);
  const Result<KvCache> cache = KvCache::create(layout);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(cache.status().message(), HasSubstr("exceeds this machine's"));
}

TEST(KvCache, SizesFollowTheLayout) {
  const KvLayout f16 = layout_of(GgmlType::kF16, 2, 4, 64, 10);
  EXPECT_EQ(kv_block_bytes(f16).value(), 2 * 2 * 4 * 16 * 64 * 2);
  EXPECT_EQ(kv_cache_bytes(f16).value(), 10 * kv_block_bytes(f16).value());
  EXPECT_EQ(kv_bytes_per_token(f16).value(), 2 * 2 * 4 * 64 * 2);
  const KvLayout q8 = layout_of(GgmlType::kQ8_0, 3, 2, 96, 1);
  EXPECT_EQ(kv_bytes_per_token(q8).value(), 2 * 3 * 2 * 3 * 34);
  EXPECT_EQ(kv_block_bytes(q8).value() % kKvBlockAlign, 0);
  EXPECT_GE(kv_block_bytes(q8).value(), 16 * kv_bytes_per_token(q8).value());
}

TEST(KvCache, BlocksForBudgetRoundsDownAndRefusesLessThanOneBlock) {
  const KvLayout layout = layout_of(GgmlType::kF16, 2, 4, 64, 0);
  const int64_t block = kv_block_bytes(layout).value();
  EXPECT_EQ(kv_blocks_for_budget(layout, 10 * block + block / 2).value(), 10);
  const Result<int32_t> none = kv_blocks_for_budget(layout, block - 1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(none.status().message(), HasSubstr("hold no block"));
}

// Stores random K/V at every position of a sequence on shuffled blocks and
// returns what load() gives back, next to what was stored.
struct RoundTrip {
  std::vector<float> stored, loaded;
};

RoundTrip round_trip(GgmlType dtype, int32_t head_dim) {
  const KvLayout layout = layout_of(dtype, 3, 2, head_dim, 8);
  KvCache cache = KvCache::create(layout).value();
  const std::vector<BlockId> table = shuffled_blocks(8, 1);
  const int32_t width = 2 * head_dim, positions = 8 * cpu::kBlockTokens;
  RoundTrip rt;
  rt.stored = gaussian(static_cast<size_t>(3 * positions * 2 * width), 2);
  rt.loaded.resize(rt.stored.size());
  for (int32_t layer = 0; layer < 3; ++layer) {
    for (int32_t pos = 0; pos < positions; ++pos) {
      const float* k = rt.stored.data() + ((layer * positions + pos) * 2) * width;
      cache.store(layer, table, pos, k, k + width);
    }
  }
  for (int32_t layer = 0; layer < 3; ++layer) {
    for (int32_t pos = 0; pos < positions; ++pos) {
      float* k = rt.loaded.data() + ((layer * positions + pos) * 2) * width;
      cache.load(layer, table, pos, k, k + width);
    }
  }
  return rt;
}

TEST(KvCache, F32RoundTripIsExact) {
  const RoundTrip rt = round_trip(GgmlType::kF32, 64);
  EXPECT_EQ(rt.loaded, rt.stored);
}

TEST(KvCache, F16AndBf16RoundTripsRoundEachValueToNearest) {
  const RoundTrip f16 = round_trip(GgmlType::kF16, 8);
  const RoundTrip bf16 = round_trip(GgmlType::kBF16, 128);
  for (size_t i = 0; i < f16.stored.size(); ++i) {
    ASSERT_EQ(f16.loaded[i], fp16_to_f32(f32_to_fp16(f16.stored[i]))) << i;
  }
  for (size_t i = 0; i < bf16.stored.size(); ++i) {
    ASSERT_EQ(bf16.loaded[i], bf16_to_f32(f32_to_bf16(bf16.stored[i]))) << i;
  }
}

// Q8_0 keeps each value of a 32-block within half a step (d / 2, d = max|x|
// / 127) plus the fp16 rounding of d (at most 127 * d * 2^-11); the bytes
// are exactly the reference quantizer's.
TEST(KvCache, Q8_0RoundTripStaysWithinHalfAStep) {
  const RoundTrip rt = round_trip(GgmlType::kQ8_0, 64);
  for (size_t b = 0; b < rt.stored.size(); b += 32) {
    float amax = 0.0f;
    for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::fabs(rt.stored[i]));
    const float d = amax / 127.0f;
    std::vector<uint8_t> bytes(34);
    std::vector<float> expect(32);
    ::met::ref::quantize_row_q8_0(rt.stored.data() + b, bytes.data(), 32);
    ::met::ref::dequantize_row_q8_0(bytes.data(), expect.data(), 32);
    for (size_t i = b; i < b + 32; ++i) {
      ASSERT_EQ(rt.loaded[i], expect[i - b]) << i;
      ASSERT_LE(std::fabs(rt.loaded[i] - rt.stored[i]), d / 2 + 127.0f * d / 2048.0f) << i;
    }
  }
}

TEST(KvCache, StoreWritesOnlyItsOwnSlot) {
  KvCache cache = KvCache::create(layout_of(GgmlType::kF16, 2, 2, 16, 4)).value();
  const std::vector<BlockId> table = {BlockId(2), BlockId(0)};
  const std::vector<float> before = gaussian(64, 3);
  for (int32_t layer = 0; layer < 2; ++layer) {
    for (int32_t pos = 0; pos < 32; ++pos)
      cache.store(layer, table, pos, before.data(), before.data() + 32);
  }
  const std::vector<float> fresh = gaussian(64, 4);
  cache.store(1, table, 17, fresh.data(), fresh.data() + 32);
  std::vector<float> kv(64);
  for (int32_t layer = 0; layer < 2; ++layer) {
    for (int32_t pos = 0; pos < 32; ++pos) {
      cache.load(layer, table, pos, kv.data(), kv.data() + 32);
      const std::vector<float>& want = layer == 1 && pos == 17 ? fresh : before;
      for (size_t i = 0; i < 64; ++i)
        ASSERT_EQ(kv[i], fp16_to_f32(f32_to_fp16(want[i]))) << layer << " " << pos;
    }
  }
}

TEST(KvCache, PoolIsAlignedAndZeroedAndBlockImagesAreDisjoint) {
  for (const int32_t blocks : {3, 600}) {  // 600 blocks of 8 KiB: past 2 MiB, so huge-page aligned
    KvCache cache = KvCache::create(layout_of(GgmlType::kF16, 2, 2, 32, blocks)).value();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(cache.data()) %
                  (cache.total_bytes() >= (2 << 20) ? (2 << 20) : 64),
              0u);
    std::vector<uint8_t> image(static_cast<size_t>(cache.block_bytes()));
    for (int32_t b = 0; b < blocks; ++b) {
      cache.read_block(BlockId(b), image);
      ASSERT_TRUE(std::all_of(image.begin(), image.end(), [](uint8_t x) { return x == 0; })) << b;  // zeroed
    }
    std::vector<uint8_t> ones(image.size(), 0x11);
    cache.write_block(BlockId(1), ones);
    for (int32_t b = 0; b < 3; ++b) {
      cache.read_block(BlockId(b), image);
      EXPECT_EQ(image, b == 1 ? ones : std::vector<uint8_t>(image.size(), 0)) << b;
    }
  }
}

// Decode attention reads a kv head's rows block after block: the rows of a
// head in block b + 1 follow those in block b (block_stride apart), and
// each (layer, K|V, head) has its own run of every block's rows.
TEST(KvCache, AHeadsRowsOfConsecutiveBlocksAreConsecutive) {
  KvCache cache = KvCache::create(layout_of(GgmlType::kF32, 2, 3, 8, 4)).value();
  EXPECT_EQ(cache.block_stride(), 16 * cache.row_bytes());
  const std::vector<BlockId> table = {BlockId(0), BlockId(1), BlockId(2), BlockId(3)};
  std::vector<float> k(24), v(24);
  for (int32_t pos = 0; pos < 64; ++pos) {
    std::fill(k.begin(), k.end(), static_cast<float>(pos));
    std::fill(v.begin(), v.end(), static_cast<float>(-pos));
    cache.store(1, table, pos, k.data(), v.data());
  }
  for (int32_t h = 0; h < 3; ++h) {
    const auto* keys = reinterpret_cast<const float*>(cache.data() + cache.k_offset(1, h));
    const auto* values = reinterpret_cast<const float*>(cache.data() + cache.v_offset(1, h));
    for (int32_t pos = 0; pos < 64; ++pos) {
      ASSERT_EQ(keys[pos * 8], static_cast<float>(pos)) << h << " " << pos;  // one run of 64 rows
      ASSERT_EQ(values[pos * 8 + 7], static_cast<float>(-pos)) << h << " " << pos;
    }
  }
}

TEST(KvCache, CopyingBlockBytesMovesASequence) {
  for (const GgmlType dtype : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0}) {
    KvCache cache = KvCache::create(layout_of(dtype, 2, 3, 32, 6)).value();
    const std::vector<BlockId> from = {BlockId(4), BlockId(1)};
    const std::vector<BlockId> to = {BlockId(0), BlockId(5)};
    const std::vector<float> kv = gaussian(2 * 32 * 96 * 2, 5);
    for (int32_t layer = 0; layer < 2; ++layer) {
      for (int32_t pos = 0; pos < 32; ++pos) {
        const float* k = kv.data() + (layer * 32 + pos) * 192;
        cache.store(layer, from, pos, k, k + 96);
      }
    }
    std::vector<uint8_t> image(
        static_cast<size_t>(cache.block_bytes()));  // a spill save and restore
    for (size_t i = 0; i < from.size(); ++i) {
      cache.read_block(from[i], image);
      cache.write_block(to[i], image);
    }
    std::vector<float> a(192), b(192);
    for (int32_t layer = 0; layer < 2; ++layer) {
      for (int32_t pos = 0; pos < 32; ++pos) {
        cache.load(layer, from, pos, a.data(), a.data() + 96);
        cache.load(layer, to, pos, b.data(), b.data() + 96);
        ASSERT_EQ(a, b) << ggml_type_name(dtype) << " layer " << layer << " pos " << pos;
      }
    }
  }
}

// Q8_0 keys sit tokens in lanes (q8_keys.h), the layout the attention
// kernels read: dims 4j .. 4j + 3 of slot s at byte 64 j + 4 s of the head's
// keys, each the reference quantizer's code + 128, and the 32-block scales
// after the codes, 16 slots a block. Q8_0 values sit token pairs in lanes
// (q8_values.h): dim 32 b + i of slot s at byte 512 b + 64 (s / 2) + 2 i +
// s % 2 of the head's values, the reference's code, the scales after them.
TEST(KvCache, Q8_0KeysAndValuesSitInLanes) {
  constexpr int32_t kHeadDim = 64;
  KvCache cache = KvCache::create(layout_of(GgmlType::kQ8_0, 2, 2, kHeadDim, 3)).value();
  const std::vector<BlockId> table = {BlockId(2), BlockId(0)};
  const std::vector<float> kv = gaussian(4 * kHeadDim, 6);
  cache.store(1, table, 16 + 7, kv.data(), kv.data() + 2 * kHeadDim);  // block 0, slot 7
  for (int32_t h = 0; h < 2; ++h) {
    BlockQ8_0 k[2], v[2];
    ::met::ref::quantize_row_q8_0(kv.data() + h * kHeadDim, reinterpret_cast<uint8_t*>(k), kHeadDim);
    ::met::ref::quantize_row_q8_0(kv.data() + (2 + h) * kHeadDim, reinterpret_cast<uint8_t*>(v), kHeadDim);
    const uint8_t* keys = cache.data() + cache.k_offset(1, h);
    const uint8_t* values = cache.data() + cache.v_offset(1, h);
    for (int32_t d = 0; d < kHeadDim; ++d) {
      ASSERT_EQ(keys[(d / 4) * 64 + 4 * 7 + d % 4], static_cast<uint8_t>(k[d / 32].qs[d % 32] + 128)) << d;
      ASSERT_EQ(static_cast<int8_t>(values[(d / 32) * 512 + 64 * 3 + 2 * (d % 32) + 1]), v[d / 32].qs[d % 32]) << d;
    }
    for (int32_t b = 0; b < 2; ++b) {
      uint16_t scale;
      std::memcpy(&scale, keys + 16 * kHeadDim + 2 * (16 * b + 7), sizeof(scale));
      EXPECT_EQ(scale, k[b].d) << b;
      std::memcpy(&scale, values + 16 * kHeadDim + 2 * (16 * b + 7), sizeof(scale));
      EXPECT_EQ(scale, v[b].d) << b;
    }
  }
}

// put_q8_value and get_q8_value are inverses at every head size the layout
// takes, and copy_q8_value_slots moves the first slots, an odd count too
// (half a slot pair), and leaves the rest.
TEST(Q8Values, RowsGoInAndComeBackAndSlotsCopy) {
  for (const int32_t head_dim : {32, 96}) {
    const int32_t blocks = head_dim / 32;
    std::vector<uint8_t> a(static_cast<size_t>(17 * head_dim), 0), b(a.size(), 0xAB);
    const auto row_of = [&](int32_t s) {
      std::vector<BlockQ8_0> row(static_cast<size_t>(blocks));
      for (int32_t j = 0; j < blocks; ++j) {
        row[static_cast<size_t>(j)].d = static_cast<uint16_t>(1000 * s + j);
        for (int32_t i = 0; i < 32; ++i) {
          row[static_cast<size_t>(j)].qs[i] = static_cast<int8_t>(7 * s + 3 * i - 60 * j);
        }
      }
      return row;
    };
    const auto same = [&](const std::vector<BlockQ8_0>& x, const std::vector<BlockQ8_0>& y) {
      return std::memcmp(x.data(), y.data(), x.size() * sizeof(BlockQ8_0)) == 0;
    };
    for (int32_t s = 0; s < 16; ++s) put_q8_value(row_of(s).data(), head_dim, s, a.data());
    std::vector<BlockQ8_0> back(static_cast<size_t>(blocks));
    for (int32_t s = 0; s < 16; ++s) {
      get_q8_value(a.data(), head_dim, s, back.data());
      ASSERT_TRUE(same(back, row_of(s))) << head_dim << " slot " << s;
    }
    copy_q8_value_slots(a.data(), head_dim, 5, b.data());
    for (int32_t s = 0; s < 16; ++s) {
      get_q8_value(b.data(), head_dim, s, back.data());
      if (s < 5) {
        ASSERT_TRUE(same(back, row_of(s))) << head_dim << " slot " << s;
        continue;
      }
      for (int32_t j = 0; j < blocks; ++j) {
        ASSERT_EQ(back[static_cast<size_t>(j)].d, 0xABAB) << head_dim << " slot " << s;
        for (int32_t i = 0; i < 32; ++i) ASSERT_EQ(back[static_cast<size_t>(j)].qs[i], static_cast<int8_t>(0xAB));
      }
    }
  }
}

// A weight's 16-bit code rounds half to even, as the vector converts do,
// and a NaN or a value past the range (non-finite cache bytes) gives 0.
TEST(Q8Values, WeightCodesRoundToNearestEven) {
  EXPECT_EQ(q8_value_weight_code(32767.0f), 32767);
  EXPECT_EQ(q8_value_weight_code(32767.004f), 32767);  // the largest weight, an ulp over
  EXPECT_EQ(q8_value_weight_code(-32767.0f), -32767);
  EXPECT_EQ(q8_value_weight_code(2.5f), 2);
  EXPECT_EQ(q8_value_weight_code(3.5f), 4);
  EXPECT_EQ(q8_value_weight_code(-0.5f), 0);
  EXPECT_EQ(q8_value_weight_code(std::nanf("")), 0);
  EXPECT_EQ(q8_value_weight_code(40000.0f), 0);
}

// F16 keys sit tokens in lanes (f16_keys.h), the layout the attention
// kernels read: dim d of slot s at byte 32 d + 2 s of the head's keys, the
// reference's f16 bits; values stay F16 rows.
TEST(KvCache, F16KeysSitTokensInLanesAndValuesStayRows) {
  constexpr int32_t kHeadDim = 40;
  KvCache cache = KvCache::create(layout_of(GgmlType::kF16, 2, 2, kHeadDim, 3)).value();
  const std::vector<BlockId> table = {BlockId(2), BlockId(0)};
  const std::vector<float> kv = gaussian(4 * kHeadDim, 16);
  cache.store(1, table, 16 + 7, kv.data(), kv.data() + 2 * kHeadDim);  // block 0, slot 7
  for (int32_t h = 0; h < 2; ++h) {
    const uint8_t* keys = cache.data() + cache.k_offset(1, h);
    for (int32_t d = 0; d < kHeadDim; ++d) {
      uint16_t bits;
      std::memcpy(&bits, keys + 32 * d + 2 * 7, sizeof(bits));
      ASSERT_EQ(bits, f32_to_fp16(kv[static_cast<size_t>(h * kHeadDim + d)])) << h << " dim " << d;
    }
    const uint8_t* values = cache.data() + cache.v_offset(1, h) + 7 * cache.row_bytes();
    for (int32_t d = 0; d < kHeadDim; ++d) {
      uint16_t bits;
      std::memcpy(&bits, values + 2 * d, sizeof(bits));
      ASSERT_EQ(bits, f32_to_fp16(kv[static_cast<size_t>((2 + h) * kHeadDim + d)])) << h << " dim " << d;
    }
  }
}

// put_f16_key and get_f16_key are inverses at any head size (8: stories260K),
// and copy_f16_key_slots moves the first slots and leaves the rest.
TEST(F16Keys, RowsGoInAndComeBackAndSlotsCopy) {
  for (const int32_t head_dim : {8, 64}) {
    std::vector<uint8_t> a(static_cast<size_t>(32 * head_dim), 0), b(a.size(), 0xAB);
    std::vector<uint16_t> row(static_cast<size_t>(head_dim)), back(row.size());
    for (int32_t s = 0; s < 16; ++s) {
      for (int32_t d = 0; d < head_dim; ++d) row[static_cast<size_t>(d)] = static_cast<uint16_t>(1000 * s + d);
      put_f16_key(reinterpret_cast<const uint8_t*>(row.data()), head_dim, s, a.data());
    }
    for (int32_t s = 0; s < 16; ++s) {
      get_f16_key(a.data(), head_dim, s, reinterpret_cast<uint8_t*>(back.data()));
      for (int32_t d = 0; d < head_dim; ++d) ASSERT_EQ(back[static_cast<size_t>(d)], 1000 * s + d) << s << " " << d;
    }
    copy_f16_key_slots(a.data(), head_dim, 5, b.data());
    for (int32_t s = 0; s < 16; ++s) {
      get_f16_key(b.data(), head_dim, s, reinterpret_cast<uint8_t*>(back.data()));
      for (int32_t d = 0; d < head_dim; ++d) {
        ASSERT_EQ(back[static_cast<size_t>(d)], s < 5 ? 1000 * s + d : 0xABAB) << s << " " << d;
      }
    }
  }
}

// A spill image holds every head's keys and values as rows (F16 and Q8_0
// keys, Q8_0 values back in the reference quantizer's rows, the bytes other devices'
// caches hold), and written back into another block it reads as the first.
TEST(KvCache, BlockImagesHoldRowsAndMoveASequence) {
  for (const GgmlType dtype : {GgmlType::kF16, GgmlType::kQ8_0}) {
    KvCache cache = KvCache::create(layout_of(dtype, 2, 2, 64, 3)).value();
    const std::vector<BlockId> from = {BlockId(2)}, to = {BlockId(0)};
    const std::vector<float> kv = gaussian(2 * 16 * 256, 10);
    for (int32_t layer = 0; layer < 2; ++layer) {
      for (int32_t pos = 0; pos < 16; ++pos) {
        const float* k = kv.data() + (layer * 16 + pos) * 256;
        cache.store(layer, from, pos, k, k + 128);
      }
    }
    std::vector<uint8_t> image(static_cast<size_t>(cache.block_bytes()));
    cache.read_block(BlockId(2), image);
    const float* k = kv.data() + (1 * 16 + 9) * 256 + 64;  // layer 1, slot 9, head 1's key
    std::vector<uint8_t> row(static_cast<size_t>(cache.row_bytes()));
    row_kernels_for_isa(dtype, Isa::kScalar).quantize(k, row.data(), 64);
    const int64_t image_key = ((2 * 1 + 0) * 2 + 1) * 16 * cache.row_bytes();  // [layer][K|V][kv_head][slot]
    EXPECT_EQ(std::memcmp(image.data() + image_key + 9 * cache.row_bytes(), row.data(), row.size()), 0)
        << ggml_type_name(dtype);
    row_kernels_for_isa(dtype, Isa::kScalar).quantize(k + 128, row.data(), 64);  // its value
    const int64_t image_value = image_key + 2 * 16 * cache.row_bytes();
    EXPECT_EQ(std::memcmp(image.data() + image_value + 9 * cache.row_bytes(), row.data(), row.size()), 0)
        << ggml_type_name(dtype);
    cache.write_block(BlockId(0), image);
    std::vector<float> a(256), b(256);
    for (int32_t layer = 0; layer < 2; ++layer) {
      for (int32_t pos = 0; pos < 16; ++pos) {
        cache.load(layer, from, pos, a.data(), a.data() + 128);
        cache.load(layer, to, pos, b.data(), b.data() + 128);
        ASSERT_EQ(a, b) << ggml_type_name(dtype) << " layer " << layer << " pos " << pos;
      }
    }
  }
}

// copy_slots (an MTP layer's partial block) moves slots [0, n) of one layer,
// K and V, in every dtype's layout, and leaves the rest of the block: what
// load() gives is what a cache that stored those values directly gives.
TEST(KvCache, CopySlotsMovesTheFirstSlotsOfOneLayer) {
  for (const GgmlType dtype : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0}) {
    KvCache cache = KvCache::create(layout_of(dtype, 2, 2, 32, 2)).value();
    KvCache expect = KvCache::create(layout_of(dtype, 2, 2, 32, 1)).value();
    const std::vector<BlockId> from = {BlockId(1)}, to = {BlockId(0)};
    const std::vector<float> a = gaussian(2 * 16 * 128, 7), b = gaussian(2 * 16 * 128, 8);
    for (int32_t layer = 0; layer < 2; ++layer) {
      for (int32_t pos = 0; pos < 16; ++pos) {
        const size_t at = static_cast<size_t>((layer * 16 + pos) * 128);
        cache.store(layer, from, pos, a.data() + at, a.data() + at + 64);
        cache.store(layer, to, pos, b.data() + at, b.data() + at + 64);
        const float* want = (layer == 1 && pos < 5 ? a.data() : b.data()) + at;
        expect.store(layer, to, pos, want, want + 64);
      }
    }
    cache.copy_slots(1, BlockId(1), BlockId(0), 5);
    std::vector<float> got(128), want(128);
    for (int32_t layer = 0; layer < 2; ++layer) {
      for (int32_t pos = 0; pos < 16; ++pos) {
        cache.load(layer, to, pos, got.data(), got.data() + 64);
        expect.load(layer, to, pos, want.data(), want.data() + 64);
        ASSERT_EQ(got, want) << ggml_type_name(dtype) << " layer " << layer << " pos " << pos;
      }
    }
  }
}

// A query over Q8_0 keys is quantized exactly as quantize_row_q8_0 quantizes
// it, its scales as floats and 128 times each block's code sum beside them.
TEST(Q8Keys, AQueryIsQuantizedAsQ8_0WithItsBias) {
  constexpr int32_t kHeadDim = 96;
  const std::vector<float> q = gaussian(kHeadDim, 9);
  BlockQ8_0 want[3];
  ::met::ref::quantize_row_q8_0(q.data(), reinterpret_cast<uint8_t*>(want), kHeadDim);
  alignas(64) uint8_t buf[q8_query_bytes(kHeadDim)];
  const QueryQ8 got = quantize_query_q8(q.data(), kHeadDim, buf);
  for (int32_t b = 0; b < 3; ++b) {
    int32_t sum = 0;
    for (int32_t i = 0; i < 32; ++i) {
      ASSERT_EQ(got.codes[32 * b + i], want[b].qs[i]) << b << " " << i;
      sum += want[b].qs[i];
    }
    EXPECT_EQ(got.d[b], fp16_to_f32(want[b].d)) << b;
    EXPECT_EQ(got.bias[b], 128 * sum) << b;
  }
}

TEST(KvCache, OffsetsAddressTheSlotsLoadReads) {
  KvCache cache = KvCache::create(layout_of(GgmlType::kF32, 2, 3, 8, 4)).value();
  const std::vector<BlockId> table = {BlockId(3), BlockId(1)};
  std::vector<float> k(24), v(24);
  std::iota(k.begin(), k.end(), 0.0f);
  std::iota(v.begin(), v.end(), 100.0f);
  cache.store(1, table, 21, k.data(), v.data());  // block 1, slot 5
  for (int32_t h = 0; h < 3; ++h) {
    const uint8_t* base = cache.data() + 1 * cache.block_stride() + 5 * cache.row_bytes();
    float got_k[8], got_v[8];
    std::memcpy(got_k, base + cache.k_offset(1, h), sizeof(got_k));
    std::memcpy(got_v, base + cache.v_offset(1, h), sizeof(got_v));
    EXPECT_EQ(got_k[0], k[static_cast<size_t>(h) * 8]);
    EXPECT_EQ(got_v[7], v[static_cast<size_t>(h) * 8 + 7]);
  }
}

TEST(KvCacheDeathTest, StorePastTheBlockTableIsABug) {
  KvCache cache = KvCache::create(layout_of(GgmlType::kF16, 1, 1, 8, 2)).value();
  const std::vector<BlockId> table = {BlockId(0)};
  const std::vector<float> x(8, 1.0f);
  EXPECT_DEATH(cache.store(0, table, 16, x.data(), x.data()),
               "position 16 past a block table of 1 blocks");
  const std::vector<BlockId> bad = {BlockId(2)};
  EXPECT_DEATH(cache.store(0, bad, 0, x.data(), x.data()), "block 2 of 2");
}

}  // namespace
}  // namespace met::cpu
