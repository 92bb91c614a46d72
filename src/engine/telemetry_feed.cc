// TelemetryFeed. Tested by tests/engine/telemetry_feed_test.cc.
#include "engine/telemetry_feed.h"

#include <algorithm>
#include <utility>

namespace met {

TelemetryFeed::Subscription::~Subscription() {
  if (feed_ != nullptr) feed_->num_subscribers_.fetch_sub(1, std::memory_order_relaxed);
}

uint64_t TelemetryFeed::Subscription::read(std::vector<TelemetryRecord>& out, size_t max_records) {
  MutexLock lock(feed_->mu_);
  const uint64_t last = feed_->last_seq_;
  const uint64_t cap = feed_->capacity_;
  uint64_t lost = 0;
  if (last >= cap && next_ + cap <= last) {  // overwritten while this reader was away
    lost = last - cap + 1 - next_;
    next_ = last - cap + 1;
  }
  for (; next_ <= last && max_records > 0; ++next_, --max_records) {
    out.push_back(feed_->ring_[(next_ - 1) % cap]);
  }
  return lost;
}

TelemetryFeed::Subscription TelemetryFeed::subscribe() {
  MutexLock lock(mu_);
  if (ring_.empty()) ring_.resize(capacity_);
  num_subscribers_.fetch_add(1, std::memory_order_relaxed);
  return Subscription(*this, last_seq_ + 1);
}

void TelemetryFeed::stage(int64_t unix_ms, StepTelemetry step) {
  staged_.push_back(TelemetryRecord{0, unix_ms, step});
}

void TelemetryFeed::stage(int64_t unix_ms, RequestTelemetry request) {
  staged_.push_back(TelemetryRecord{0, unix_ms, std::move(request)});
}

void TelemetryFeed::flush() {
  if (staged_.empty()) return;
  {
    MutexLock lock(mu_);
    for (TelemetryRecord& r : staged_) {
      r.seq = ++last_seq_;
      ring_[(r.seq - 1) % capacity_] = std::move(r);
    }
  }
  staged_.clear();
}

}  // namespace met
