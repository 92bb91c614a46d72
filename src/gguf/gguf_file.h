// GgufFile: a parsed GGUF v2/v3 file over a memory map (or borrowed bytes).
// Metadata is copied out; tensor data stays in the mapping (zero copy).
// An assembled GgufFile (assemble(): a model converted in memory, such as a
// Hugging Face folder) has no file bytes: each tensor's data is a span into
// mappings or buffers the GgufFile owns (GgufBacking).
// Invariants: after open/parse succeeds every tensor's data lies inside the
// file, is aligned to `general.alignment`, and no two tensors overlap; every
// count and length was checked against the bytes left before anything was
// allocated for it. Any violation is a kDataLoss error naming the field and
// its byte offset. GGUF v1 is refused with a message naming the version.
// Threading: immutable after construction; any thread.
// Tested by tests/gguf/gguf_file_test.cc and tests/gguf/gguf_corrupt_test.cc;
// fuzzed by fuzz/gguf_reader_fuzz.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_value.h"

namespace met {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint64_t kGgufDefaultAlignment = 32;

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> shape;  // ne: shape[0] is the contiguous dimension
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;          // from the start of the data section
  uint64_t num_elements = 0;
  uint64_t num_bytes = 0;
};

// A tensor of an assembled file: its table entry (offset is ignored) and
// where its bytes are, inside a GgufBacking given with it.
struct GgufTensorSource {
  GgufTensorInfo info;
  std::span<const uint8_t> bytes;
};

// What an assembled GgufFile keeps alive for its tensors' bytes. Moving a
// MappedFile or a vector does not move the bytes, so spans stay valid.
struct GgufBacking {
  std::vector<MappedFile> mappings;
  std::vector<std::vector<uint8_t>> buffers;
};

class GgufFile {
 public:
  // Maps and parses the file at `path`. Errors are prefixed with the path.
  static Result<GgufFile> open(const std::string& path);
  // Parses bytes the caller keeps alive for the GgufFile's lifetime. Errors
  // are prefixed with source_name when it is not empty.
  static Result<GgufFile> parse(std::span<const uint8_t> bytes, std::string source_name);
  // A file made in memory: version 3, default alignment, data_offset 0, each
  // tensor's offset where a written file would put it (aligned, in order) and
  // file_size() the sum of those. Fails (kInvalidArgument, naming the tensor)
  // on a duplicate or empty name, an empty shape or a zero dimension, a first
  // dimension that is not a multiple of the type's block size, or bytes whose
  // size is not the tensor's.
  static Result<GgufFile> assemble(std::string source_name, GgufMetadata metadata,
                                   std::vector<GgufTensorSource> tensors, GgufBacking backing);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the data section
  size_t file_size() const { return assembled_ ? assembled_bytes_ : bytes_.size(); }
  // Whether every tensor's bytes lie in one read-only file mapping (open());
  // false for parse() and assemble(), whose bytes may be owned memory.
  bool is_mapped_file() const { return mapping_.has_value(); }
  const std::string& source_name() const { return source_name_; }

  const GgufMetadata& metadata() const { return metadata_; }
  std::span<const GgufTensorInfo> tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // The tensor's bytes inside the mapping.
  std::span<const uint8_t> tensor_data(const GgufTensorInfo& info) const;

 private:
  GgufFile() = default;

  std::optional<MappedFile> mapping_;
  std::span<const uint8_t> bytes_;
  std::string source_name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  GgufMetadata metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;  // name -> position in tensors_
  // assemble() only: each tensor's bytes (by position in tensors_) and their owners.
  bool assembled_ = false;
  uint64_t assembled_bytes_ = 0;
  std::vector<std::span<const uint8_t>> tensor_bytes_;
  GgufBacking backing_;
};

}  // namespace met
