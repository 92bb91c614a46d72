// RequestBridge. Tested through `met serve` by tests/server/http_server_test.cc.
#include "server/request_bridge.h"

#include <sys/socket.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <cerrno>
#include <optional>
#include <utility>
#include <variant>

#include "server/choice_streams.h"

namespace met {
namespace {

// What a request's coroutine waits on; `wake` is cancelled by the waiter's posts.
struct EventWait {
  asio::steady_timer wake;
  bool watch_peer = true;
  bool peer_gone = false;
};

// Returns once the waiter holds events. A peer that closes meanwhile cancels
// the request (its terminal event still comes and ends the wait).
awaitable<void> wait_for_events(beast::tcp_stream& stream, EventWait& w, ChoiceStreams& waiter) {
  using namespace asio::experimental::awaitable_operators;
  while (!waiter.has_events()) {
    w.wake.expires_at(asio::steady_timer::time_point::max());
    if (!w.watch_peer) {
      co_await w.wake.async_wait(kTuple);
      continue;
    }
    auto r = co_await (w.wake.async_wait(kTuple) || stream.socket().async_wait(tcp::socket::wait_read, kTuple));
    if (r.index() == 0) continue;
    const Peer p = peer_state(stream.socket());
    if (p == Peer::kOpen) continue;
    w.watch_peer = false;
    if (p == Peer::kClosed) {
      w.peer_gone = true;
      waiter.cancel();
    }
  }
}

// A non-streaming response: collects every choice, then writes one JSON
// body (or the first error a choice met).
awaitable<bool> collect_events(beast::tcp_stream& stream, const HttpRequest& req, EventWait& w,
                               ChoiceStreams& waiter, ResponseEncoder& encoder, const FollowOptions& o) {
  std::vector<ChoiceOutput> choices(waiter.size());
  for (ChoiceOutput& c : choices) {
    c.wants_logprobs = o.logprobs;
    c.wants_prompt_logprobs = o.prompt_logprobs;
  }
  size_t num_finished = 0;
  std::optional<ErrorEvent> error;
  while (num_finished < choices.size() && !error) {
    co_await wait_for_events(stream, w, waiter);
    for (ChoiceEvent& ce : waiter.take()) {
      ChoiceOutput& c = choices[ce.index];
      if (auto* d = std::get_if<DeltaEvent>(&ce.event)) c.add(*d);
      if (auto* f = std::get_if<FinishEvent>(&ce.event)) {
        c.finish = std::move(*f);
        ++num_finished;
      }
      if (auto* e = std::get_if<ErrorEvent>(&ce.event)) error = std::move(*e);
    }
  }
  if (w.peer_gone) co_return false;
  if (error) {
    co_return co_await write_error(stream, req.version(), error_of(*error), req.keep_alive(), o.headers,
                                   o.error_style);
  }
  co_return co_await write_body(stream, req.version(), http::status::ok, encoder.body(choices), kJson,
                                req.keep_alive(), o.headers);
}

// A streaming response: SSE (one write per wake), chunked under HTTP/1.1.
awaitable<bool> stream_events(beast::tcp_stream& stream, const HttpRequest& req, EventWait& w,
                              ChoiceStreams& waiter, ResponseEncoder& encoder, const FollowOptions& o) {
  const bool chunked = req.version() >= 11;
  size_t num_finished = 0;
  bool writable = co_await write_sse_header(stream, req, o.headers) &&
                  co_await write_chunk(stream, encoder.start(), chunked, o.write_timeout);
  for (bool done = false; !done;) {
    if (!writable && w.watch_peer) {
      w.watch_peer = false;
      waiter.cancel();
    }
    co_await wait_for_events(stream, w, waiter);
    std::string bytes;
    for (ChoiceEvent& ce : waiter.take()) {
      if (done) continue;  // after an error frame: the stream has ended
      const bool error = std::holds_alternative<ErrorEvent>(ce.event);
      num_finished += is_terminal(ce.event) ? 1 : 0;
      done = error || num_finished == waiter.size();
      bytes += encoder.encode(ce.index, ce.event);
      if (error) waiter.cancel();
    }
    if (writable && !w.peer_gone) writable = co_await write_chunk(stream, bytes, chunked, o.write_timeout);
  }
  if (!writable || w.peer_gone || !chunked) co_return false;
  auto [ec2, n2] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
  co_return !ec2 && req.keep_alive();
}

}  // namespace

// The streams are destroyed (their wakers cleared) before the final post,
// which runs after every wake they posted, so no wake touches `w` after this
// returns.
awaitable<bool> follow_request(beast::tcp_stream& stream, const HttpRequest& req, std::vector<RequestHandle> handles,
                               ResponseEncoder& encoder, FollowOptions options, std::vector<RequestTimer>& timers) {
  auto ex = co_await asio::this_coro::executor;
  EventWait w{asio::steady_timer(ex)};
  bool keep = false;
  {
    ChoiceStreams waiter(
        std::move(handles), [ex, &w] { asio::post(ex, [&w] { w.wake.cancel(); }); },
        [&timers](size_t i, const StreamEvent& e) { timers[i].on_event(e); });
    keep = options.streaming ? co_await stream_events(stream, req, w, waiter, encoder, options)
                             : co_await collect_events(stream, req, w, waiter, encoder, options);
  }
  co_await asio::post(ex, asio::use_awaitable);
  co_return keep;
}

}  // namespace met
