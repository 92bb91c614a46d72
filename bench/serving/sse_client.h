// SseClient: one streamed completion request over a fresh loopback TCP
// connection (POSIX sockets, blocking), for the serving load client. It sends
// the request, reads the chunked SSE body as it arrives, and stamps each
// `data:` event with the steady-clock time its bytes were read.
// Invariants: events come in the order the server sent them; a result with
// an error says why the stream is not a complete 200 ending with [DONE].
// Threading: one request per call; calls on many threads at once are fine.
// Tested by use (bench/serving/serving_load.cc against met serve).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace met::bench {

struct SseEvent {
  std::chrono::steady_clock::time_point at;
  std::string data;  // the JSON after "data: " ("[DONE]" last)
};

struct SseResult {
  std::chrono::steady_clock::time_point sent;
  std::vector<SseEvent> events;
  std::string error;  // "" when complete
};

// POSTs `body` to `path` on host:port and reads the whole SSE stream; with
// `api_key` not empty, as `Authorization: Bearer <api_key>`.
SseResult stream_request(const std::string& host, uint16_t port, const std::string& path, const std::string& body,
                         const std::string& api_key = "");

}  // namespace met::bench
