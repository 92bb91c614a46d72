// HTTP I/O helpers shared by the server's translation units (private to
// src/server: the only headers outside http_io.cc that pull in Beast and
// Asio are this one and request_bridge.h): the aliases, and writing a whole
// response or an OpenAI-style error.
// Threading: the coroutines run on the connection's strand.
// Tested through `met serve` by tests/server/http_server_test.cc.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/api_error.h"

namespace met {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using HttpRequest = http::request<http::string_body>;

inline constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
inline constexpr std::string_view kJson = "application/json";

// Extra response headers: (name, value).
using ExtraHeaders = std::vector<std::pair<std::string, std::string>>;

// `base` and one more header.
inline ExtraHeaders with_header(ExtraHeaders base, std::string name, std::string value) {
  base.emplace_back(std::move(name), std::move(value));
  return base;
}


// Writes one response; true when the connection may serve another request.
awaitable<bool> write_body(beast::tcp_stream& stream, unsigned version, http::status status, std::string body,
                           std::string_view content_type, bool keep_alive, const ExtraHeaders& headers = {});

// The header of an SSE response (text/event-stream; chunked under HTTP/1.1);
// false when it could not be written.
awaitable<bool> write_sse_header(beast::tcp_stream& stream, const HttpRequest& req, const ExtraHeaders& headers);

// One piece of an SSE body: a chunk under HTTP/1.1; raw bytes under HTTP/1.0,
// whose body then ends when the connection closes. A write the client does
// not take within `timeout` fails (and closes the socket).
awaitable<bool> write_chunk(beast::tcp_stream& stream, const std::string& bytes, bool chunked,
                            std::chrono::steady_clock::duration timeout);

// Whether the peer is still there (kSentMore: it sent another request on
// the connection, so it is), without blocking or reading.
enum class Peer { kOpen, kClosed, kSentMore };
Peer peer_state(tcp::socket& socket);

// Writes `e` as {"error": {...}} (or in `style`) with its status.
awaitable<bool> write_error(beast::tcp_stream& stream, unsigned version, const ApiError& e, bool keep_alive,
                            const ExtraHeaders& headers = {}, ErrorStyle style = ErrorStyle::kOpenAi);

}  // namespace met
