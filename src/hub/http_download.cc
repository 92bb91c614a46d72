// libcurl transfers for the hub (http_download.h): one easy handle per call,
// owned by a unique_ptr; the part file is an O_APPEND descriptor owned the
// same way.
#include "hub/http_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include <curl/curl.h>

#include "core/log.h"
#include "core/unique_fd.h"
#include "hub/hub_listing.h"
#include "hub/sha256.h"

namespace met {
namespace {

constexpr auto kProgressInterval = std::chrono::milliseconds(100);

void ensure_curl_global_init() {
  static std::once_flag once;
  std::call_once(once, [] { MET_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK, "curl_global_init failed"); });
}

struct CurlFree {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct CurlListFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlHandle = std::unique_ptr<CURL, CurlFree>;
using CurlList = std::unique_ptr<curl_slist, CurlListFree>;


// What the answers of one transfer said in their headers (a redirect chain
// has several answers; the first is the hub's).
struct ResponseHeaders {
  int num_answers = 0;
  std::string linked_etag;    // X-Linked-Etag of any answer: the hub's sha256 of an LFS file
  std::string first_etag;     // ETag of the first answer (the hub's, not the storage's)
  std::string error_message;  // X-Error-Message (the hub's reason for a 4xx)
  std::string content_range;  // of the last answer
};

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& h = *static_cast<ResponseHeaders*>(user);
  const std::string_view line(data, size * count);
  if (line.substr(0, 5) == "HTTP/") {
    ++h.num_answers;
    h.content_range.clear();
    return line.size();
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return line.size();
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string value = trimmed(line.substr(colon + 1));
  if (name == "x-linked-etag" && h.linked_etag.empty()) h.linked_etag = value;
  if (name == "etag" && h.num_answers == 1 && h.first_etag.empty()) h.first_etag = value;
  if (name == "x-error-message") h.error_message = value;
  if (name == "content-range") h.content_range = value;
  return line.size();
}

CurlList request_headers(const HttpOptions& o, std::optional<uint64_t> range_from) {
  curl_slist* list = nullptr;
  if (!o.bearer_token.empty()) list = curl_slist_append(list, ("Authorization: Bearer " + o.bearer_token).c_str());
  if (range_from) list = curl_slist_append(list, ("Range: bytes=" + std::to_string(*range_from) + "-").c_str());
  return CurlList(list);
}

// A handle set up for GET `url` (redirects followed, http and https only).
CurlHandle new_handle(const std::string& url, const HttpOptions& o, curl_slist* headers, char* error_buffer,
                      ResponseHeaders* answers) {
  ensure_curl_global_init();
  CurlHandle h(curl_easy_init());
  MET_CHECK(h != nullptr, "curl_easy_init failed");
  CURL* c = h.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, o.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o.connect_timeout_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o.stall_timeout_s);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, answers);
  error_buffer[0] = '\0';
  return h;
}

long response_code(CURL* c) {
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

std::string curl_detail(CURLcode code, const char* error_buffer) {
  return error_buffer[0] != '\0' ? std::string(error_buffer) : std::string(curl_easy_strerror(code));
}

Status transport_error(CURLcode code, const char* error_buffer, const std::string& url) {
  const std::string detail = curl_detail(code, error_buffer);
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return io_error("cannot reach {}: {} (offline? a model already in the cache is used without the network)", url,
                      detail);
    case CURLE_OPERATION_TIMEDOUT:
      return io_error("{}: timed out: {}", url, detail);
    case CURLE_TOO_MANY_REDIRECTS:
      return io_error("{}: too many redirects: {}", url, detail);
    default:
      return io_error("{}: {}", url, detail);
  }
}

// A transfer that stopped part way and may be resumed.
bool is_interruption(CURLcode code) {
  switch (code) {
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

size_t append_text(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<std::pair<std::string*, size_t>*>(user);
  const size_t n = size * count;
  if (t.first->size() + n > t.second) return 0;  // over the cap: curl stops with a write error
  t.first->append(data, n);
  return n;
}

// "bytes START-END/TOTAL" -> START and TOTAL (TOTAL nullopt when "*").
struct ContentRange {
  uint64_t start = 0;
  std::optional<uint64_t> total;
};

std::optional<ContentRange> parse_content_range(std::string_view v) {
  if (v.substr(0, 6) != "bytes ") return std::nullopt;
  v.remove_prefix(6);
  ContentRange r;
  size_t i = 0;
  for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) r.start = r.start * 10 + (v[i] - '0');
  if (i == 0 || i == v.size() || v[i] != '-') return std::nullopt;
  const size_t slash = v.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  uint64_t total = 0;
  size_t digits = 0;
  for (size_t j = slash + 1; j < v.size() && std::isdigit(static_cast<unsigned char>(v[j])); ++j, ++digits) {
    total = total * 10 + static_cast<uint64_t>(v[j] - '0');
  }
  if (digits > 0) r.total = total;
  return r;
}

// One file's download into its part file, over one or more transfers.
class PartDownload {
 public:
  PartDownload(const DownloadRequest& request, const HttpOptions& options, const DownloadProgressFn& progress)
      : req_(request), opts_(options), progress_(progress) {}

  // Opens (or creates) the part file and hashes the bytes an earlier run left.
  Status open();
  // One transfer from the bytes on disk: true when the file is complete,
  // false when the transfer was interrupted (and may be resumed).
  Result<bool> transfer();
  // Checks the sha256 (and size); deletes the part file when they differ.
  Result<DownloadResult> finish();

  uint64_t on_disk() const { return on_disk_; }
  uint64_t total() const { return total_; }
  const std::string& last_interruption() const { return last_interruption_; }

 private:
  static size_t on_body(char* data, size_t size, size_t count, void* user);
  size_t body(const char* data, size_t n);
  // Once the answer's status is known: start over on a 200 to a range
  // request; check a 206's range; learn the total.
  Status decide();
  Status truncate_to_zero();
  void report(bool force);
  Status remove_part(Status why);

  const DownloadRequest& req_;
  const HttpOptions& opts_;
  const DownloadProgressFn& progress_;
  std::unique_ptr<UniqueFd> fd_;
  Sha256 hash_;
  uint64_t on_disk_ = 0;
  uint64_t resumed_from_ = 0;
  uint64_t total_ = 0;
  ResponseHeaders answers_;  // over every transfer of this download
  std::string last_interruption_;
  std::chrono::steady_clock::time_point last_report_{};
  // Of the transfer in progress.
  CURL* curl_ = nullptr;
  uint64_t transfer_start_ = 0;
  bool decided_ = false;
  long status_ = 0;
  Status write_error_;
};

Status PartDownload::open() {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(req_.part_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return io_error("{}: cannot create the folder: {}", parent.string(), ec.message());
  fd_ = std::make_unique<UniqueFd>(::open(req_.part_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (fd_->get() < 0) return io_error("{}: cannot open for writing: {}", req_.part_path, std::strerror(errno));
  if (::flock(fd_->get(), LOCK_EX | LOCK_NB) != 0) {
    return io_error("{}: another process is downloading this file (the part file is locked); wait for it to finish",
                    req_.part_path);
  }
  struct stat st {};
  if (::fstat(fd_->get(), &st) != 0) return io_error("{}: cannot stat: {}", req_.part_path, std::strerror(errno));
  on_disk_ = static_cast<uint64_t>(st.st_size);
  if (req_.expected_size && on_disk_ > *req_.expected_size) MET_RETURN_IF_ERROR(truncate_to_zero());
  MET_RETURN_IF_ERROR(sha256_update_from_file(hash_, req_.part_path, on_disk_));
  resumed_from_ = on_disk_;
  total_ = req_.expected_size.value_or(0);
  return ok_status();
}

Status PartDownload::truncate_to_zero() {
  if (::ftruncate(fd_->get(), 0) != 0) return io_error("{}: cannot truncate: {}", req_.part_path, std::strerror(errno));
  hash_.reset();
  on_disk_ = 0;
  resumed_from_ = 0;
  return ok_status();
}

Status PartDownload::decide() {
  decided_ = true;
  status_ = response_code(curl_);
  if (status_ != 200 && status_ != 206) return ok_status();
  if (status_ == 200 && transfer_start_ > 0) {
    MET_LOG_INFO("{}: the server ignored the range request; downloading from the start", req_.url);
    MET_RETURN_IF_ERROR(truncate_to_zero());
    transfer_start_ = 0;
  }
  curl_off_t length = -1;
  curl_easy_getinfo(curl_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  if (length >= 0) total_ = transfer_start_ + static_cast<uint64_t>(length);
  if (status_ == 206) {
    const std::optional<ContentRange> range = parse_content_range(answers_.content_range);
    if (!range || range->start != transfer_start_) {
      return data_loss("{}: asked for bytes from {}, the server sent Content-Range '{}'", req_.url, transfer_start_,
                       answers_.content_range);
    }
    if (range->total) total_ = *range->total;
  }
  return ok_status();
}

size_t PartDownload::on_body(char* data, size_t size, size_t count, void* user) {
  return static_cast<PartDownload*>(user)->body(data, size * count);
}

size_t PartDownload::body(const char* data, size_t n) {
  if (!decided_) {
    write_error_ = decide();
    if (!write_error_.ok()) return 0;
  }
  if (status_ != 200 && status_ != 206) return n;  // an error page: the status and X-Error-Message say enough
  for (size_t done = 0; done < n;) {
    const ssize_t w = ::write(fd_->get(), data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      write_error_ = io_error("{}: cannot write: {}", req_.part_path, std::strerror(errno));
      return 0;
    }
    done += static_cast<size_t>(w);
  }
  hash_.update(data, n);
  on_disk_ += n;
  report(false);
  return n;
}

void PartDownload::report(bool force) {
  if (!progress_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_report_ < kProgressInterval) return;
  last_report_ = now;
  progress_(on_disk_, std::max(total_, on_disk_));
}

Result<bool> PartDownload::transfer() {
  transfer_start_ = on_disk_;
  decided_ = false;
  status_ = 0;
  write_error_ = ok_status();
  answers_.num_answers = 0;
  char error_buffer[CURL_ERROR_SIZE];
  CurlList headers = request_headers(opts_, on_disk_ > 0 ? std::optional<uint64_t>(on_disk_) : std::nullopt);
  CurlHandle h = new_handle(req_.url, opts_, headers.get(), error_buffer, &answers_);
  curl_ = h.get();
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(curl_, CURLOPT_BUFFERSIZE, 256L * 1024);
  const CURLcode code = curl_easy_perform(curl_);
  if (!write_error_.ok()) return write_error_;
  const long status = response_code(curl_);
  if (code == CURLE_OK && !decided_) MET_RETURN_IF_ERROR(decide());  // an answer with an empty body
  curl_ = nullptr;
  if (code != CURLE_OK) {
    const bool answered_ok = status == 0 || status == 200 || status == 206;
    if (!is_interruption(code) || !answered_ok) return transport_error(code, error_buffer, req_.url);
    last_interruption_ = curl_detail(code, error_buffer);
    return false;
  }
  if (status == 416 && transfer_start_ > 0) return true;  // nothing past what is on disk: complete (finish checks)
  if (status >= 400) return http_status_error(status, req_.url, !opts_.bearer_token.empty(), answers_.error_message);
  if (status != 200 && status != 206) return io_error("{}: unexpected HTTP status {}", req_.url, status);
  report(true);
  return true;
}

Status PartDownload::remove_part(Status why) {
  fd_.reset();
  std::error_code ec;
  std::filesystem::remove(req_.part_path, ec);
  return why;
}

Result<DownloadResult> PartDownload::finish() {
  if (::fsync(fd_->get()) != 0) return io_error("{}: cannot sync: {}", req_.part_path, std::strerror(errno));
  DownloadResult r;
  r.sha256 = hash_.finish_hex();
  r.size_bytes = on_disk_;
  r.resumed_from = resumed_from_;
  std::string expected = req_.expected_sha256;
  if (expected.empty()) expected = sha256_from_etag(answers_.linked_etag);
  if (expected.empty()) expected = sha256_from_etag(answers_.first_etag);
  if (!expected.empty() && expected != r.sha256) {
    return remove_part(
        data_loss("{}: sha256 mismatch: expected {}, got {} ({} bytes); the download was deleted, "
                  "run again to fetch it anew",
                  req_.url, expected, r.sha256, r.size_bytes));
  }
  if (req_.expected_size && *req_.expected_size != r.size_bytes) {
    return remove_part(
        data_loss("{}: size mismatch: expected {} bytes, got {}; the download was deleted, run "
                  "again to fetch it anew",
                  req_.url, *req_.expected_size, r.size_bytes));
  }
  r.verified = !expected.empty();
  return r;
}

}  // namespace

Result<HttpText> http_get_text(const std::string& url, const HttpOptions& options, size_t max_bytes) {
  HttpText out;
  std::pair<std::string*, size_t> sink(&out.body, max_bytes);
  char error_buffer[CURL_ERROR_SIZE];
  ResponseHeaders answers;
  CurlList headers = request_headers(options, std::nullopt);
  CurlHandle h = new_handle(url, options, headers.get(), error_buffer, &answers);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, append_text);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);
  const CURLcode code = curl_easy_perform(h.get());
  if (code == CURLE_WRITE_ERROR) return out_of_range("{}: the answer is larger than {} bytes", url, max_bytes);
  if (code != CURLE_OK) return transport_error(code, error_buffer, url);
  out.status = response_code(h.get());
  if (out.status >= 400)
    return http_status_error(out.status, url, !options.bearer_token.empty(), answers.error_message);
  return out;
}

Status http_status_error(long status, const std::string& url, bool sent_token, const std::string& hub_message) {
  const std::string why = hub_message.empty() ? std::string() : " (" + hub_message + ")";
  if (status == 401 || status == 403) {
    if (sent_token) {
      return invalid_argument(
          "{}: HTTP {}{}: the hub refused HF_TOKEN (a gated repo needs its terms accepted on the hub, and the "
          "token must be allowed to read it)",
          url, status, why);
    }
    return invalid_argument(
        "{}: HTTP {}{}: the repo is private, gated or does not exist; set HF_TOKEN to an access token that may "
        "read it",
        url, status, why);
  }
  if (status == 404) return not_found("{}: HTTP 404{}: no such repo, revision or file on the hub", url, why);
  if (status == 429) return io_error("{}: HTTP 429{}: rate limited by the hub; try again later", url, why);
  if (status >= 500) return io_error("{}: HTTP {}{}: the hub failed; try again later", url, status, why);
  return io_error("{}: HTTP {}{}", url, status, why);
}

}  // namespace met

namespace met {

Result<DownloadResult> download_file(const DownloadRequest& request, const HttpOptions& options,
                                     const DownloadProgressFn& progress) {
  PartDownload d(request, options, progress);
  MET_RETURN_IF_ERROR(d.open());
  const int attempts = std::max(1, request.max_attempts);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    MET_ASSIGN_OR_RETURN(const bool complete, d.transfer());
    if (complete) return d.finish();
    if (attempt < attempts) {
      MET_LOG_WARN("{}: the transfer stopped after {} bytes ({}); resuming, try {} of {}", request.url, d.on_disk(),
                   d.last_interruption(), attempt + 1, attempts);
      std::this_thread::sleep_for(std::chrono::milliseconds(250 * attempt));
    }
  }
  return io_error("{}: the transfer stopped after {} of {} bytes ({}); run again to resume from {}", request.url,
                  d.on_disk(), d.total() > 0 ? std::to_string(d.total()) : std::string("?"), d.last_interruption(),
                  request.part_path);
}

}  // namespace met
