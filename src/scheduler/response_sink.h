// ResponseStream and ResponseSink: one request's events from the engine to
// whoever waits for them (the HTTP handler, `met run`, a test). The engine
// holds the ResponseSink (its end), the client a RequestHandle over the same
// ResponseStream: deltas (token ids and text), then exactly one terminal event,
// a finish frame or an error frame. The client's end sets the cancel flag.
// Invariants: after a terminal event nothing more is pushed; a sink destroyed
// without one pushes an error ("the engine dropped the request"), so a waiting
// client is never left hanging (that path is a bug and is logged).
// Threading: the stream is shared by the engine thread (push) and one client
// thread (pop, cancel); its queue is guarded by a mutex.
// Tested by tests/scheduler/response_sink_test.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "sampling/logprobs.h"

namespace met {

struct DeltaEvent {
  std::vector<TokenId> tokens;  // sampled ids this delta covers (EOS included)
  std::string text;             // valid UTF-8; may be empty while text is held back
  // With EngineRequest::logprobs: one entry per token whose text is part of
  // the output (EOS and stop ids have none), in order.
  std::vector<TokenLogprob> logprobs = {};
  // With EngineRequest::prompt_logprobs, on the first delta only: entries for
  // prompt tokens 1..n-1 (token 0 has none), in order.
  std::vector<TokenLogprob> prompt_logprobs = {};
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache
  int32_t reasoning_tokens = 0;      // output tokens inside thinking (markers excluded)
};

struct FinishEvent {
  std::string finish_reason;       // "stop", "length", "timeout", "tool_calls"
  std::optional<std::string> guard_stop;  // the guard that cut the output, if any
  Usage usage;
  double time_to_first_token_ms = 0;
  double decode_time_ms = 0;
};

struct ErrorEvent {
  std::string message;
};

using StreamEvent = std::variant<DeltaEvent, FinishEvent, ErrorEvent>;

class ResponseStream {
 public:
  void push(StreamEvent event);
  // Blocks until an event is there; false once the terminal event was taken.
  bool pop(StreamEvent& out);
  // As pop, but gives up after `timeout` (returns false with `out` untouched).
  bool pop_for(StreamEvent& out, std::chrono::milliseconds timeout);

  void cancel() { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<StreamEvent> events_;  // guarded by mu_
  bool terminal_taken_ = false;     // guarded by mu_
  std::atomic<bool> cancelled_{false};
};

// The engine's end. Move-only; holds the stream until the terminal event.
class ResponseSink {
 public:
  ResponseSink() = default;
  ResponseSink(RequestId id, std::shared_ptr<ResponseStream> stream) : id_(id), stream_(std::move(stream)) {}
  ResponseSink(ResponseSink&& other) noexcept;
  ResponseSink& operator=(ResponseSink&& other) noexcept;
  ResponseSink(const ResponseSink&) = delete;
  ResponseSink& operator=(const ResponseSink&) = delete;
  ~ResponseSink();

  RequestId id() const { return id_; }
  bool is_terminated() const { return terminated_; }
  bool cancelled() const { return stream_ != nullptr && stream_->cancelled(); }

  // REQUIRES: !is_terminated().
  void delta(DeltaEvent event);
  void finish(FinishEvent event);
  void error(std::string message);

 private:
  void drop_if_open();

  RequestId id_;
  std::shared_ptr<ResponseStream> stream_;  // null in scheduler tests that record through ReqPort
  bool terminated_ = false;
};

}  // namespace met
