// GgufWriter: validates tensors as they are added, encodes the header
// (gguf_encoder.h), then streams each tensor's data from its fill callback to
// a file ("<path>.tmp", renamed when complete) or a vector.
// Invariants: see gguf_writer.h; the tmp file never survives a failed write.
// Threading: one thread per writer. Tested by tests/gguf/gguf_writer_test.cc.
#include "gguf/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "gguf/gguf_encoder.h"
#include "gguf/gguf_file.h"
#include "gguf/quote_bytes.h"

namespace met {
namespace {

constexpr uint32_t kWrittenVersion = 3;
constexpr size_t kMaxTensorNameBytes = 63;  // llama.cpp's GGML_MAX_NAME - 1
constexpr size_t kMaxTensorDims = 4;
constexpr std::string_view kAlignmentKey = "general.alignment";

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Bytes of a tensor of `shape` and `type`, or an error naming what is wrong.
Result<uint64_t> tensor_bytes(std::string_view name, const std::vector<uint64_t>& shape,
                              GgmlType type) {
  if (shape.empty() || shape.size() > kMaxTensorDims) {
    return invalid_argument("gguf writer: tensor {} has {} dimensions (must be 1 to {})",
                            quote_bytes(name), shape.size(), kMaxTensorDims);
  }
  uint64_t num_elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      return invalid_argument("gguf writer: tensor {} dimension {} is 0", quote_bytes(name), d);
    }
    if (__builtin_mul_overflow(num_elements, shape[d], &num_elements) ||
        num_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return invalid_argument("gguf writer: tensor {} has more elements than int64 can count",
                              quote_bytes(name));
    }
  }
  const GgmlTypeTraits& traits = ggml_type_traits(type);
  const std::optional<uint64_t> row_bytes = ggml_row_bytes(type, shape[0]);
  uint64_t num_bytes = 0;
  if (!row_bytes) {
    return invalid_argument(
        "gguf writer: tensor {} first dimension {} is not a multiple of {}'s block size {}",
        quote_bytes(name), shape[0], traits.name, traits.block_size);
  }
  if (__builtin_mul_overflow(*row_bytes, num_elements / shape[0], &num_bytes)) {
    return invalid_argument("gguf writer: tensor {} has more bytes than uint64 can count",
                            quote_bytes(name));
  }
  return num_bytes;
}

// A file opened for writing; closed (not synced) on destruction.
class OutputFile {
 public:
  ~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status open(const std::string& path) {
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return io_error("cannot create '{}': {}", path, std::strerror(errno));
    return ok_status();
  }
  Status write(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return io_error("cannot write '{}': {}", path_, std::strerror(errno));
      bytes = bytes.subspan(static_cast<size_t>(n));
    }
    return ok_status();
  }
  // Flushes to disk and closes.
  Status finish() {
    const bool synced = ::fsync(fd_) == 0;
    const int sync_errno = errno;
    const bool closed = ::close(fd_) == 0;
    fd_ = -1;
    if (!synced) return io_error("cannot sync '{}': {}", path_, std::strerror(sync_errno));
    if (!closed) return io_error("cannot close '{}': {}", path_, std::strerror(errno));
    return ok_status();
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  MET_CHECK(
      alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment <= (uint64_t{1} << 31),
      "GGUF alignment {} is not a power of two in [1, 2^31]", alignment);
}

void GgufWriter::set(std::string key, GgufValue value) {
  metadata_.set(std::move(key), std::move(value));
}

Status GgufWriter::add_tensor(std::string name, std::vector<uint64_t> shape, GgmlType type,
                              Fill fill) {
  if (name.size() > kMaxTensorNameBytes) {
    return invalid_argument("gguf writer: tensor name {} is {} bytes (at most {})",
                            quote_bytes(name), name.size(), kMaxTensorNameBytes);
  }
  if (tensor_names_.contains(name)) {
    return invalid_argument("gguf writer: duplicate tensor name {}", quote_bytes(name));
  }
  if (!fill) return invalid_argument("gguf writer: tensor {} has no fill", quote_bytes(name));
  MET_ASSIGN_OR_RETURN(const uint64_t num_bytes, tensor_bytes(name, shape, type));
  tensor_names_.insert(name);
  tensors_.push_back(
      PendingTensor{std::move(name), std::move(shape), type, num_bytes, std::move(fill)});
  return ok_status();
}

Status GgufWriter::add_tensor_bytes(std::string name, std::vector<uint64_t> shape, GgmlType type,
                                    std::vector<uint8_t> data) {
  MET_ASSIGN_OR_RETURN(const uint64_t num_bytes, tensor_bytes(name, shape, type));
  if (data.size() != num_bytes) {
    return invalid_argument("gguf writer: tensor {} needs {} bytes of {} data, got {}",
                            quote_bytes(name), num_bytes, ggml_type_name(type), data.size());
  }
  Fill fill = [data = std::move(data)](std::span<uint8_t> out) {
    std::memcpy(out.data(), data.data(), out.size());
    return ok_status();
  };
  return add_tensor(std::move(name), std::move(shape), type, std::move(fill));
}

Result<std::vector<uint8_t>> GgufWriter::encode_header() const {
  std::vector<uint8_t> bytes;
  gguf_internal::GgufEncoder encoder(&bytes);
  const bool append_alignment =
      alignment_ != kGgufDefaultAlignment && !metadata_.contains(kAlignmentKey);
  encoder.put<uint32_t>(kGgufMagic);
  encoder.put<uint32_t>(kWrittenVersion);
  encoder.put<uint64_t>(tensors_.size());
  encoder.put<uint64_t>(metadata_.size() + (append_alignment ? 1 : 0));
  const GgufValue alignment_value(static_cast<uint32_t>(alignment_));
  for (const auto& [key, value] : metadata_.entries()) {
    const GgufValue& written = key == kAlignmentKey ? alignment_value : value;
    encoder.put_string(key);
    encoder.put<uint32_t>(static_cast<uint32_t>(written.type()));
    MET_RETURN_IF_ERROR(encoder.put_value(key, written));
  }
  if (append_alignment) {
    encoder.put_string(kAlignmentKey);
    encoder.put<uint32_t>(static_cast<uint32_t>(GgufType::kUint32));
    MET_RETURN_IF_ERROR(encoder.put_value(kAlignmentKey, alignment_value));
  }
  uint64_t data_offset = 0;
  for (const PendingTensor& tensor : tensors_) {
    encoder.put_string(tensor.name);
    encoder.put<uint32_t>(static_cast<uint32_t>(tensor.shape.size()));
    for (const uint64_t dim : tensor.shape) encoder.put<uint64_t>(dim);
    encoder.put<uint32_t>(static_cast<uint32_t>(tensor.type));
    encoder.put<uint64_t>(data_offset);
    data_offset = align_up(data_offset + tensor.num_bytes, alignment_);
  }
  encoder.pad_to(alignment_);
  return bytes;
}

Status GgufWriter::write_to(const Sink& sink) const {
  MET_ASSIGN_OR_RETURN(const std::vector<uint8_t> header, encode_header());
  MET_RETURN_IF_ERROR(sink(header));
  std::vector<uint8_t> scratch;
  for (const PendingTensor& tensor : tensors_) {
    const uint64_t padded_bytes = align_up(tensor.num_bytes, alignment_);
    scratch.assign(padded_bytes, 0);
    Status filled = tensor.fill(std::span<uint8_t>(scratch.data(), tensor.num_bytes));
    if (!filled.ok()) {
      return filled.with_prefix(fmt::format("gguf writer: tensor {}", quote_bytes(tensor.name)));
    }
    MET_RETURN_IF_ERROR(sink(scratch));
  }
  return ok_status();
}

Status GgufWriter::write_file(const std::string& path) const {
  const std::string tmp_path = path + ".tmp";
  Status status;
  {
    OutputFile file;
    status = file.open(tmp_path);
    if (status.ok()) {
      status = write_to([&](std::span<const uint8_t> bytes) { return file.write(bytes); });
    }
    if (status.ok()) status = file.finish();
  }
  if (status.ok() && std::rename(tmp_path.c_str(), path.c_str()) != 0) {
    status = io_error("cannot rename '{}' to '{}': {}", tmp_path, path, std::strerror(errno));
  }
  if (!status.ok()) ::unlink(tmp_path.c_str());
  return status;
}

Result<std::vector<uint8_t>> GgufWriter::write_buffer() const {
  std::vector<uint8_t> out;
  MET_RETURN_IF_ERROR(write_to([&](std::span<const uint8_t> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
    return ok_status();
  }));
  return out;
}

}  // namespace met
