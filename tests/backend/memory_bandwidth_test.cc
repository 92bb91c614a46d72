// Tests for measure_read_bandwidth (src/backend/cpu/memory_bandwidth.h): it
// returns a positive rate for any thread count (the figure itself is a
// benchmark, never asserted).
#include "backend/cpu/memory_bandwidth.h"

#include <gtest/gtest.h>

namespace met::cpu {
namespace {

TEST(MeasureReadBandwidth, ReturnsAPositiveRate) {
  for (int threads : {1, 2, 3}) EXPECT_GT(measure_read_bandwidth(threads, size_t{8} << 20, 1), 0.0);
}

TEST(MeasureReadBandwidth, HandlesABufferSmallerThanAPagePerThread) {
  EXPECT_GT(measure_read_bandwidth(4, 1000, 1), 0.0);
}

}  // namespace
}  // namespace met::cpu
