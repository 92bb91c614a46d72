// Tests for strong ids (src/core/ids.h).
#include "core/ids.h"

#include <type_traits>
#include <unordered_set>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(StrongId, DistinctIdKindsDoNotConvert) {
  static_assert(!std::is_convertible_v<BlockId, SeqId>);
  static_assert(!std::is_convertible_v<int32_t, BlockId>);
  EXPECT_EQ(BlockId(3).value(), 3);
}

TEST(StrongId, ComparesAndHashesByValue) {
  EXPECT_LT(BlockId(1), BlockId(2));
  EXPECT_EQ(SeqId(7), SeqId(7));
  std::unordered_set<Ticket> tickets = {Ticket(1), Ticket(2), Ticket(1)};
  EXPECT_EQ(tickets.size(), 2u);
}

TEST(StrongId, TheReleasedBlockSentinelIsNoOrdinaryBlockId) {
  EXPECT_NE(kReleasedBlock, BlockId(0));
  EXPECT_GT(kReleasedBlock, BlockId(1 << 30));  // past any pool's ids, never negative
}

}  // namespace
}  // namespace met
