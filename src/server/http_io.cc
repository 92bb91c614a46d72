// HTTP I/O helpers. Tested through `met serve` by tests/server/http_server_test.cc.
#include "server/http_io.h"

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

}  // namespace met
