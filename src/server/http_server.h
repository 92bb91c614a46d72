// HttpServer: the OpenAI-compatible HTTP/1.1 server over Boost.Beast: the
// listener, one coroutine per connection (keep-alive), and the server's life:
// created (bound, io threads running, /health answering "loading" and every
// other path 503) before the model loads; serve() publishes the loaded model
// and serves until SIGINT/SIGTERM, then drains. Routing is router.h,
// generation requests generation.h and request_bridge.h, metrics
// server_metrics.h, API keys api_keys.h.
// Drain: on SIGINT/SIGTERM stop accepting; requests in flight get up to
// drain_timeout to finish; then the engine is stopped, which ends each one
// left with an error frame (an error event then [DONE] on a stream, a 500 on
// a JSON request), and serve() returns once those are written (a client that
// reads nothing is given up on after a short grace).
// Invariants: every request gets one response (or its connection is closed
// because the peer left); the engine and the rest of ServedModel are
// borrowed from serve() until the server is destroyed, which must happen
// before they are.
// Threading: num_io_threads threads run the io_context from create() to the
// destructor; each connection's coroutine runs on its own strand; serve()
// blocks its caller. Tested by tests/server/http_server_test.cc and
// tests/server/server_endpoints_test.cc (the built `met serve`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/pooling.h"
#include "core/status.h"
#include "engine/engine.h"
#include "server/api_keys.h"
#include "server/cors.h"
#include "server/tenant_quota.h"
#include "server/prompt_builder.h"
#include "server/lora_api.h"
#include "server/tokenize_api.h"

namespace met {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;          // 0: a free port
  int32_t max_concurrent = 256;  // generation requests in flight; more get 429
  size_t max_body_bytes = size_t{8} << 20;
  int32_t num_io_threads = 4;
  std::string model_name;  // what /v1/models, responses and metrics call the model
  // Every response's and chunk's system_fingerprint: names the serving
  // configuration (met's version, the model, the engine's settings).
  std::string system_fingerprint;
  std::optional<Duration> request_timeout;  // every request's default deadline
  Duration drain_timeout = std::chrono::seconds(30);
  std::optional<Duration> stall_timeout;    // /health: 503 when work makes no step this long
  // A stream write the client does not take within twice this closes its
  // connection (the engine cuts off its request after this long over the
  // unsent-bytes bound; the write timeout then frees the socket).
  Duration slow_client_timeout = std::chrono::seconds(30);
  ApiKeys api_keys;                         // none: every request is let in
  // --admin-key: the keys of the operator's routes (operator_api.h); none:
  // those take the API keys like every other route.
  ApiKeys admin_keys;
  TenantQuotas tenant_quotas;               // --tenant-quota; none by default
  CorsPolicy cors;                          // off: no browser origin may read responses
  std::optional<Pooling> pooling;           // --pooling: embeddings pool this way, not the model's
};

// What the server serves once the model is loaded; all borrowed.
struct ServedModel {
  Engine& engine;
  const PromptBuilder& prompts;
  const TokenizeApi& tokenize;
  const Clock& clock;  // the engine's
  LoraApi lora{};      // the LoRA adapters (none by default)
};

struct ServerState;

class HttpServer {
 public:
  // Binds, listens and starts the io threads: /health answers "loading".
  static Result<std::unique_ptr<HttpServer>> create(ServerOptions options);
  ~HttpServer();  // stops the io threads

  // The bound port (the chosen one for port 0).
  uint16_t port() const;
  // Serves `model` until SIGINT or SIGTERM, then drains (see above) and
  // returns. Call once.
  void serve(ServedModel model);

 private:
  explicit HttpServer(std::unique_ptr<ServerState> state);
  std::unique_ptr<ServerState> state_;
};

}  // namespace met
