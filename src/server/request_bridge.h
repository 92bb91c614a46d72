// RequestBridge: follows one submitted generation request from its
// RequestHandle to the client's last byte, as one JSON body or as SSE
// (chunked under HTTP/1.1), written by the API's ResponseEncoder. No thread waits for it: the engine publishes a
// request's events once per tick and its waker posts a wake (a timer cancel)
// to the connection's strand, so neither the engine thread nor an io thread
// waits on a slow client or a slow engine.
// While it waits for events it also watches the socket: a peer that closes
// (or half-closes its sending side) cancels the request at once; a stream
// write that fails, or that the client does not take within
// FollowOptions::write_timeout, cancels it too. Each event is shown to the
// RequestTimer as the strand takes it.
// Invariants: every request gets one response (or its connection is closed
// because the peer left); an error after the stream started is an error
// event, then [DONE]; no wake touches the coroutine's state after follow()
// returns.
// Threading: the connection's strand; wakes come from the engine thread.
// Tested through `met serve` by tests/server/http_server_test.cc and
// tests/server/serve_load_test.cc.
#pragma once

#include <vector>

#include "engine/engine.h"
#include "server/http_io.h"
#include "server/api_front.h"
#include "server/request_timer.h"

namespace met {

struct FollowOptions {
  bool streaming = false;
  bool logprobs = false;         // choices carry "logprobs"
  bool prompt_logprobs = false;  // choices carry vLLM's "prompt_logprobs"
  Duration write_timeout = std::chrono::seconds(30);  // one SSE write the client must take within
  ExtraHeaders headers;  // added to the response (CORS)
  ErrorStyle error_style = ErrorStyle::kOpenAi;  // a whole-body error's shape
};

// Follows the n choices of one request (handles[i] is choice i; timers[i]
// times it) to the client's last byte, written by `encoder`. True when the
// connection may serve another request.
awaitable<bool> follow_request(beast::tcp_stream& stream, const HttpRequest& req, std::vector<RequestHandle> handles,
                               ResponseEncoder& encoder, FollowOptions options, std::vector<RequestTimer>& timers);

}  // namespace met
