// ServerState: what every connection of one HttpServer shares (private to
// src/server): the options, the metrics, the served model once loaded, the
// in-flight count, the stopping flag, the Responses API's stored responses,
// and the io_context with its acceptor.
// Invariants: `served` is published once (release) and read with acquire;
// in_flight counts generation requests between admission and their last
// byte; every change that can end serve()'s waits notifies `cv` under `mu`.
// Threading: atomics from any thread; the acceptor and signals on
// accept_strand; mu/cv between the io threads and serve()'s thread.
// Tested through `met serve` by tests/server/http_server_test.cc.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "server/api_error.h"
#include "server/http_io.h"
#include "server/http_server.h"
#include "server/response_store.h"
#include "server/server_metrics.h"

namespace met {

struct ServerState {
  explicit ServerState(ServerOptions o)
      : options(std::move(o)),
        metrics(options.model_name),
        created(static_cast<int64_t>(std::time(nullptr))),
        tenant_gate(options.tenant_quotas) {}

  // Declared before ioc: coroutine frames destroyed with ioc still use them.
  ServerOptions options;
  ServerMetrics metrics;
  int64_t created;
  TenantGate tenant_gate;  // --tenant-quota's counts
  std::unique_ptr<ServedModel> served_storage;
  std::atomic<const ServedModel*> served{nullptr};  // null while loading
  std::atomic<int32_t> in_flight{0};
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> next_response{1};
  ResponseStore responses;  // the Responses API's kept responses (thread-safe)
  Mutex mu;
  CondVar cv;

  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  asio::strand<asio::io_context::executor_type> accept_strand{asio::make_strand(ioc)};
  tcp::acceptor acceptor{accept_strand};
  asio::signal_set signals{accept_strand};
  std::vector<std::thread> threads;

  const ServedModel* model() const { return served.load(std::memory_order_acquire); }
  void notify() {
    MutexLock lock(mu);
    cv.notify_all();
  }
  void wait_until_stopping() {
    MutexLock lock(mu);
    while (!stopping.load()) cv.wait(mu);
  }
  // True once no generation request is in flight; false when `timeout` passed first.
  bool wait_for_idle(Duration timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(mu);
    while (in_flight.load() != 0) {
      if (!cv.wait_until(mu, deadline)) return in_flight.load() == 0;
    }
    return true;
  }
};

// One admitted generation (or embedding) request: counted in in_flight, at
// most options.max_concurrent admitted; released when the coroutine leaves it.
class InFlightSlot {
 public:
  explicit InFlightSlot(ServerState& s)
      : s_(s), admitted_(s.in_flight.fetch_add(1) < s.options.max_concurrent) {}
  ~InFlightSlot() {
    if (s_.in_flight.fetch_sub(1) == 1) s_.notify();
  }
  InFlightSlot(const InFlightSlot&) = delete;
  InFlightSlot& operator=(const InFlightSlot&) = delete;
  bool admitted() const { return admitted_; }
  // Why the request is not served (503 while stopping, 429 past
  // --max-concurrent); nullopt when it is admitted.
  std::optional<ApiError> refusal() const {
    if (s_.stopping.load()) return http_error(503, "the server is shutting down");
    if (admitted_) return std::nullopt;
    return http_error(429, fmt::format("more than {} requests in flight (--max-concurrent); retry later",
                                       s_.options.max_concurrent));
  }

 private:
  ServerState& s_;
  bool admitted_;
};

}  // namespace met
