// HttpServer: the listener, sessions, and serve()'s drain. See
// http_server.h. Tested by tests/server/http_server_test.cc.
#include "server/http_server.h"

#include <fmt/format.h>

#include <csignal>
#include <utility>

#include "core/log.h"
#include "server/router.h"
#include "server/server_state.h"

namespace met {
namespace {

// How long, after the engine ended the requests left at the drain deadline,
// serve() waits for their error frames to be written.
constexpr auto kErrorFrameGrace = std::chrono::seconds(5);

// After refusing a request whose body is still arriving: stop sending, then
// read and drop what the peer sends (a few seconds at most), so closing does
// not reset the connection before the peer reads the refusal.
awaitable<void> linger_close(beast::tcp_stream& stream) {
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.expires_after(std::chrono::seconds(5));
  std::vector<char> sink(1 << 16);
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), kTuple);
    if (ec) break;
  }
}

awaitable<void> session(ServerState& s, tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (bool keep = true; keep && !s.stopping.load();) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(s.options.max_body_bytes);
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kTuple);
    if (!ec && parser.get()[http::field::expect] == "100-continue") {
      http::response<http::empty_body> cont{http::status::continue_, parser.get().version()};
      std::tie(ec, n) = co_await http::async_write(stream, cont, kTuple);
    }
    if (!ec) std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, kTuple);
    if (ec == http::error::body_limit) {
      const std::string msg =
          fmt::format("the request body is over {} bytes (--max-body-bytes)", s.options.max_body_bytes);
      co_await write_error(stream, 11, http_error(413, msg), false);
      co_await linger_close(stream);
      co_return;
    }
    if (ec) break;
    keep = co_await route(s, stream, parser.get());
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

awaitable<void> accept_loop(ServerState& s) {
  for (;;) {
    auto strand = asio::make_strand(s.ioc);
    auto [ec, socket] = co_await s.acceptor.async_accept(strand, kTuple);
    if (!s.acceptor.is_open() || s.stopping.load()) co_return;
    if (ec) {  // e.g. out of file descriptors: back off a little
      asio::steady_timer pause(s.accept_strand, std::chrono::milliseconds(50));
      co_await pause.async_wait(kTuple);
      continue;
    }
    asio::co_spawn(strand, session(s, std::move(socket)), asio::detached);
  }
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::create(ServerOptions options) {
  auto s = std::make_unique<ServerState>(std::move(options));
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(s->options.host, ec);
  if (ec) return invalid_argument("--host '{}' is not an IP address", s->options.host);
  const tcp::endpoint endpoint(address, s->options.port);
  tcp::acceptor& a = s->acceptor;
  if (a.open(endpoint.protocol(), ec); !ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return io_error("cannot listen on {}:{}: {}", s->options.host, s->options.port, ec.message());
  asio::co_spawn(s->accept_strand, accept_loop(*s), asio::detached);
  ServerState& state = *s;
  for (int32_t i = 0; i < std::max(state.options.num_io_threads, 1); ++i) {
    state.threads.emplace_back([&state] { state.ioc.run(); });
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(s)));
}

HttpServer::HttpServer(std::unique_ptr<ServerState> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() {
  state_->ioc.stop();
  for (std::thread& t : state_->threads) t.join();
}

uint16_t HttpServer::port() const { return state_->acceptor.local_endpoint().port(); }

void HttpServer::serve(ServedModel model) {
  ServerState& s = *state_;
  if (s.options.tenant_quotas.limits_kv_blocks()) model.engine.track_tenant_blocks();
  s.served_storage = std::make_unique<ServedModel>(model);
  s.served.store(s.served_storage.get(), std::memory_order_release);
  asio::post(s.accept_strand, [&s] {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([&s](const beast::error_code& ec, int) {
      if (ec) return;
      s.stopping.store(true);
      beast::error_code ignored;
      s.acceptor.close(ignored);
      s.notify();
    });
  });
  s.wait_until_stopping();
  if (s.wait_for_idle(s.options.drain_timeout)) return;
  MET_LOG_WARN("drain: {} requests still in flight after --drain-timeout; ending them with an error",
               s.in_flight.load());
  model.engine.stop();
  (void)s.wait_for_idle(kErrorFrameGrace);
}

}  // namespace met
