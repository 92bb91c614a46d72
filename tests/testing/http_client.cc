// HttpConnection and ServeProcess (see http_client.h).
#include "testing/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "testing/run_command.h"

namespace met::testing {

HttpConnection::HttpConnection(uint16_t port, int receive_buffer_bytes) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  if (receive_buffer_bytes > 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof(receive_buffer_bytes));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) close();
  int one = 1;
  if (fd_ >= 0) ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

HttpConnection::~HttpConnection() { close(); }

void HttpConnection::set_receive_timeout(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void HttpConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool HttpConnection::send_all(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

bool HttpConnection::fill() {
  if (fd_ < 0) return false;
  char tmp[16384];
  const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

bool HttpConnection::read_until(const std::string& needle) {
  while (buf_.find(needle, pos_) == std::string::npos) {
    if (!fill()) return false;
  }
  return true;
}

std::optional<std::string> HttpConnection::read_line() {
  for (;;) {
    const size_t eol = buf_.find("\r\n", pos_);
    if (eol != std::string::npos) {
      std::string line = buf_.substr(pos_, eol - pos_);
      pos_ = eol + 2;
      return line;
    }
    if (!fill()) return std::nullopt;
  }
}

bool HttpConnection::read_exact(size_t n, std::string& out) {
  while (buf_.size() - pos_ < n) {
    if (!fill()) return false;
  }
  out.append(buf_, pos_, n);
  pos_ += n;
  return true;
}

std::optional<HttpResponse> HttpConnection::read_response() {
  HttpResponse r;
  std::optional<std::string> status = read_line();
  if (!status || status->size() < 12) return std::nullopt;
  r.status = std::atoi(status->c_str() + 9);
  for (;;) {
    std::optional<std::string> line = read_line();
    if (!line) return std::nullopt;
    if (line->empty()) break;
    const size_t colon = line->find(':');
    std::string name = line->substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t start = line->find_first_not_of(' ', colon + 1);
    r.headers[name] = start == std::string::npos ? "" : line->substr(start);
  }
  if (r.headers["transfer-encoding"] == "chunked") {
    for (;;) {
      std::optional<std::string> size_line = read_line();
      if (!size_line) return std::nullopt;
      const size_t size = std::strtoul(size_line->c_str(), nullptr, 16);
      if (size == 0) {
        read_line();  // the CRLF after the last chunk
        return r;
      }
      std::string crlf;
      if (!read_exact(size, r.body) || !read_exact(2, crlf)) return std::nullopt;
    }
  }
  const size_t length = std::strtoul(r.headers["content-length"].c_str(), nullptr, 10);
  if (!read_exact(length, r.body)) return std::nullopt;
  return r;
}

std::string http_request(const std::string& method, const std::string& path, const std::string& body,
                         const std::vector<std::string>& extra_headers) {
  std::ostringstream out;
  out << method << " " << path << " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!body.empty() || method == "POST") {
    out << "Content-Type: application/json\r\nContent-Length: " << body.size() << "\r\n";
  }
  for (const std::string& h : extra_headers) out << h << "\r\n";
  out << "\r\n" << body;
  return out.str();
}

std::optional<HttpResponse> http_call(uint16_t port, const std::string& method, const std::string& path,
                                      const std::string& body) {
  HttpConnection c(port);
  if (!c.connected() || !c.send_all(http_request(method, path, body))) return std::nullopt;
  return c.read_response();
}

std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) == 0) out.push_back(line.substr(6));
  }
  return out;
}

ServeProcess::ServeProcess(const std::string& args) {
  char tmpl[] = "/tmp/met-serve-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd >= 0) ::close(fd);
  log_path_ = tmpl;
  const std::string command = "exec " + met_binary() + " serve " + args + " 2> " + shell_quote(log_path_);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    // The server dies with the test: a test that aborts must not leave it
    // holding the test's output pipe open (ctest would wait on it).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const std::regex listening("met: listening on http://[^\\s]+:(\\d+)");
  for (int i = 0; i < 1200; ++i) {  // up to about two minutes on a loaded machine
    std::smatch m;
    const std::string err = stderr_text();
    if (std::regex_search(err, m, listening)) {
      port_ = static_cast<uint16_t>(std::stoi(m[1]));
      wait_until_loaded(1200 - i);
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = "met serve exited before listening: " + err;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  error_ = "met serve did not print its listening line: " + stderr_text();
}

void ServeProcess::wait_until_loaded(int polls) {
  // The server listens while it loads, answering 503 "loading" (a test's
  // first request must not race the load on a busy machine).
  for (int i = 0; i < polls; ++i) {
    const std::optional<HttpResponse> r = http_call(port_, "GET", "/health");
    if (r.has_value() && !(r->status == 503 && r->body.find("loading") != std::string::npos)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (!log_path_.empty()) ::unlink(log_path_.c_str());
}

std::string ServeProcess::stderr_text() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int ServeProcess::stop() {
  terminate();
  return wait();
}

void ServeProcess::terminate() {
  if (pid_ > 0) ::kill(pid_, SIGTERM);
}

int ServeProcess::wait() {
  if (pid_ <= 0) return -1;
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace met::testing
