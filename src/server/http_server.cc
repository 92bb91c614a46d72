// HttpServer: listener, sessions, routing and the request bridge. The only
// translation unit that includes Beast and Asio. See http_server.h for the
// threading; in short: a strand per connection, a RequestWaiter thread per
// generation request, the peer's socket watched while the engine works.
#include "server/http_server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <optional>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "core/fault_flag.h"
#include "server/api_error.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "server/request_waiter.h"

namespace met {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using Request = http::request<http::string_body>;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kJson = "application/json";

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

struct HttpServer::Impl {
  Impl(ServerOptions o, Engine& e, const PromptBuilder& p)
      : options(std::move(o)), engine(e), prompts(p), created(static_cast<int64_t>(std::time(nullptr))) {}

  // Declared before ioc: coroutine frames destroyed with ioc still use them.
  ServerOptions options;
  Engine& engine;
  const PromptBuilder& prompts;
  int64_t created;
  std::atomic<int32_t> in_flight{0};
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> next_response{1};

  asio::io_context ioc;
  asio::strand<asio::io_context::executor_type> accept_strand{asio::make_strand(ioc)};
  tcp::acceptor acceptor{accept_strand};
  asio::signal_set signals{accept_strand, SIGINT, SIGTERM};

  // Stops the io threads once shutting down and nothing is in flight.
  void maybe_finish() {
    if (stopping.load() && in_flight.load() == 0) ioc.stop();
  }
};

namespace {

using Impl = HttpServer::Impl;

// One admitted generation request; released when the coroutine leaves it.
class InFlightSlot {
 public:
  explicit InFlightSlot(Impl& s) : s_(s), admitted_(s.in_flight.fetch_add(1) < s.options.max_concurrent) {}
  ~InFlightSlot() {
    s_.in_flight.fetch_sub(1);
    s_.maybe_finish();
  }
  InFlightSlot(const InFlightSlot&) = delete;
  InFlightSlot& operator=(const InFlightSlot&) = delete;
  bool admitted() const { return admitted_; }

 private:
  Impl& s_;
  bool admitted_;
};

// ---- writing whole responses ----

awaitable<bool> write_body(beast::tcp_stream& stream, unsigned version, http::status status, std::string body,
                           std::string_view content_type, bool keep_alive, std::string_view allow = {}) {
  http::response<http::string_body> res{status, version};
  res.set(http::field::server, "met");
  res.set(http::field::content_type, content_type);
  if (!allow.empty()) res.set(http::field::allow, allow);
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  auto [ec, n] = co_await http::async_write(stream, res, kTuple);
  co_return !ec && keep_alive;
}

awaitable<bool> write_error(beast::tcp_stream& stream, unsigned version, const ApiError& e, bool keep_alive,
                            std::string_view allow = {}) {
  co_return co_await write_body(stream, version, static_cast<http::status>(e.status), error_body(e), kJson, keep_alive,
                                allow);
}

// ---- waiting for the engine while watching the peer ----

enum class Peer { kOpen, kClosed, kSentMore };

Peer peer_state(tcp::socket& socket) {
  char c = 0;
  const ssize_t n = ::recv(socket.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return Peer::kSentMore;  // a pipelined request: the peer is there
  if (n == 0) return Peer::kClosed;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Peer::kOpen : Peer::kClosed;
}

// What a request's coroutine waits on; `wake` is cancelled by the waiter's posts.
struct EventWait {
  asio::steady_timer wake;
  bool watch_peer = true;
  bool peer_gone = false;
};

// Returns once the waiter holds events. A peer that closes meanwhile cancels
// the request (its terminal event still comes and ends the wait).
awaitable<void> wait_for_events(beast::tcp_stream& stream, EventWait& w, RequestWaiter& waiter) {
  using namespace asio::experimental::awaitable_operators;
  while (!waiter.has_events()) {
    w.wake.expires_at(asio::steady_timer::time_point::max());
    if (!w.watch_peer) {
      co_await w.wake.async_wait(kTuple);
      continue;
    }
    auto r = co_await (w.wake.async_wait(kTuple) || stream.socket().async_wait(tcp::socket::wait_read, kTuple));
    if (r.index() == 0) continue;
    const Peer p = peer_state(stream.socket());
    if (p == Peer::kOpen) continue;
    w.watch_peer = false;
    if (p == Peer::kClosed) {
      w.peer_gone = true;
      waiter.cancel();
    }
  }
}

bool is_terminal(const StreamEvent& e) { return !std::holds_alternative<DeltaEvent>(e); }

// A non-streaming response: collects the text, then writes one JSON body.
awaitable<bool> collect_events(beast::tcp_stream& stream, const Request& req, EventWait& w, RequestWaiter& waiter,
                               const ResponseMeta& meta) {
  std::string text;
  std::optional<FinishEvent> finish;
  std::optional<std::string> error;
  while (!finish && !error) {
    co_await wait_for_events(stream, w, waiter);
    for (StreamEvent& ev : waiter.take()) {
      if (auto* d = std::get_if<DeltaEvent>(&ev)) text += d->text;
      if (auto* f = std::get_if<FinishEvent>(&ev)) finish = std::move(*f);
      if (auto* e = std::get_if<ErrorEvent>(&ev)) error = std::move(e->message);
    }
  }
  if (w.peer_gone) co_return false;
  if (error) co_return co_await write_error(stream, req.version(), http_error(500, *error), req.keep_alive());
  co_return co_await write_body(stream, req.version(), http::status::ok, dump(completion_body(meta, text, *finish)),
                                kJson, req.keep_alive());
}

// One piece of an SSE body: a chunk under HTTP/1.1; raw bytes under HTTP/1.0,
// whose body then ends when the connection closes.
awaitable<bool> write_chunk(beast::tcp_stream& stream, const std::string& bytes, bool chunked) {
  if (bytes.empty()) co_return true;
  if (!chunked) {
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(bytes), kTuple);
    co_return !ec;
  }
  auto [ec, n] = co_await asio::async_write(stream, http::make_chunk(asio::buffer(bytes)), kTuple);
  co_return !ec;
}

// A streaming response: SSE (one write per wake), chunked under HTTP/1.1.
awaitable<bool> stream_events(beast::tcp_stream& stream, const Request& req, EventWait& w, RequestWaiter& waiter,
                              const ResponseMeta& meta, bool include_usage) {
  const bool chunked = req.version() >= 11;
  http::response<http::empty_body> res{http::status::ok, req.version()};
  res.set(http::field::server, "met");
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  res.chunked(chunked);
  res.keep_alive(chunked && req.keep_alive());
  http::response_serializer<http::empty_body> sr{res};
  auto [ec, n] = co_await http::async_write_header(stream, sr, kTuple);
  SseEncoder encoder(meta, include_usage);
  bool writable = !ec && co_await write_chunk(stream, encoder.start(), chunked);
  for (bool done = false; !done;) {
    if (!writable && w.watch_peer) {
      w.watch_peer = false;
      waiter.cancel();
    }
    co_await wait_for_events(stream, w, waiter);
    std::string bytes;
    for (StreamEvent& ev : waiter.take()) {
      done = done || is_terminal(ev);
      bytes += encoder.encode(ev);
    }
    if (writable && !w.peer_gone) writable = co_await write_chunk(stream, bytes, chunked);
  }
  if (!writable || w.peer_gone || !chunked) co_return false;
  auto [ec2, n2] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
  co_return !ec2 && req.keep_alive();
}

// ---- generation requests ----

ApiError submit_error(const Status& s) {
  const bool caller = s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kOutOfRange;
  return caller ? invalid_request(std::nullopt, s.message()) : http_error(503, s.message());
}

// Follows a submitted request to its last byte. The waiter is destroyed
// (joined) before the final post, which runs after every wake it posted, so
// no wake touches `w` after this returns.
awaitable<bool> follow(Impl& s, beast::tcp_stream& stream, const Request& req, RequestHandle handle, ResponseMeta meta,
                       bool streaming, bool include_usage) {
  auto ex = co_await asio::this_coro::executor;
  EventWait w{asio::steady_timer(ex)};
  bool keep = false;
  {
    RequestWaiter waiter(std::move(handle), [ex, &w] { asio::post(ex, [&w] { w.wake.cancel(); }); });
    keep = streaming ? co_await stream_events(stream, req, w, waiter, meta, include_usage)
                     : co_await collect_events(stream, req, w, waiter, meta);
  }
  co_await asio::post(ex, asio::use_awaitable);
  co_return keep && !s.stopping.load();
}

awaitable<bool> generate(Impl& s, beast::tcp_stream& stream, const Request& req, Endpoint endpoint) {
  const bool keep = req.keep_alive();
  InFlightSlot slot(s);
  if (s.stopping.load()) {
    co_return co_await write_error(stream, req.version(), http_error(503, "the server is shutting down"), false);
  }
  if (!slot.admitted()) {
    const std::string msg =
        fmt::format("more than {} requests in flight (--max-concurrent); retry later", s.options.max_concurrent);
    co_return co_await write_error(stream, req.version(), http_error(429, msg), keep);
  }
  ApiResult<OpenAiRequest> parsed = parse_openai_request(endpoint, req.body());
  if (auto* e = std::get_if<ApiError>(&parsed)) co_return co_await write_error(stream, req.version(), *e, keep);
  OpenAiRequest& r = std::get<OpenAiRequest>(parsed);
  const bool streaming = r.stream;
  const bool include_usage = r.include_usage;
  ApiResult<EngineRequest> built = s.prompts.build(std::move(r));
  if (auto* e = std::get_if<ApiError>(&built)) co_return co_await write_error(stream, req.version(), *e, keep);
  Result<RequestHandle> handle = s.engine.submit(std::move(std::get<EngineRequest>(built)));
  if (!handle.ok()) co_return co_await write_error(stream, req.version(), submit_error(handle.status()), keep);
  ResponseMeta meta{.endpoint = endpoint,
                    .id = make_response_id(endpoint, (static_cast<uint64_t>(s.created) << 24) + s.next_response++),
                    .created = static_cast<int64_t>(std::time(nullptr)),
                    .model = s.options.model_name};
  co_return co_await follow(s, stream, req, std::move(*handle), std::move(meta), streaming, include_usage);
}

// ---- routing and sessions ----

awaitable<bool> route(Impl& s, beast::tcp_stream& stream, const Request& req) {
  std::string_view target(req.target().data(), req.target().size());
  target = target.substr(0, target.find('?'));
  const bool keep = req.keep_alive();
  const bool get = req.method() == http::verb::get;
  const bool post = req.method() == http::verb::post;
  const ApiError not_allowed =
      http_error(405, fmt::format("{} is not allowed on {}", std::string_view(req.method_string()), target));
  if (target == "/health") {
    if (!get) co_return co_await write_error(stream, req.version(), not_allowed, keep, "GET");
    const bool ok = !is_faulted();
    nlohmann::ordered_json health;
    health["status"] = ok ? "ok" : "faulted";
    if (!ok) health["reason"] = fault_reason();
    co_return co_await write_body(stream, req.version(), ok ? http::status::ok : http::status::service_unavailable,
                                  dump(health), kJson, keep);
  }
  if (target == "/v1/models") {
    if (!get) co_return co_await write_error(stream, req.version(), not_allowed, keep, "GET");
    co_return co_await write_body(stream, req.version(), http::status::ok,
                                  dump(models_body(s.options.model_name, s.created)), kJson, keep);
  }
  if (target == "/v1/completions" || target == "/v1/chat/completions") {
    if (!post) co_return co_await write_error(stream, req.version(), not_allowed, keep, "POST");
    co_return co_await generate(s, stream, req,
                                target == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChatCompletions);
  }
  co_return co_await write_error(stream, req.version(), http_error(404, fmt::format("no route for {}", target)), keep);
}

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

awaitable<void> session(Impl& s, tcp::socket socket) {
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

awaitable<void> accept_loop(Impl& s) {
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

Result<std::unique_ptr<HttpServer>> HttpServer::create(ServerOptions options, Engine& engine,
                                                       const PromptBuilder& prompts) {
  auto impl = std::make_unique<Impl>(std::move(options), engine, prompts);
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(impl->options.host, ec);
  if (ec) return invalid_argument("--host '{}' is not an IP address", impl->options.host);
  const tcp::endpoint endpoint(address, impl->options.port);
  tcp::acceptor& a = impl->acceptor;
  if (a.open(endpoint.protocol(), ec); !ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return io_error("cannot listen on {}:{}: {}", impl->options.host, impl->options.port, ec.message());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpServer::run() {
  Impl& s = *impl_;
  s.signals.async_wait([&s](const beast::error_code& ec, int) {
    if (ec) return;
    s.stopping.store(true);
    beast::error_code ignored;
    s.acceptor.close(ignored);
    s.maybe_finish();
  });
  asio::co_spawn(s.accept_strand, accept_loop(s), asio::detached);
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < s.options.num_io_threads; ++i) threads.emplace_back([&s] { s.ioc.run(); });
  s.ioc.run();
  for (std::thread& t : threads) t.join();
}

}  // namespace met
