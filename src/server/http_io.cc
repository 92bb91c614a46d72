// HTTP I/O helpers. Tested through `met serve` by tests/server/http_server_test.cc.
#include "server/http_io.h"

#include <sys/socket.h>

#include <cerrno>
#include <tuple>

namespace met {

awaitable<bool> write_body(beast::tcp_stream& stream, unsigned version, http::status status, std::string body,
                           std::string_view content_type, bool keep_alive, const ExtraHeaders& headers) {
  http::response<http::string_body> res{status, version};
  res.set(http::field::server, "met");
  res.set(http::field::content_type, content_type);
  for (const auto& [name, value] : headers) res.set(name, value);
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(stream, res, kTuple);
  co_return !ec && keep_alive;
}

awaitable<bool> write_error(beast::tcp_stream& stream, unsigned version, const ApiError& e, bool keep_alive,
                            const ExtraHeaders& headers, ErrorStyle style) {
  co_return co_await write_body(stream, version, static_cast<http::status>(e.status), error_body(e, style), kJson,
                                keep_alive, headers);
}

awaitable<bool> write_sse_header(beast::tcp_stream& stream, const HttpRequest& req, const ExtraHeaders& headers) {
  const bool chunked = req.version() >= 11;
  http::response<http::empty_body> res{http::status::ok, req.version()};
  res.set(http::field::server, "met");
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  for (const auto& [name, value] : headers) res.set(name, value);
  res.chunked(chunked);
  res.keep_alive(chunked && req.keep_alive());
  http::response_serializer<http::empty_body> sr{res};
  auto [ec, n] = co_await http::async_write_header(stream, sr, kTuple);
  co_return !ec;
}

awaitable<bool> write_chunk(beast::tcp_stream& stream, const std::string& bytes, bool chunked,
                            std::chrono::steady_clock::duration timeout) {
  if (bytes.empty()) co_return true;
  stream.expires_after(timeout);
  beast::error_code ec;
  if (!chunked) {
    std::tie(ec, std::ignore) = co_await asio::async_write(stream, asio::buffer(bytes), kTuple);
  } else {
    std::tie(ec, std::ignore) = co_await asio::async_write(stream, http::make_chunk(asio::buffer(bytes)), kTuple);
  }
  stream.expires_never();
  co_return !ec;
}

Peer peer_state(tcp::socket& socket) {
  char c = 0;
  const ssize_t n = ::recv(socket.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return Peer::kSentMore;  // a pipelined request: the peer is there
  if (n == 0) return Peer::kClosed;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Peer::kOpen : Peer::kClosed;
}

}  // namespace met
