// StreamPublisher: the engine's batch of streams touched in one tick. A sink
// stages its events on its stream and enlists the stream here once; after
// the tick the engine publishes each enlisted stream once (one lock and one
// wake-up per request per tick, whatever the number of tokens) and learns
// which clients were cut off for reading too slowly.
// Invariants: a stream is enlisted at most once per batch; after publish()
// the batch is empty and every staged event has reached its client's queue.
// Threading: engine thread only. Tested by tests/request/stream_publisher_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "request/response_stream.h"

namespace met {

class StreamPublisher {
 public:
  explicit StreamPublisher(StreamLimits limits = {}) : limits_(limits) {}

  const StreamLimits& limits() const { return limits_; }
  // `stream` has staged events for the next publish().
  void enlist(const std::shared_ptr<ResponseStream>& stream);
  // Publishes every enlisted stream; returns how many clients were cut off.
  int32_t publish(TimePoint now);
  bool empty() const { return batch_.empty(); }

 private:
  StreamLimits limits_;
  std::vector<std::shared_ptr<ResponseStream>> batch_;
};

}  // namespace met
