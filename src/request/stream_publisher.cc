// StreamPublisher. Tested by tests/request/stream_publisher_test.cc.
#include "request/stream_publisher.h"

namespace met {

void StreamPublisher::enlist(const std::shared_ptr<ResponseStream>& stream) {
  if (stream->awaiting_publish) return;
  stream->awaiting_publish = true;
  batch_.push_back(stream);
}

int32_t StreamPublisher::publish(TimePoint now) {
  int32_t num_cut_off = 0;
  for (std::shared_ptr<ResponseStream>& s : batch_) {
    s->awaiting_publish = false;
    if (s->publish(now, limits_) == PublishOutcome::kCutOff) ++num_cut_off;
  }
  batch_.clear();
  return num_cut_off;
}

}  // namespace met
