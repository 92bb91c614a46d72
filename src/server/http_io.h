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


// Writes one response; true when the connection may serve another request.
awaitable<bool> write_body(beast::tcp_stream& stream, unsigned version, http::status status, std::string body,
                           std::string_view content_type, bool keep_alive, const ExtraHeaders& headers = {});

// Writes `e` as {"error": {...}} (or in `style`) with its status.
awaitable<bool> write_error(beast::tcp_stream& stream, unsigned version, const ApiError& e, bool keep_alive,
                            const ExtraHeaders& headers = {}, ErrorStyle style = ErrorStyle::kOpenAi);

}  // namespace met
