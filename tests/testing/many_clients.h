// Many HTTP clients at once on one thread (Boost.Asio/Beast, a real HTTP
// stack), for the server's scale tests: thousands of concurrent requests,
// each read to its end, and thousands of idle keep-alive connections; and
// /proc/PID/status figures of the server under test.
// Threading: each call runs its own io_context on the caller's thread.
// Never linked into apps/.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace met::testing {

struct ClientOutcome {
  int status = 0;     // 0: no response
  std::string body;   // de-chunked
  std::string error;  // "" when a whole response was read
};

// Sends requests[i] (a whole raw HTTP/1.1 request) on connection i, all at
// once, and reads each response to its end. `during` runs on another thread
// while they are in flight and is told to stop (its argument turns true)
// once every response is in.
std::vector<ClientOutcome> run_concurrent_requests(uint16_t port, const std::vector<std::string>& requests,
                                                   const std::function<void(const std::atomic<bool>& done)>& during = nullptr);

// Connections that each made one keep-alive request (GET /health) and stay
// open, idle, until close_all() or destruction.
class IdleConnections {
 public:
  IdleConnections();
  ~IdleConnections();
  // Opens `n` more; returns how many completed their request.
  size_t open(uint16_t port, size_t n);
  void close_all();
  size_t size() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Threads and VmRSS (KiB) from /proc/PID/status; -1 when unreadable.
int64_t process_threads(pid_t pid);
int64_t process_rss_kib(pid_t pid);

// Raises this process's open-file limit to its hard limit.
void raise_open_file_limit();

}  // namespace met::testing
