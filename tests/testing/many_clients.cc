// Many HTTP clients on one thread. See many_clients.h.
#include "testing/many_clients.h"

#include <sys/resource.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <thread>

namespace met::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

tcp::endpoint loopback(uint16_t port) { return {asio::ip::make_address("127.0.0.1"), port}; }

void one_request(tcp::socket& socket, const std::string& request, ClientOutcome& out,
                 std::shared_ptr<beast::flat_buffer> buffer, std::function<void()> done) {
  auto parser = std::make_shared<http::response_parser<http::string_body>>();
  parser->body_limit(boost::none);
  asio::async_write(socket, asio::buffer(request), [&socket, &out, buffer, parser, done](beast::error_code ec, size_t) {
    if (ec) {
      out.error = "write: " + ec.message();
      done();
      return;
    }
    http::async_read(socket, *buffer, *parser, [&out, buffer, parser, done](beast::error_code ec2, size_t) {
      if (parser->is_header_done()) out.status = static_cast<int>(parser->get().result_int());
      out.body = parser->get().body();
      if (ec2) out.error = "read: " + ec2.message();
      done();
    });
  });
}

}  // namespace

std::vector<ClientOutcome> run_concurrent_requests(uint16_t port, const std::vector<std::string>& requests,
                                                   const std::function<void(const std::atomic<bool>&)>& during) {
  asio::io_context ioc;
  std::vector<ClientOutcome> out(requests.size());
  std::vector<std::unique_ptr<tcp::socket>> sockets;
  sockets.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    sockets.push_back(std::make_unique<tcp::socket>(ioc));
    tcp::socket& s = *sockets.back();
    s.async_connect(loopback(port), [&, i](beast::error_code ec) {
      if (ec) {
        out[i].error = "connect: " + ec.message();
        return;
      }
      one_request(*sockets[i], requests[i], out[i], std::make_shared<beast::flat_buffer>(),
                  [&, i] { sockets[i]->close(); });
    });
  }
  std::atomic<bool> done{false};
  std::thread watcher;
  if (during) watcher = std::thread([&] { during(done); });
  ioc.run();
  done.store(true);
  if (watcher.joinable()) watcher.join();
  return out;
}

struct IdleConnections::State {
  asio::io_context ioc;
  std::vector<std::unique_ptr<tcp::socket>> sockets;
};

IdleConnections::IdleConnections() : state_(std::make_unique<State>()) {}
IdleConnections::~IdleConnections() { close_all(); }

size_t IdleConnections::open(uint16_t port, size_t n) {
  const std::string request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
  std::vector<ClientOutcome> out(n);
  const size_t first = state_->sockets.size();
  for (size_t i = 0; i < n; ++i) state_->sockets.push_back(std::make_unique<tcp::socket>(state_->ioc));
  // Connect and request in waves: a backlog of thousands of SYNs at once
  // overflows the listen queue.
  constexpr size_t kWave = 500;
  for (size_t start = 0; start < n; start += kWave) {
    for (size_t i = start; i < std::min(n, start + kWave); ++i) {
      tcp::socket& s = *state_->sockets[first + i];
      s.async_connect(loopback(port), [&, i](beast::error_code ec) {
        if (ec) {
          out[i].error = "connect: " + ec.message();
          return;
        }
        one_request(*state_->sockets[first + i], request, out[i], std::make_shared<beast::flat_buffer>(), [] {});
      });
    }
    state_->ioc.run();
    state_->ioc.restart();
  }
  size_t num_ok = 0;
  for (const ClientOutcome& o : out) num_ok += o.error.empty() && o.status == 200 ? 1 : 0;
  return num_ok;
}

void IdleConnections::close_all() {
  for (auto& s : state_->sockets) {
    beast::error_code ignored;
    s->close(ignored);
  }
  state_->sockets.clear();
}

size_t IdleConnections::size() const { return state_->sockets.size(); }

namespace {

int64_t status_field(pid_t pid, const char* format) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t value = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long v = 0;
    if (std::sscanf(line, format, &v) == 1) value = v;
  }
  std::fclose(f);
  return value;
}

}  // namespace

int64_t process_threads(pid_t pid) { return status_field(pid, "Threads: %lld"); }
int64_t process_rss_kib(pid_t pid) { return status_field(pid, "VmRSS: %lld"); }

void raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  r.rlim_cur = r.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &r);
}

}  // namespace met::testing
