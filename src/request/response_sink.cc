// ResponseSink. Tested by tests/request/response_sink_test.cc.
#include "request/response_sink.h"

#include "core/check.h"
#include "core/log.h"

namespace met {

ResponseSink::ResponseSink(ResponseSink&& other) noexcept
    : id_(other.id_), stream_(std::move(other.stream_)), publisher_(other.publisher_), terminated_(other.terminated_) {
  other.terminated_ = true;
}

ResponseSink& ResponseSink::operator=(ResponseSink&& other) noexcept {
  if (this != &other) {
    drop_if_open();
    id_ = other.id_;
    stream_ = std::move(other.stream_);
    publisher_ = other.publisher_;
    terminated_ = other.terminated_;
    other.terminated_ = true;
  }
  return *this;
}

ResponseSink::~ResponseSink() { drop_if_open(); }

std::string ResponseSink::cancel_reason() const {
  return stream_ != nullptr ? stream_->cancel_reason() : std::string("cancelled by the client");
}

void ResponseSink::drop_if_open() {
  if (stream_ != nullptr && !terminated_) {
    MET_LOG_ERROR("request {}: the engine dropped its sink without a final frame", id_.value());
    // At once: the publisher may be gone (the engine is being destroyed).
    stream_->push(ErrorEvent{"internal error: the engine dropped the request"});
  }
  terminated_ = true;
  stream_.reset();
}

// A delta is passed by const reference and copied into the stream's reused
// slots; a terminal event is moved.
template <class Event>
void ResponseSink::send(Event&& event) {
  if (stream_ == nullptr) return;
  if (publisher_ == nullptr) {
    stream_->push(StreamEvent(std::forward<Event>(event)));
    return;
  }
  stream_->stage(std::forward<Event>(event));
  publisher_->enlist(stream_);
}

void ResponseSink::delta(const DeltaEvent& event) {
  MET_CHECK(!terminated_, "request {}: delta after its final frame", id_.value());
  send(event);
}

void ResponseSink::finish(FinishEvent event) {
  MET_CHECK(!terminated_, "request {}: a second final frame", id_.value());
  terminated_ = true;
  send(StreamEvent(std::move(event)));
  stream_.reset();
}

void ResponseSink::error(std::string message, std::optional<std::string> param) {
  MET_CHECK(!terminated_, "request {}: a second final frame", id_.value());
  terminated_ = true;
  send(StreamEvent(ErrorEvent{std::move(message), std::move(param)}));
  stream_.reset();
}

}  // namespace met
