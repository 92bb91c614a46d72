// ResponseStream and ResponseSink. Tested by tests/scheduler/response_sink_test.cc.
#include "scheduler/response_sink.h"

#include "core/check.h"
#include "core/log.h"

namespace met {
namespace {

bool is_terminal(const StreamEvent& e) { return !std::holds_alternative<DeltaEvent>(e); }

}  // namespace

void ResponseStream::push(StreamEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

bool ResponseStream::pop(StreamEvent& out) {
  std::unique_lock<std::mutex> lock(mu_);
  if (terminal_taken_) return false;
  cv_.wait(lock, [&] { return !events_.empty(); });
  out = std::move(events_.front());
  events_.pop_front();
  if (is_terminal(out)) terminal_taken_ = true;
  return true;
}

bool ResponseStream::pop_for(StreamEvent& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (terminal_taken_) return false;
  if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  out = std::move(events_.front());
  events_.pop_front();
  if (is_terminal(out)) terminal_taken_ = true;
  return true;
}

ResponseSink::ResponseSink(ResponseSink&& other) noexcept
    : id_(other.id_), stream_(std::move(other.stream_)), terminated_(other.terminated_) {
  other.terminated_ = true;
}

ResponseSink& ResponseSink::operator=(ResponseSink&& other) noexcept {
  if (this != &other) {
    drop_if_open();
    id_ = other.id_;
    stream_ = std::move(other.stream_);
    terminated_ = other.terminated_;
    other.terminated_ = true;
  }
  return *this;
}

ResponseSink::~ResponseSink() { drop_if_open(); }

void ResponseSink::drop_if_open() {
  if (stream_ != nullptr && !terminated_) {
    MET_LOG_ERROR("request {}: the engine dropped its sink without a final frame", id_.value());
    stream_->push(ErrorEvent{"internal error: the engine dropped the request"});
  }
  terminated_ = true;
  stream_.reset();
}

void ResponseSink::delta(DeltaEvent event) {
  MET_CHECK(!terminated_, "request {}: delta after its final frame", id_.value());
  if (stream_ != nullptr) stream_->push(std::move(event));
}

void ResponseSink::finish(FinishEvent event) {
  MET_CHECK(!terminated_, "request {}: a second final frame", id_.value());
  terminated_ = true;
  if (stream_ != nullptr) stream_->push(std::move(event));
  stream_.reset();
}

void ResponseSink::error(std::string message) {
  MET_CHECK(!terminated_, "request {}: a second final frame", id_.value());
  terminated_ = true;
  if (stream_ != nullptr) stream_->push(ErrorEvent{std::move(message)});
  stream_.reset();
}

}  // namespace met
