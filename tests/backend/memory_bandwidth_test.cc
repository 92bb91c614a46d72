// Tests for measure_read_bandwidth and ReadBandwidthProbe
// (src/backend/cpu/memory_bandwidth.h): they return a positive rate for any
// thread count, a probe every time it is asked (the figure itself is a
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

TEST(ReadBandwidthProbe, MeasuresAgainOverTheSameBuffer) {
  const ReadBandwidthProbe probe(2, size_t{8} << 20);
  for (int i = 0; i < 3; ++i) EXPECT_GT(probe.measure(1), 0.0) << i;
}

}  // namespace
}  // namespace met::cpu
