// HTTP over libcurl for the hub: http_get_text() for small documents (file
// listings) and download_file(), which fetches one file into FILE.part,
// resuming what an earlier run left there with "Range: bytes=N-" (a 206 is
// appended; a 200 that ignores the range starts the file over), follows the
// hub's redirects to its storage (302/307, relative or to another host),
// retries an interrupted transfer from where it stopped, reports progress,
// and checks the bytes' sha256 against the expected one (the listing's, else
// the X-Linked-Etag or ETag header of the hub's answer).
// Invariants: the bearer token goes only into the Authorization header, and
// only to the first host (curl drops it on a redirect to another one); no
// message or log line holds it. A file whose sha256 does not match is
// deleted. The part file is locked (flock) while it is written, so a second
// process downloading the same file fails at once rather than interleave.
// Every error names the URL asked for and says what to do.
// Threading: one thread per call (each call owns its curl handle).
// Tested by tests/hub/hub_client_test.cc against a local HTTP server.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/status.h"

namespace met {

struct HttpOptions {
  std::string bearer_token;  // empty: no Authorization header
  std::string user_agent = "met";
  long connect_timeout_s = 30;
  long stall_timeout_s = 60;  // a transfer under 1 byte/s this long is interrupted
};

struct HttpText {
  long status = 0;  // the final answer's (after redirects)
  std::string body;
};

// GET `url`; an answer over `max_bytes` is an error. A non-2xx status is
// returned as it is (for the caller to word); a failure to connect is an
// error naming the URL.
Result<HttpText> http_get_text(const std::string& url, const HttpOptions& options, size_t max_bytes);

// The error for an HTTP status >= 400 from `url`: 401/403 mention HF_TOKEN,
// 404 says the repo, revision or file does not exist. `hub_message` is the
// hub's X-Error-Message, if any.
Status http_status_error(long status, const std::string& url, bool sent_token, const std::string& hub_message);

// Called with bytes on disk and the file's total (0 when unknown), at most
// every 100 ms and once at the end.
using DownloadProgressFn = std::function<void(uint64_t done_bytes, uint64_t total_bytes)>;

struct DownloadRequest {
  std::string url;
  std::string part_path;        // written and resumed here; left for a later resume when interrupted
  std::string expected_sha256;  // empty: the hub's X-Linked-Etag/ETag, if it gives a sha256
  std::optional<uint64_t> expected_size;
  int max_attempts = 3;  // transfers per call; each later one resumes
};

struct DownloadResult {
  std::string sha256;  // of the bytes in part_path
  uint64_t size_bytes = 0;
  bool verified = false;      // false: no expected sha256 was known
  uint64_t resumed_from = 0;  // bytes of an earlier run's part file that were kept
};

Result<DownloadResult> download_file(const DownloadRequest& request, const HttpOptions& options,
                                     const DownloadProgressFn& progress);

}  // namespace met
