// SpillStore over POSIX files. Tested by tests/kv/spill_store_test.cc.
#include "kv/spill_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <fmt/format.h>

#include "core/little_endian.h"
#include "core/unique_fd.h"

namespace met {
namespace {

constexpr std::array<uint8_t, 8> kMagic = {'M', 'E', 'T', 'S', 'P', 'I', 'L', 'L'};
constexpr uint32_t kVersion = 2;  // 2: a recurrent model's state slot after the blocks
constexpr size_t kChecksumOffset = 48;
using Header = std::array<uint8_t, kSpillHeaderBytes>;

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }


// 0 on success, else errno (EIO for an unexpected end of file).
int write_all(int fd, const uint8_t* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

int read_all(int fd, uint8_t* data, size_t n, off_t offset) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, data, n, offset);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (r == 0) return EIO;  // the file shrank under us
    data += r;
    n -= static_cast<size_t>(r);
    offset += r;
  }
  return 0;
}

uint64_t checksum(const Header& header, const std::vector<uint8_t>& payload) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header.data(), kChecksumOffset);
  XXH3_64bits_update(&state, payload.data(), payload.size());
  return XXH3_64bits_digest(&state);
}

// Everything but the checksum, which needs the payload too.
Header encode_header(const SpillImage& image) {
  Header h{};
  std::copy(kMagic.begin(), kMagic.end(), h.begin());
  put_u32(&h[8], kVersion);
  put_u32(&h[12], static_cast<uint32_t>(image.num_blocks));
  put_u32(&h[16], static_cast<uint32_t>(image.shape.dtype));
  put_u32(&h[20], static_cast<uint32_t>(image.shape.num_layers));
  put_u32(&h[24], static_cast<uint32_t>(image.shape.num_kv_heads));
  put_u32(&h[28], static_cast<uint32_t>(image.shape.head_dim));
  put_u64(&h[32], static_cast<uint64_t>(image.shape.block_bytes));
  put_u64(&h[40], static_cast<uint64_t>(image.shape.state_bytes));
  return h;
}

KvShape decode_shape(const Header& h) {
  return KvShape{.dtype = static_cast<GgmlType>(get_u32(&h[16])),
                 .num_layers = static_cast<int32_t>(get_u32(&h[20])),
                 .num_kv_heads = static_cast<int32_t>(get_u32(&h[24])),
                 .head_dim = static_cast<int32_t>(get_u32(&h[28])),
                 .block_bytes = static_cast<int64_t>(get_u64(&h[32])),
                 .state_bytes = static_cast<int64_t>(get_u64(&h[40]))};
}

std::string describe(const KvShape& s) {
  const auto traits = ggml_type_traits(static_cast<uint32_t>(s.dtype));
  const std::string dtype =
      traits ? std::string(traits->name) : fmt::format("type {}", static_cast<uint32_t>(s.dtype));
  return fmt::format("{} x {} layers x {} kv heads x head_dim {} ({} bytes per block, {} of state)", dtype,
                     s.num_layers, s.num_kv_heads, s.head_dim, s.block_bytes, s.state_bytes);
}

// num_blocks * block_bytes + state_bytes, or nullopt when any is negative or
// it overflows.
std::optional<int64_t> payload_bytes(int64_t num_blocks, const KvShape& shape) {
  int64_t n = 0;
  if (num_blocks < 0 || shape.block_bytes < 0 || shape.state_bytes < 0 ||
      __builtin_mul_overflow(num_blocks, shape.block_bytes, &n) ||
      __builtin_add_overflow(n, shape.state_bytes, &n) || n > std::numeric_limits<int64_t>::max() - kSpillHeaderBytes) {
    return std::nullopt;
  }
  return n;
}

// Magic, version and shape; the size and checksum need the file.
Status check_header(const std::string& name, const Header& header, const KvShape& expected) {
  if (!std::equal(kMagic.begin(), kMagic.end(), header.begin())) {
    return data_loss("spill: {}: not a spill image (bad magic)", name);
  }
  if (const uint32_t version = get_u32(&header[8]); version != kVersion) {
    return data_loss("spill: {}: version {}, expected {}", name, version, kVersion);
  }
  if (const KvShape shape = decode_shape(header); shape != expected) {
    return data_loss("spill: {}: shape {} does not match the cache's {}", name, describe(shape),
                     describe(expected));
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<SpillStore>> SpillStore::create(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("spill: cannot create directory {}: {}", dir.string(), ec.message());
  if (!std::filesystem::is_directory(dir, ec)) {
    return io_error("spill: {} is not a directory", dir.string());
  }
  const int64_t pid = ::getpid();
  const std::filesystem::path probe = dir / fmt::format(".met-spill-probe-{}", pid);
  UniqueFd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return io_error("spill: directory {} is not writable: {}", dir.string(), errno_text(errno));
  }
  fd.close_checked();
  if (::unlink(probe.c_str()) != 0) {
    return io_error("spill: cannot remove probe file {}: {}", probe.string(), errno_text(errno));
  }
  return std::unique_ptr<SpillStore>(new SpillStore(dir, pid));
}

SpillStore::SpillStore(std::filesystem::path dir, int64_t pid) : dir_(std::move(dir)), pid_(pid) {}

SpillStore::~SpillStore() {
  for (const SpillId id : saved_) {
    std::error_code ec;
    std::filesystem::remove(path_of(id), ec);  // best effort: nothing to report to
  }
}

std::filesystem::path SpillStore::path_of(SpillId id) const {
  return dir_ / fmt::format("met-spill-{}-{}.kv", pid_, id.value());
}

Status SpillStore::save(SpillId id, const SpillImage& image) {
  const std::filesystem::path path = path_of(id);
  const std::optional<int64_t> payload = payload_bytes(image.num_blocks, image.shape);
  if (!payload || image.num_blocks > std::numeric_limits<int32_t>::max() ||
      static_cast<uint64_t>(*payload) != image.bytes.size()) {
    return invalid_argument("spill: image for {} holds {} bytes, not {} blocks of {} bytes and {} of state",
                            path.string(), image.bytes.size(), image.num_blocks, image.shape.block_bytes,
                            image.shape.state_bytes);
  }
  Header header = encode_header(image);
  put_u64(&header[kChecksumOffset], checksum(header, image.bytes));

  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const auto fail = [&](std::string_view what, int err) {
    ::unlink(tmp.c_str());
    return io_error("spill: {} {}: {}", what, tmp.string(), errno_text(err));
  };
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) return fail("cannot create", errno);
  if (const int err = write_all(fd.get(), header.data(), header.size())) return fail("cannot write", err);
  if (const int err = write_all(fd.get(), image.bytes.data(), image.bytes.size())) {
    return fail("cannot write", err);
  }
  if (const int err = fd.close_checked()) return fail("cannot close", err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io_error("spill: cannot rename {} to {}: {}", tmp.string(), path.string(), errno_text(err));
  }
  saved_.insert(id);
  return ok_status();
}

Status SpillStore::open(SpillId id, const KvShape& expected, SpillImage& out) {
  const std::filesystem::path path = path_of(id);
  const std::string name = path.string();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT) return not_found("spill: {} does not exist", name);
    return io_error("spill: cannot open {}: {}", name, errno_text(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_error("spill: cannot stat {}: {}", name, errno_text(errno));
  const int64_t file_bytes = st.st_size;
  if (file_bytes < kSpillHeaderBytes) {
    return data_loss("spill: {}: truncated: expected at least {} bytes of header, found {}", name,
                     kSpillHeaderBytes, file_bytes);
  }
  Header header{};
  if (const int err = read_all(fd.get(), header.data(), header.size(), 0)) {
    return io_error("spill: cannot read {}: {}", name, errno_text(err));
  }
  MET_RETURN_IF_ERROR(check_header(name, header, expected));
  const uint32_t num_blocks = get_u32(&header[12]);
  const std::optional<int64_t> payload = payload_bytes(num_blocks, expected);
  if (!payload || num_blocks > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    return data_loss("spill: {}: {} blocks of {} bytes is out of range", name, num_blocks,
                     expected.block_bytes);
  }
  if (const int64_t want = kSpillHeaderBytes + *payload; file_bytes != want) {
    return data_loss("spill: {}: {}: expected {} bytes, found {}", name,
                     file_bytes < want ? "truncated" : "too long", want, file_bytes);
  }
  out.bytes.resize(static_cast<size_t>(*payload));
  if (const int err = read_all(fd.get(), out.bytes.data(), out.bytes.size(), kSpillHeaderBytes)) {
    return io_error("spill: cannot read {}: {}", name, errno_text(err));
  }
  const uint64_t stored = get_u64(&header[kChecksumOffset]);
  if (const uint64_t computed = checksum(header, out.bytes); computed != stored) {
    return data_loss("spill: {}: checksum mismatch (stored {:016x}, computed {:016x})", name, stored,
                     computed);
  }
  out.shape = expected;
  out.num_blocks = static_cast<int32_t>(num_blocks);
  return ok_status();
}

Status SpillStore::remove(SpillId id) {
  const std::filesystem::path path = path_of(id);
  if (::unlink(path.c_str()) != 0) {
    const int err = errno;
    if (err == ENOENT) return not_found("spill: {} does not exist", path.string());
    return io_error("spill: cannot remove {}: {}", path.string(), errno_text(err));
  }
  saved_.erase(id);
  return ok_status();
}

}  // namespace met
