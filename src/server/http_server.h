// HttpServer: the OpenAI-compatible HTTP/1.1 server over Boost.Beast: a
// listener, one coroutine per connection (keep-alive), routing, limits
// (--max-concurrent, --max-body-bytes), and the bridge from a request's
// RequestHandle to JSON or SSE. Beast and Asio stay inside http_server.cc.
// Threading: run() drives an io_context on `num_io_threads` threads; each
// connection's coroutine runs on its own strand. Per generation request a
// RequestWaiter thread blocks on the engine's stream and wakes the strand
// (posting a timer cancel), so neither the engine thread nor an io thread
// waits on a slow client or a slow engine. While it waits for events a
// session also watches its socket: a peer that closes (or half-closes its
// sending side) cancels the request at once.
// SIGINT/SIGTERM: stop accepting, let requests in flight finish, return.
// Invariants: every request gets one response (or its connection is closed
// because the peer left); the in-flight count equals the generation requests
// between admission and their last byte.
// Tested by tests/server/http_server_test.cc (the built `met serve`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "engine/engine.h"
#include "server/prompt_builder.h"

namespace met {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;          // 0: a free port
  int32_t max_concurrent = 256;  // generation requests in flight; more get 429
  size_t max_body_bytes = size_t{8} << 20;
  int32_t num_io_threads = 4;
  std::string model_name;  // what /v1/models and responses call the model
};

class HttpServer {
 public:
  // Binds and listens (nothing is served before run()). Borrows engine and
  // prompts; they outlive the server.
  static Result<std::unique_ptr<HttpServer>> create(ServerOptions options, Engine& engine,
                                                    const PromptBuilder& prompts);
  ~HttpServer();

  // The bound port (the chosen one for port 0).
  uint16_t port() const;
  // Serves until SIGINT or SIGTERM, then stops accepting and returns once
  // every request in flight has been answered.
  void run();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace met
