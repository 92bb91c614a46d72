// Router: answers one HTTP request of a connection: the API key check
// (everything but /health and /metrics needs one when keys are set; see
// below), the loading state (503 but /health), method checks (405 with
// Allow), and dispatch to /health, /metrics, /v1/models, /tokenize,
// /detokenize and the generation endpoints (generation.h).
// /metrics stays open with API keys set, as /health does and as vLLM does:
// scrapers seldom carry bearer tokens, and the text holds counts and
// latencies, never a request's content. /tokenize and /detokenize need a key
// (they expose the model's vocabulary, and cost CPU).
// Threading: the connection's strand. Tested through `met serve` by
// tests/server/http_server_test.cc and tests/server/server_endpoints_test.cc.
#pragma once

#include "server/server_state.h"

namespace met {

// True when the connection may serve another request.
awaitable<bool> route(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req);

}  // namespace met
