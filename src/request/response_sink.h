// ResponseSink: the engine's end of one request's ResponseStream (the client
// holds a RequestHandle over the same stream). Its events are staged on the
// stream and enlisted with the engine's StreamPublisher, which hands them to
// the client once per tick; a sink made without a publisher hands each event
// over at once.
// Invariants: after a terminal event nothing more is sent; a sink destroyed
// without one sends an error ("the engine dropped the request") at once, so
// a waiting client is never left hanging (that path is a bug and is logged).
// Threading: engine thread only (the stream's client side is another
// thread's). Tested by tests/request/response_sink_test.cc.
#pragma once

#include <memory>
#include <string>

#include "core/ids.h"
#include "request/response_stream.h"
#include "request/stream_event.h"
#include "request/stream_publisher.h"

namespace met {

// The engine's end. Move-only; holds the stream until the terminal event.
class ResponseSink {
 public:
  ResponseSink() = default;
  // `publisher` may be null (events are handed over at once); it outlives the sink.
  ResponseSink(RequestId id, std::shared_ptr<ResponseStream> stream, StreamPublisher* publisher = nullptr)
      : id_(id), stream_(std::move(stream)), publisher_(publisher) {}
  ResponseSink(ResponseSink&& other) noexcept;
  ResponseSink& operator=(ResponseSink&& other) noexcept;
  ResponseSink(const ResponseSink&) = delete;
  ResponseSink& operator=(const ResponseSink&) = delete;
  ~ResponseSink();

  RequestId id() const { return id_; }
  bool is_terminated() const { return terminated_; }
  bool cancelled() const { return stream_ != nullptr && stream_->cancelled(); }
  // Why the client's end cancelled (its error frame's message).
  std::string cancel_reason() const;

  // Stages a copy of `event` (into storage the stream reuses). REQUIRES: !is_terminated().
  void delta(const DeltaEvent& event);
  void finish(FinishEvent event);
  // `param`: ErrorEvent::param.
  void error(std::string message, std::optional<std::string> param = std::nullopt);

 private:
  template <class Event>
  void send(Event&& event);
  void drop_if_open();

  RequestId id_;
  std::shared_ptr<ResponseStream> stream_;  // null in scheduler tests that record through ReqPort
  StreamPublisher* publisher_ = nullptr;
  bool terminated_ = false;
};

}  // namespace met
