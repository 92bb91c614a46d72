// Tests MaskCache: hits return what was stored; the least recently used goes.
#include "grammar/mask_cache.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(MaskCache, EvictsTheLeastRecentlyUsedMask) {
  MaskCache cache(2, 1);
  const uint64_t a[] = {1}, b[] = {2}, c[] = {3};
  cache.insert(10, a);
  cache.insert(20, b);
  ASSERT_EQ(cache.find(10).size(), 1u);  // 10 is now the most recent
  cache.insert(30, c);
  EXPECT_TRUE(cache.find(20).empty());
  EXPECT_EQ(cache.find(10)[0], 1u);
  EXPECT_EQ(cache.find(30)[0], 3u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(MaskCache, ZeroCapacityStoresNothing) {
  MaskCache cache(0, 1);
  const uint64_t a[] = {1};
  cache.insert(1, a);
  EXPECT_TRUE(cache.find(1).empty());
}

}  // namespace
}  // namespace met
