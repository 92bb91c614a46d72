// ResponseStream. Tested by tests/request/response_stream_test.cc.
#include "request/response_stream.h"

#include <algorithm>
#include <utility>

namespace met {

size_t approx_wire_bytes(const StreamEvent& e) {
  constexpr size_t kFrame = 96;      // an SSE frame's JSON around a delta
  constexpr size_t kPerToken = 8;    // an id in "tokens"/"token_ids"
  constexpr size_t kPerLogprob = 48;  // {"token":…,"logprob":…,"bytes":[…]}
  const auto* d = std::get_if<DeltaEvent>(&e);
  if (d == nullptr) return kFrame * 2;
  size_t n = kFrame + d->text.size() + kPerToken * d->tokens.size();
  for (const auto* list : {&d->logprobs, &d->prompt_logprobs}) {
    for (const TokenLogprob& lp : *list) n += kPerLogprob * (1 + lp.top.size());
  }
  return n;
}

namespace {

// Slots hold a delta with room for a few tokens and a line of text.
void warm(std::vector<StreamEvent>& slots, size_t n) {
  slots.resize(n);
  for (StreamEvent& slot : slots) {
    DeltaEvent& d = std::get<DeltaEvent>(slot);
    d.tokens.reserve(8);
    d.text.reserve(64);
  }
}

}  // namespace

ResponseStream::ResponseStream() {
  warm(staged_, 2);
  MutexLock lock(mu_);
  warm(events_, kWarmSlots);
}

StreamEvent& ResponseStream::next_staged_slot() {
  if (num_staged_ == staged_.size()) staged_.emplace_back();
  return staged_[num_staged_++];
}

void ResponseStream::stage(const DeltaEvent& delta) {
  StreamEvent& slot = next_staged_slot();
  slot = delta;  // into a slot that held a delta: its storage is reused
  staged_bytes_ += approx_wire_bytes(slot);
}

void ResponseStream::stage(StreamEvent event) {
  staged_bytes_ += approx_wire_bytes(event);
  next_staged_slot() = std::move(event);
}

void ResponseStream::push_back_event(StreamEvent& e) {
  if (num_events_ == events_.size()) {
    // Full: unroll the ring so that a new slot can go at the back.
    std::rotate(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(head_), events_.end());
    head_ = 0;
    events_.emplace_back();
  }
  StreamEvent& slot = events_[(head_ + num_events_) % events_.size()];
  if (std::holds_alternative<DeltaEvent>(e)) {
    slot = std::get<DeltaEvent>(e);  // a copy: the staged slot keeps its storage too
  } else {
    slot = std::move(e);
  }
  ++num_events_;
}

void ResponseStream::check_bound(TimePoint now, const StreamLimits& limits, PublishOutcome& outcome) {
  bound_bytes_ = limits.max_pending_bytes;
  if (unsent_bytes_ <= limits.max_pending_bytes) {
    over_since_.reset();
    return;
  }
  if (!over_since_) over_since_ = now;
  if (now - *over_since_ < limits.slow_client_timeout || cancelled()) return;
  cancel_reason_ = "the client read too slowly: more than " + std::to_string(limits.max_pending_bytes) +
                   " bytes stayed unsent for " +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(limits.slow_client_timeout).count()) +
                   " ms (--max-pending-bytes, --slow-client-timeout)";
  cancelled_.store(true, std::memory_order_release);
  outcome = PublishOutcome::kCutOff;
}

PublishOutcome ResponseStream::publish(TimePoint now, const StreamLimits& limits) {
  PublishOutcome outcome = PublishOutcome::kPublished;
  if (num_staged_ == 0) return outcome;
  bool notify = false;
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < num_staged_; ++i) push_back_event(staged_[i]);
    unsent_bytes_ += staged_bytes_;
    check_bound(now, limits, outcome);
    if (waker_) waker_();
    notify = num_blocked_ > 0;
  }
  num_staged_ = 0;
  staged_bytes_ = 0;
  if (notify) cv_.notify_all();
  return outcome;
}

void ResponseStream::push(StreamEvent event) {
  stage(std::move(event));
  StreamLimits unbounded;
  unbounded.max_pending_bytes = SIZE_MAX;
  (void)publish(TimePoint{}, unbounded);
}

void ResponseStream::pop_front(StreamEvent& out) {
  StreamEvent& slot = events_[head_];
  if (std::holds_alternative<DeltaEvent>(slot)) {
    out = std::get<DeltaEvent>(slot);  // copied on the client's thread; the slot keeps its storage
  } else {
    out = std::move(slot);
  }
  head_ = (head_ + 1) % events_.size();
  --num_events_;
  const size_t n = approx_wire_bytes(out);
  unsent_bytes_ -= std::min(n, unsent_bytes_);
  if (unsent_bytes_ <= bound_bytes_) over_since_.reset();  // caught up: a later excess starts afresh
  if (is_terminal(out)) terminal_taken_ = true;
}

bool ResponseStream::pop(StreamEvent& out) {
  MutexLock lock(mu_);
  if (terminal_taken_) return false;
  ++num_blocked_;
  while (!ready()) cv_.wait(mu_);
  --num_blocked_;
  pop_front(out);
  return true;
}

bool ResponseStream::pop_for(StreamEvent& out, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(mu_);
  if (terminal_taken_) return false;
  ++num_blocked_;
  while (!ready()) {
    if (!cv_.wait_until(mu_, deadline) && !ready()) break;
  }
  --num_blocked_;
  if (!ready()) return false;
  pop_front(out);
  return true;
}

bool ResponseStream::has_events() {
  MutexLock lock(mu_);
  return !terminal_taken_ && ready();
}

void ResponseStream::take(std::vector<StreamEvent>& out) {
  MutexLock lock(mu_);
  while (!terminal_taken_ && ready()) {
    out.emplace_back();
    pop_front(out.back());
  }
}

void ResponseStream::set_waker(std::function<void()> waker) {
  MutexLock lock(mu_);
  waker_ = std::move(waker);
  if (waker_ && ready()) waker_();
}

void ResponseStream::clear_waker() {
  MutexLock lock(mu_);
  waker_ = nullptr;
}

void ResponseStream::cancel(std::string reason) {
  MutexLock lock(mu_);
  if (cancelled()) return;
  cancel_reason_ = std::move(reason);
  cancelled_.store(true, std::memory_order_release);
}

std::string ResponseStream::cancel_reason() {
  MutexLock lock(mu_);
  return cancel_reason_;
}

size_t ResponseStream::unsent_bytes() {
  MutexLock lock(mu_);
  return unsent_bytes_;
}

}  // namespace met
