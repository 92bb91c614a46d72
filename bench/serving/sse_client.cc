// SseClient. Tested by use (bench/serving/serving_load.cc).
#include "serving/sse_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

namespace met::bench {
namespace {

using Clock = std::chrono::steady_clock;

class Socket {
 public:
  Socket(const std::string& host, uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (fd_ < 0 || ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close_fd();
      return;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Socket() { close_fd(); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool ok() const { return fd_ >= 0; }
  bool send_all(const std::string& bytes) {
    for (size_t off = 0; off < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // Appends what arrives to `buf`; false at EOF or error.
  bool read_some(std::string& buf) {
    char tmp[16384];
    const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    return true;
  }

 private:
  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_;
};

// Moves complete "data: ...\n\n" events out of the de-chunked `body`.
void take_events(std::string& body, Clock::time_point at, std::vector<SseEvent>& out) {
  size_t start = 0;
  for (size_t end; (end = body.find("\n\n", start)) != std::string::npos; start = end + 2) {
    const std::string_view ev(body.data() + start, end - start);
    if (ev.rfind("data: ", 0) == 0) out.push_back({at, std::string(ev.substr(6))});
  }
  body.erase(0, start);
}

// De-chunks what `raw` holds from `pos` into `body`; true at the last chunk.
bool dechunk(const std::string& raw, size_t& pos, std::string& body) {
  for (;;) {
    const size_t eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) return false;
    const size_t size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
    if (size == 0) return true;
    if (raw.size() < eol + 2 + size + 2) return false;
    body.append(raw, eol + 2, size);
    pos = eol + 2 + size + 2;
  }
}

}  // namespace

SseResult stream_request(const std::string& host, uint16_t port, const std::string& path, const std::string& body,
                         const std::string& api_key) {
  SseResult r;
  Socket s(host, port);
  r.sent = Clock::now();
  if (!s.ok()) return r.error = "cannot connect", r;
  const std::string auth = api_key.empty() ? "" : fmt::format("Authorization: Bearer {}\r\n", api_key);
  const std::string req = fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "{}Connection: close\r\n\r\n{}",
      path, host, body.size(), auth, body);
  r.sent = Clock::now();
  if (!s.send_all(req)) return r.error = "send failed", r;
  std::string raw;
  size_t header_end = std::string::npos;
  while ((header_end = raw.find("\r\n\r\n")) == std::string::npos) {
    if (!s.read_some(raw)) return r.error = "closed before the headers", r;
  }
  if (raw.rfind("HTTP/1.1 200", 0) != 0) return r.error = raw.substr(0, raw.find("\r\n")), r;
  size_t pos = header_end + 4;
  std::string text;
  for (bool last = false; !last;) {
    last = dechunk(raw, pos, text);
    take_events(text, Clock::now(), r.events);
    if (!last && !s.read_some(raw)) return r.error = "closed mid-stream", r;
  }
  if (r.events.empty() || r.events.back().data != "[DONE]") r.error = "no [DONE]";
  return r;
}

}  // namespace met::bench
