// SHA-256 over libcrypto's EVP interface (sha256.h).
#include "hub/sha256.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <openssl/evp.h>

namespace met {
namespace {

constexpr size_t kReadChunkBytes = size_t{1} << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

void Sha256::CtxFree::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  MET_CHECK(ctx_ != nullptr, "EVP_MD_CTX_new failed");
  reset();
}

Sha256::~Sha256() = default;

void Sha256::reset() {
  MET_CHECK(EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1, "EVP_DigestInit_ex(sha256) failed");
}

void Sha256::update(const void* data, size_t size) {
  if (size == 0) return;
  MET_CHECK(EVP_DigestUpdate(ctx_.get(), data, size) == 1, "EVP_DigestUpdate failed");
}

std::string Sha256::finish_hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  MET_CHECK(EVP_DigestFinal_ex(ctx_.get(), digest, &size) == 1, "EVP_DigestFinal_ex failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view text) {
  Sha256 hash;
  hash.update(text);
  return hash.finish_hex();
}

Status sha256_update_from_file(Sha256& hash, const std::string& path, uint64_t num_bytes) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("{}: cannot open: {}", path, std::strerror(errno));
  std::vector<char> buf(kReadChunkBytes);
  uint64_t left = num_bytes;
  while (left > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
    const size_t got = std::fread(buf.data(), 1, want, f.get());
    if (got == 0) return io_error("{}: cannot read byte {} of {}", path, num_bytes - left, num_bytes);
    hash.update(buf.data(), got);
    left -= got;
  }
  return ok_status();
}

Result<std::string> sha256_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("{}: cannot open: {}", path, std::strerror(errno));
  Sha256 hash;
  std::vector<char> buf(kReadChunkBytes);
  size_t got = 0;
  while ((got = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) hash.update(buf.data(), got);
  if (std::ferror(f.get())) return io_error("{}: read error", path);
  return hash.finish_hex();
}

}  // namespace met
