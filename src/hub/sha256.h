// Sha256: an incremental SHA-256 over OpenSSL's libcrypto EVP API (an owned
// EVP_MD_CTX, freed on destruction), and sha256_file() over a file's bytes.
// Used to check a downloaded model against the sha256 the hub states.
// Invariants: hex digests are 64 lower-case hex digits; finish() may be
// called once per reset().
// Threading: one thread per object. Tested by tests/hub/sha256_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

struct evp_md_ctx_st;

namespace met {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Starts over, as if freshly made.
  void reset();
  void update(const void* data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // The digest of everything updated since the last reset, as hex.
  std::string finish_hex();

 private:
  struct CtxFree {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx_;
};

// The hex SHA-256 of `text`.
std::string sha256_hex(std::string_view text);

// Feeds the first `num_bytes` bytes of the file at `path` into `hash`; the
// message names the file when it cannot be read that far.
Status sha256_update_from_file(Sha256& hash, const std::string& path, uint64_t num_bytes);

// The hex SHA-256 of the whole file at `path`.
Result<std::string> sha256_file(const std::string& path);

}  // namespace met
