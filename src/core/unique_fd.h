// UniqueFd: owns a POSIX file descriptor from the moment it exists and
// closes it once (in the destructor, or earlier with close_checked, which
// reports close()'s own error: a delayed write error).
// Invariants: fd_ is -1 or an open descriptor this object alone closes.
// Threading: one owner. Used by kv/spill_store.cc and hub/http_download.cc,
// tested through their tests (tests/kv/spill_store_test.cc,
// tests/hub/http_download_test.cc).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace met {

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes now: 0, or the errno close() gave.
  int close_checked() {
    const int rc = ::close(std::exchange(fd_, -1));
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

}  // namespace met
