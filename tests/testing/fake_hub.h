// FakeHub: a Hugging Face-style hub on a real loopback socket (port 0, one
// thread, Boost.Beast), answering the URL shapes met's downloader uses:
//   GET /api/models/ORG/REPO/tree/REV[?recursive=true]  the file listing (JSON)
//   GET /ORG/REPO/resolve/REV/FILE   302 to /storage/ORG/REPO/REV/FILE, with
//                                    X-Linked-Etag / ETag (the sha256) and X-Linked-Size
//   GET /storage/...                 the bytes; "Range: bytes=N-" gets a 206
// and a 404 (with X-Error-Message) for anything else. Faults on demand: a
// required token (401 without it), a corrupted body, ranges ignored (200),
// and transfers cut after N bytes. Every request is recorded.
// Threading: the server runs on its own thread; the setters and requests()
// may be called from the test's thread at any time (one mutex).
// Tested by use in tests/hub/hub_client_test.cc and tests/cli/pull_command_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"

namespace met::testing {

struct FakeHubRequest {
  std::string method;
  std::string target;         // path and query
  std::string range;          // the Range header, if any
  std::string authorization;  // the Authorization header, if any
};

class FakeHub {
 public:
  FakeHub();
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT"
  std::string endpoint() const;

  // Serves `content` as `path` of `repo` ("ORG/REPO") at revision "main",
  // listed with its sha256 as the LFS oid (unless `listed_sha256` is given).
  void add_file(const std::string& repo, const std::string& path, std::string content,
                const std::string& listed_sha256 = "");
  // Answers 401 to any request to the hub's API or resolve URLs without
  // "Authorization: Bearer TOKEN".
  void require_token(const std::string& token);
  // Storage answers flip one byte of each body.
  void corrupt_bodies(bool on);
  // Storage answers ignore Range headers (200 with the whole file).
  void ignore_ranges(bool on);
  // The next `count` storage answers stop (the connection closes) after
  // `after_bytes` bytes of body.
  void cut_transfers(int count, size_t after_bytes);

  std::vector<FakeHubRequest> requests() const;
  // Requests whose target starts with `prefix`.
  int count_requests(const std::string& prefix) const;

 private:
  struct File {
    std::string content;
    std::string listed_sha256;
  };
  class Server;

  std::string answer(const FakeHubRequest& r, size_t* cut_after);
  std::string tree_answer(const std::string& repo) REQUIRES(mu_);
  std::string resolve_answer(const std::string& repo, const std::string& rev, const std::string& path) REQUIRES(mu_);
  std::string storage_answer(const FakeHubRequest& r, const std::string& key, size_t* cut_after) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, std::map<std::string, File>> repos_ GUARDED_BY(mu_);  // repo -> path -> file
  std::string token_ GUARDED_BY(mu_);
  bool corrupt_ GUARDED_BY(mu_) = false;
  bool ignore_ranges_ GUARDED_BY(mu_) = false;
  int cuts_left_ GUARDED_BY(mu_) = 0;
  size_t cut_after_bytes_ GUARDED_BY(mu_) = 0;
  std::vector<FakeHubRequest> requests_ GUARDED_BY(mu_);

  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
};

}  // namespace met::testing
