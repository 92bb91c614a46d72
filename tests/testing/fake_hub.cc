// FakeHub over Boost.Beast: one connection at a time, one request per
// connection (each answer says "Connection: close"), written as raw bytes so
// an answer can be cut off part way.
#include "testing/fake_hub.h"

#include <atomic>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hub/sha256.h"

namespace met::testing {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct Answer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

std::string reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 206:
      return "Partial Content";
    case 302:
      return "Found";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 416:
      return "Range Not Satisfiable";
    default:
      return "Status";
  }
}

std::string serialize(const Answer& a) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", a.status, reason(a.status));
  for (const auto& [name, value] : a.headers) out += name + ": " + value + "\r\n";
  out += fmt::format("Content-Length: {}\r\nConnection: close\r\n\r\n", a.body.size());
  return out + a.body;
}

Answer not_found_answer(const std::string& why) { return Answer{404, {{"X-Error-Message", why}}, why}; }

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t begin = 1;  // after the leading '/'
  while (begin <= path.size()) {
    const size_t end = std::min(path.find('/', begin), path.size());
    parts.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

std::string join_from(const std::vector<std::string>& parts, size_t first) {
  std::string out;
  for (size_t i = first; i < parts.size(); ++i) out += (i == first ? "" : "/") + parts[i];
  return out;
}

}  // namespace

class FakeHub::Server {
 public:
  explicit Server(FakeHub& hub) : hub_(hub), acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { run(); });
  }
  ~Server() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(io_);
    poke.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port_), ec);  // wakes the blocked accept
    thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  void run() {
    while (!stop_) {
      tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (stop_) break;
      if (!ec) serve(socket);
    }
  }

  void serve(tcp::socket& socket) {
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(socket, buffer, req, ec);
    if (ec) return;
    FakeHubRequest r{std::string(req.method_string()), std::string(req.target()), std::string(req[http::field::range]),
                     std::string(req[http::field::authorization])};
    size_t cut_after = std::string::npos;
    std::string raw = hub_.answer(r, &cut_after);
    if (cut_after != std::string::npos) raw.resize(std::min(raw.size(), raw.find("\r\n\r\n") + 4 + cut_after));
    asio::write(socket, asio::buffer(raw), ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  FakeHub& hub_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

FakeHub::FakeHub() : server_(std::make_unique<Server>(*this)) { port_ = server_->port(); }

FakeHub::~FakeHub() { server_.reset(); }

std::string FakeHub::endpoint() const { return fmt::format("http://127.0.0.1:{}", port_); }

void FakeHub::add_file(const std::string& repo, const std::string& path, std::string content,
                       const std::string& listed_sha256) {
  MutexLock lock(mu_);
  const std::string sha = listed_sha256.empty() ? sha256_hex(content) : listed_sha256;
  repos_[repo][path] = File{std::move(content), sha};
}

void FakeHub::require_token(const std::string& token) {
  MutexLock lock(mu_);
  token_ = token;
}

void FakeHub::corrupt_bodies(bool on) {
  MutexLock lock(mu_);
  corrupt_ = on;
}

void FakeHub::ignore_ranges(bool on) {
  MutexLock lock(mu_);
  ignore_ranges_ = on;
}

void FakeHub::cut_transfers(int count, size_t after_bytes) {
  MutexLock lock(mu_);
  cuts_left_ = count;
  cut_after_bytes_ = after_bytes;
}

std::vector<FakeHubRequest> FakeHub::requests() const {
  MutexLock lock(mu_);
  return requests_;
}

int FakeHub::count_requests(const std::string& prefix) const {
  MutexLock lock(mu_);
  int n = 0;
  for (const FakeHubRequest& r : requests_) n += r.target.compare(0, prefix.size(), prefix) == 0 ? 1 : 0;
  return n;
}

std::string FakeHub::answer(const FakeHubRequest& r, size_t* cut_after) {
  MutexLock lock(mu_);
  requests_.push_back(r);
  const std::string path = r.target.substr(0, r.target.find('?'));
  const std::vector<std::string> parts = split_path(path);
  if (parts.size() >= 5 && parts[0] == "storage") return storage_answer(r, join_from(parts, 1), cut_after);
  if (!token_.empty() && r.authorization != "Bearer " + token_) {
    return serialize(Answer{401, {{"X-Error-Message", "Invalid credentials in Authorization header"}}, "401"});
  }
  if (parts.size() == 6 && parts[0] == "api" && parts[1] == "models" && parts[4] == "tree") {
    if (parts[5] != "main") return serialize(not_found_answer("Invalid rev id: " + parts[5]));
    return tree_answer(parts[2] + "/" + parts[3]);
  }
  if (parts.size() >= 5 && parts[2] == "resolve") {
    return resolve_answer(parts[0] + "/" + parts[1], parts[3], join_from(parts, 4));
  }
  return serialize(not_found_answer("no route for " + path));
}

std::string FakeHub::tree_answer(const std::string& repo) {
  const auto it = repos_.find(repo);
  if (it == repos_.end()) return serialize(not_found_answer("Repository not found"));
  nlohmann::json listing = nlohmann::json::array();
  std::map<std::string, bool> folders;
  for (const auto& [path, file] : it->second) {
    if (const size_t slash = path.rfind('/'); slash != std::string::npos) folders[path.substr(0, slash)] = true;
  }
  for (const auto& [folder, unused] : folders) {
    listing.push_back({{"type", "directory"}, {"oid", std::string(40, 'd')}, {"size", 0}, {"path", folder}});
  }
  for (const auto& [path, file] : it->second) {
    nlohmann::json entry = {
        {"type", "file"}, {"oid", std::string(40, 'a')}, {"size", file.content.size()}, {"path", path}};
    if (file.listed_sha256 != "none") {
      entry["lfs"] = {{"oid", file.listed_sha256}, {"size", file.content.size()}, {"pointerSize", 134}};
    }
    listing.push_back(entry);
  }
  return serialize(Answer{200, {{"Content-Type", "application/json"}}, listing.dump()});
}

std::string FakeHub::resolve_answer(const std::string& repo, const std::string& rev, const std::string& path) {
  const auto repo_it = repos_.find(repo);
  if (repo_it == repos_.end()) return serialize(not_found_answer("Repository not found"));
  const auto it = repo_it->second.find(path);
  if (rev != "main" || it == repo_it->second.end()) return serialize(not_found_answer("Entry not found"));
  const std::string sha = sha256_hex(it->second.content);
  const std::string location = "/storage/" + repo + "/" + rev + "/" + path;
  return serialize(Answer{302,
                          {{"Location", location},
                           {"X-Linked-Etag", "\"" + sha + "\""},
                           {"ETag", "\"" + sha + "\""},
                           {"X-Linked-Size", std::to_string(it->second.content.size())},
                           {"X-Repo-Commit", std::string(40, 'c')}},
                          "Found. Redirecting to " + location});
}

std::string FakeHub::storage_answer(const FakeHubRequest& r, const std::string& key, size_t* cut_after) {
  const std::vector<std::string> parts = split_path("/" + key);  // ORG REPO REV PATH...
  const auto repo_it = repos_.find(parts[0] + "/" + parts[1]);
  if (repo_it == repos_.end()) return serialize(not_found_answer("no such object"));
  const auto it = repo_it->second.find(join_from(parts, 3));
  if (it == repo_it->second.end()) return serialize(not_found_answer("no such object"));
  std::string content = it->second.content;
  if (corrupt_ && !content.empty()) content[content.size() / 2] = static_cast<char>(content[content.size() / 2] ^ 1);
  Answer a{200, {{"Content-Type", "application/octet-stream"}, {"ETag", "\"storage-etag\""}}, content};
  if (!r.range.empty() && !ignore_ranges_ && r.range.compare(0, 6, "bytes=") == 0) {
    const size_t from = std::stoull(r.range.substr(6));
    if (from >= content.size()) {
      return serialize(Answer{416, {{"Content-Range", fmt::format("bytes */{}", content.size())}}, ""});
    }
    a.status = 206;
    a.headers.emplace_back("Content-Range", fmt::format("bytes {}-{}/{}", from, content.size() - 1, content.size()));
    a.body = content.substr(from);
  }
  if (cuts_left_ > 0) {
    --cuts_left_;
    *cut_after = cut_after_bytes_;
  }
  return serialize(a);
}

}  // namespace met::testing
