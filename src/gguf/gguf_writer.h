// GgufWriter: builds a GGUF v3 file (metadata, tensor table, aligned data) and
// writes it in one pass, streaming each tensor's bytes from a fill callback so
// a model larger than memory can be written. The file appears atomically:
// bytes go to "<path>.tmp" and are renamed on success, removed on failure.
// Invariants: tensor names are unique; each tensor's first dimension is a
// multiple of its type's block size. Threading: one thread per writer.
// Tested by tests/gguf/gguf_writer_test.cc (round trips through GgufFile).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_value.h"

namespace met {

class GgufWriter {
 public:
  // Fills exactly out.size() bytes of a tensor's data.
  using Fill = std::function<Status(std::span<uint8_t> out)>;

  // REQUIRES: alignment is a power of two no larger than 2^31.
  explicit GgufWriter(uint64_t alignment = 32);

  // Sets a metadata key (GgufMetadata::set semantics). `general.alignment` is
  // written (as uint32) from the constructor's alignment when that is not 32
  // or when the caller set the key, whose value it then replaces.
  void set(std::string key, GgufValue value);
  GgufMetadata& metadata() { return metadata_; }

  // Fails (kInvalidArgument) on a duplicate name, a name of 64 bytes or more
  // (llama.cpp's limit), an empty or over-long shape, a zero dimension, a
  // first dimension that is not a multiple of the type's block size, or no
  // fill. `fill` is called once per write_file / write_buffer.
  Status add_tensor(std::string name, std::vector<uint64_t> shape, GgmlType type, Fill fill);
  // The same with the bytes given; data.size() must be the tensor's size.
  Status add_tensor_bytes(std::string name, std::vector<uint64_t> shape, GgmlType type,
                          std::vector<uint8_t> data);

  // A metadata array whose items do not match its elem_type, or that nests
  // deeper than kGgufMaxArrayDepth, fails with kInvalidArgument; a failing
  // fill fails the write with its status, prefixed with the tensor's name.
  Status write_file(const std::string& path) const;
  Result<std::vector<uint8_t>> write_buffer() const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<uint64_t> shape;
    GgmlType type;
    uint64_t num_bytes;
    Fill fill;
  };

  // Where write_to sends the bytes, in order: a file or a vector.
  using Sink = std::function<Status(std::span<const uint8_t> bytes)>;

  // Header, metadata, tensor table and the padding up to the data section.
  Result<std::vector<uint8_t>> encode_header() const;
  Status write_to(const Sink& sink) const;

  uint64_t alignment_;
  GgufMetadata metadata_;
  std::vector<PendingTensor> tensors_;
  std::set<std::string, std::less<>> tensor_names_;
};

}  // namespace met
