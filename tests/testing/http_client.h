// HttpConnection: a tiny blocking HTTP/1.1 client over a loopback TCP socket
// (POSIX sockets), for tests that drive `met serve` with raw HTTP: send any
// bytes, read one response (Content-Length or chunked, de-chunked), or read
// raw bytes. ServeProcess: runs `met serve …` as a subprocess, parses its
// "met: listening on http://HOST:PORT" line, and stops it.
// Threading: one thread per object.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace met::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class HttpConnection {
 public:
  // Connects to 127.0.0.1:port; a receive buffer of `receive_buffer_bytes`
  // when non-zero (set before connecting, so the window stays that small).
  explicit HttpConnection(uint16_t port, int receive_buffer_bytes = 0);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool send_all(const std::string& bytes);
  // One response; nullopt when the connection ended first.
  std::optional<HttpResponse> read_response();
  // Reads until `needle` is among the bytes read so far (raw); false at EOF.
  bool read_until(const std::string& needle);
  const std::string& raw() const { return buf_; }
  // Reads that wait longer than this fail (as at EOF).
  void set_receive_timeout(std::chrono::milliseconds timeout);
  void close();

 private:
  bool fill();  // reads more into buf_; false at EOF or error
  std::optional<std::string> read_line();
  bool read_exact(size_t n, std::string& out);

  int fd_ = -1;
  std::string buf_;
  size_t pos_ = 0;
};

// "POST /path HTTP/1.1" with Host, Content-Type: application/json and
// Content-Length; `extra_headers` are whole lines without CRLF.
std::string http_request(const std::string& method, const std::string& path, const std::string& body = "",
                         const std::vector<std::string>& extra_headers = {});
// One request on a fresh connection.
std::optional<HttpResponse> http_call(uint16_t port, const std::string& method, const std::string& path,
                                      const std::string& body = "");
// The JSON payloads of an SSE body's "data: " lines, in order ("[DONE]" too).
std::vector<std::string> sse_data(const std::string& body);

class ServeProcess {
 public:
  // Starts `met serve <args>` and waits for its listening line, then for its
  // model to load (/health no longer "loading"); port() is 0 and error() says
  // why when the line did not come.
  explicit ServeProcess(const std::string& args);
  ~ServeProcess();  // SIGKILL if still running
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& error() const { return error_; }
  std::string stderr_text() const;
  // SIGTERM, then the exit code (-1 when it did not exit normally).
  int stop();
  // SIGTERM without waiting; wait() then gives the exit code.
  void terminate();
  int wait();

 private:
  void wait_until_loaded(int polls);

  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string log_path_;
  std::string error_;
};

}  // namespace met::testing
