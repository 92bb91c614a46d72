// Tests for parallel_for (src/core/parallel_for.h).
#include "core/parallel_for.h"

#include <atomic>
#include <vector>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(ParallelFor, VisitsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    for (int64_t n : {0, 1, 5, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, threads, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1) << "threads " << threads << " n " << n;
    }
  }
}

TEST(ParallelFor, DefaultThreadCountIsPositive) { EXPECT_GE(default_num_threads(), 1); }

}  // namespace
}  // namespace met
