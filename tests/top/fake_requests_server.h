// FakeRequestsServer: a loopback HTTP server for the top/ tests that answers
// every request with the status and body set for it (canned /v1/requests
// JSON, a 401, a 200 to a cancel) and records each request's line and
// Authorization header. One connection at a time, "Connection: close".
// Threading: its own accept thread; the setters and the record are guarded by
// a mutex, so the test's thread may call them at any time.
// Never linked into apps/.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace met::top::testing {

struct SeenRequest {
  std::string line;           // "GET /v1/requests HTTP/1.1"
  std::string authorization;  // the header's value, "" when absent
};

class FakeRequestsServer {
 public:
  FakeRequestsServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0) return;
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeRequestsServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  FakeRequestsServer(const FakeRequestsServer&) = delete;
  FakeRequestsServer& operator=(const FakeRequestsServer&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void answer(int status, const std::string& body) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    body_ = body;
  }
  std::vector<SeenRequest> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      handle(c);
      ::close(c);
    }
  }

  void handle(int c) {
    std::string in;
    char buf[4096];
    while (in.find("\r\n\r\n") == std::string::npos) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) return;
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
    }
    SeenRequest seen{in.substr(0, in.find("\r\n")), header(in, "authorization")};
    std::string out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back(seen);
      out = "HTTP/1.1 " + std::to_string(status_) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
    }
    size_t sent = 0;
    while (sent < out.size()) {
      const ssize_t n = ::send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  // The value of header `name` (lower case) in the request head `in`.
  static std::string header(const std::string& in, const std::string& name) {
    size_t at = 0;
    while ((at = in.find("\r\n", at)) != std::string::npos) {
      at += 2;
      const size_t colon = in.find(':', at);
      const size_t end = in.find("\r\n", at);
      if (colon == std::string::npos || end == std::string::npos || colon > end) continue;
      std::string key = in.substr(at, colon - at);
      for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (key != name) continue;
      const size_t value = std::min(in.find_first_not_of(' ', colon + 1), end);
      return in.substr(value, end - value);
    }
    return "";
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  int status_ = 200;
  std::string body_;
  std::vector<SeenRequest> seen_;
};

}  // namespace met::top::testing
