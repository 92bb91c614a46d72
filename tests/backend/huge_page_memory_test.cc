// Tests for backend/cpu/huge_page_memory.h: HugePageMemory maps zeroed
// memory, 2 MiB aligned and advised for huge pages from 2 MiB up (the
// mapping's "hg" flag in /proc/self/smaps, which the kernel sets whatever
// it later backs the pages with), and moves own it; WeightArena hands out
// aligned, disjoint, zeroed pieces of advised chunks, a large piece a chunk
// of its own. The pools the kernels stream (KV blocks, recurrent state)
// are advised too, and backed when made (prefault). Whether the pages end
// up huge, and what that gains, is the machine's business (bench/, met
// bench), never asserted.
#include "backend/cpu/huge_page_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "backend/cpu/kv_cache.h"
#include "backend/cpu/recurrent_state.h"
#include "testing/memory_map.h"

namespace met::cpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Skips (returns false) where /proc/self/smaps says nothing.
bool expect_advised(const void* p, bool want) {
  const std::optional<bool> advised = testing::advised_for_huge_pages(p);
  if (!advised) return false;
  EXPECT_EQ(*advised, want) << testing::vm_flags_of(p).value_or("?");
  return true;
}

bool all_zero(const uint8_t* p, size_t n) { return std::all_of(p, p + n, [](uint8_t b) { return b == 0; }); }

TEST(HugePageMemory, LargeMappingsAreAlignedZeroedAndAdvised) {
  for (const size_t bytes : {2 * kMiB, 5 * kMiB + 123}) {
    Result<HugePageMemory> m = HugePageMemory::map(bytes);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_NE(m->data(), nullptr);
    EXPECT_EQ(m->size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m->data()) % kHugePageBytes, 0u);
    EXPECT_TRUE(all_zero(m->data(), bytes));
    std::memset(m->data(), 0xab, bytes);  // every byte is ours to write
    if (!expect_advised(m->data(), true) || !expect_advised(m->data() + bytes - 1, true)) {
      GTEST_SKIP() << "/proc/self/smaps is not readable here";
    }
  }
}

TEST(HugePageMemory, SmallMappingsAreZeroedAndNotAdvised) {
  for (const size_t bytes : {size_t{0}, size_t{1}, size_t{4096}, kHugePageBytes - 1}) {
    Result<HugePageMemory> m = HugePageMemory::map(bytes);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->size(), std::max<size_t>(bytes, 1));
    EXPECT_TRUE(all_zero(m->data(), m->size()));
    expect_advised(m->data(), false);
  }
}

TEST(HugePageMemory, AMoveHandsTheMappingOver) {
  Result<HugePageMemory> m = HugePageMemory::map(3 * kMiB);
  ASSERT_TRUE(m.ok());
  uint8_t* data = m->data();
  data[7] = 42;
  HugePageMemory a = std::move(m).value();
  HugePageMemory b;
  b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 3 * kMiB);
  EXPECT_EQ(b.data()[7], 42);
}

TEST(WeightArena, PiecesAreAlignedDisjointAndZeroed) {
  WeightArena arena(4 * kMiB);
  std::vector<std::pair<uint8_t*, size_t>> pieces;
  for (const size_t bytes : {size_t{1}, size_t{64}, size_t{100}, size_t{4096}, size_t{300000}, size_t{1000}}) {
    uint8_t* p = arena.allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % WeightArena::kAlign, 0u) << bytes;
    EXPECT_TRUE(all_zero(p, bytes)) << bytes;
    std::memset(p, static_cast<int>(pieces.size() + 1), bytes);
    pieces.emplace_back(p, bytes);
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto [p, n] = pieces[i];
    EXPECT_TRUE(std::all_of(p, p + n, [&](uint8_t b) { return b == i + 1; })) << "piece " << i << " was overwritten";
  }
  // Back to back in one shared chunk, each rounded up to kAlign.
  for (size_t i = 1; i < pieces.size(); ++i) {
    const size_t rounded = (pieces[i - 1].second + WeightArena::kAlign - 1) / WeightArena::kAlign * WeightArena::kAlign;
    EXPECT_EQ(pieces[i].first, pieces[i - 1].first + rounded) << i;
  }
  EXPECT_EQ(arena.bytes_mapped(), 4 * kMiB);
  expect_advised(pieces[0].first, true);
}

TEST(WeightArena, ALargePieceGetsAChunkOfItsOwnAndTheSharedChunkGoesOn) {
  WeightArena arena(4 * kMiB);
  uint8_t* small = arena.allocate(1000);
  uint8_t* large = arena.allocate(3 * kMiB);  // past a quarter of a chunk
  EXPECT_EQ(arena.bytes_mapped(), 4 * kMiB + 3 * kMiB);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % kHugePageBytes, 0u);
  uint8_t* next = arena.allocate(1000);
  EXPECT_EQ(next, small + 1024);  // still the shared chunk
  for (int i = 0; i < 4; ++i) arena.allocate(kMiB);  // fills it: the last opens another
  EXPECT_EQ(arena.bytes_mapped(), 2 * 4 * kMiB + 3 * kMiB);
  expect_advised(large, true);
}

TEST(TransparentHugePages, TheSelectedModeIsTheBracketedWord) {
  EXPECT_EQ(selected_thp_mode("always [madvise] never"), "madvise");
  EXPECT_EQ(selected_thp_mode("[always] madvise never\n"), "always");
  EXPECT_EQ(selected_thp_mode("always madvise [never]"), "never");
  EXPECT_EQ(selected_thp_mode("always madvise never"), "");
  EXPECT_EQ(selected_thp_mode(""), "");
  EXPECT_EQ(selected_thp_mode("] [x"), "");
  const std::string mode = transparent_huge_page_mode();
  if (mode.empty()) GTEST_SKIP() << "/sys/kernel/mm/transparent_hugepage/enabled is not readable here";
  EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never") << mode;
}

TEST(StreamedPools, TheKvPoolAndTheRecurrentStateAreAdvised) {
  KvLayout kv{GgmlType::kF16, 4, 2, 64, 256};  // 4 MiB
  Result<KvCache> cache = KvCache::create(kv);
  ASSERT_TRUE(cache.ok()) << cache.status().to_string();
  RecurrentLayout rec{2, 1024, 256 * 1024, 4, 4, 0, 0};  // 8 MiB
  Result<RecurrentState> state = RecurrentState::create(rec);
  ASSERT_TRUE(state.ok()) << state.status().to_string();
  if (!expect_advised(cache->data(), true) || !expect_advised(state->ssm(StateSlotId(3), 1), true)) {
    GTEST_SKIP() << "/proc/self/smaps is not readable here";
  }
}

// prefault() backs every page now: a VM's host may back memory it took
// back at about 150 MB a second (measured here: first touch of 1 GiB
// 6.1-7.5 s after a pause, 0.2-0.4 s right after another process used
// it), which a step touching a fresh page would wait for.
TEST(HugePageMemory, PrefaultBacksEveryPage) {
  Result<HugePageMemory> m = HugePageMemory::map(6 * kMiB + 4096);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const std::optional<double> before = testing::resident_share(m->data(), m->size());
  if (!before) GTEST_SKIP() << "mincore says nothing here";
  EXPECT_LT(*before, 1.0);
  m->prefault();
  EXPECT_EQ(testing::resident_share(m->data(), m->size()), 1.0);
  EXPECT_TRUE(all_zero(m->data(), m->size()));
}

// The pools steps write into are backed when they are made, so the first
// steps that reach a block or a state slot do not wait for the kernel (or a
// VM's host) to back it: 16 clients' first tokens waited 2.4 s for that on
// the qwen35 medium fixture after a pause.
TEST(StreamedPools, TheKvPoolAndTheRecurrentStateAreBackedWhenMade) {
  KvLayout kv{GgmlType::kF16, 4, 2, 64, 256};  // 4 MiB
  Result<KvCache> cache = KvCache::create(kv);
  ASSERT_TRUE(cache.ok()) << cache.status().to_string();
  const std::optional<double> kv_share =
      testing::resident_share(cache->data(), static_cast<size_t>(kv.num_blocks * cache->block_bytes()));
  if (!kv_share) GTEST_SKIP() << "mincore says nothing here";
  EXPECT_EQ(*kv_share, 1.0);
  RecurrentLayout rec{2, 1024, 256 * 1024, 4, 4, 0, 0};  // 8 MiB
  Result<RecurrentState> state = RecurrentState::create(rec);
  ASSERT_TRUE(state.ok()) << state.status().to_string();
  for (int32_t slot = 0; slot < rec.num_slots; ++slot) {
    for (int32_t layer = 0; layer < rec.num_layers; ++layer) {
      EXPECT_EQ(testing::resident_share(state->ssm(StateSlotId(slot), layer), rec.ssm_floats * sizeof(float)), 1.0)
          << "slot " << slot << " layer " << layer;
    }
  }
}

}  // namespace
}  // namespace met::cpu
