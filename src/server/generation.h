// Generation: the request path every generation API shares (completions,
// chat completions, the Responses API, Anthropic's Messages API), each API
// only its ApiFront: the --max-concurrent slot (429 beyond), the front's
// parsing and translation, prompt building (400s),
// the default deadline (--request-timeout; a request's own `timeout` wins
// when smaller), submission to the engine, then the request bridge with the
// front's ResponseEncoder.
// Invariants: in_flight counts this request from admission to its last byte;
// when it drops to zero the server's waiters are told.
// Threading: the connection's strand. Tested through `met serve` by
// tests/server/http_server_test.cc.
#pragma once

#include "server/api_front.h"
#include "server/server_state.h"

namespace met {

// REQUIRES: s.model() != nullptr.
awaitable<bool> generate(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req, ApiFront& front,
                         const ExtraHeaders& headers = {});

// The deadline a request runs under: the smaller of its own and the default.
std::optional<Duration> effective_timeout(std::optional<Duration> requested, std::optional<Duration> fallback);

}  // namespace met
