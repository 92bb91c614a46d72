// ToolCallIds makes reproducible, distinct "call_…" ids from a seed.
#include "chat/output/tool_call_ids.h"

#include <set>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(ToolCallIds, IdsStartWithCallAndAreDistinct) {
  ToolCallIds ids(7);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = ids.next();
    EXPECT_TRUE(id.starts_with("call_")) << id;
    EXPECT_EQ(id.size(), 29u);
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
}

TEST(ToolCallIds, TheSameSeedGivesTheSameIdsAndAnotherSeedOthers) {
  ToolCallIds a(1), b(1), c(2);
  const std::string first = a.next();
  EXPECT_EQ(first, b.next());
  EXPECT_NE(first, c.next());
}

}  // namespace
}  // namespace met
