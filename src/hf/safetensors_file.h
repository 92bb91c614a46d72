// SafetensorsFile: one `.safetensors` file (an 8-byte little-endian header
// length, a JSON header, then the tensors' bytes) over a memory map: its
// tensor table and its `__metadata__` strings. Tensor bytes stay in the
// mapping (zero copy).
// Invariants: after open/parse succeeds every tensor has a known dtype, a
// shape whose element count times the dtype's size is exactly its byte
// range, and a byte range inside the data section; no two ranges overlap.
// Every violation is a kDataLoss error naming the file and the tensor.
// Threading: immutable after construction; any thread.
// Tested by tests/hf/safetensors_file_test.cc; fuzzed by fuzz/safetensors_fuzz.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"

namespace met {

// The dtypes of the safetensors format. Models load F32, F16 and BF16; the
// others are known so that a file holding them parses and the loader can
// name the tensor it cannot use.
enum class SafetensorsDtype : uint8_t {
  kF64, kF32, kF16, kBF16, kF8E4M3, kF8E5M2, kI64, kI32, kI16, kI8, kU64, kU32, kU16, kU8, kBool
};

std::string_view safetensors_dtype_name(SafetensorsDtype dtype);  // "F32", as in the header
std::optional<SafetensorsDtype> parse_safetensors_dtype(std::string_view name);
size_t safetensors_dtype_bytes(SafetensorsDtype dtype);

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<uint64_t> shape;  // outermost first (PyTorch order); empty for a scalar
  uint64_t num_elements = 1;
  std::span<const uint8_t> bytes;
};

class SafetensorsFile {
 public:
  // Maps and parses the file at `path`; errors are prefixed with the path.
  static Result<SafetensorsFile> open(const std::string& path);
  // Parses bytes the caller keeps alive (fuzzing, tests). Errors are prefixed
  // with source_name when it is not empty.
  static Result<SafetensorsFile> parse(std::span<const uint8_t> bytes, std::string source_name);

  const std::string& source_name() const { return source_name_; }
  // In header order.
  std::span<const SafetensorsTensor> tensors() const { return tensors_; }
  const SafetensorsTensor* find(std::string_view name) const;
  // `__metadata__`: string keys to string values (empty when absent).
  const std::map<std::string, std::string, std::less<>>& metadata() const { return metadata_; }

  // Hands the mapping to a new owner (the tensors' spans stay valid while it
  // lives). nullopt for parse().
  std::optional<MappedFile> release_mapping() { return std::exchange(mapping_, std::nullopt); }

 private:
  SafetensorsFile() = default;

  std::optional<MappedFile> mapping_;
  std::string source_name_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace met
