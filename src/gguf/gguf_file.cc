// GgufFile: maps a file and hands its bytes to the parser (gguf_reader.h);
// owns the mapping, the copied-out metadata and the tensor table.
// Invariants: see gguf_file.h. Threading: immutable after construction.
// Tested by tests/gguf/gguf_file_test.cc and tests/gguf/gguf_corrupt_test.cc.
#include "gguf/gguf_file.h"

#include "gguf/gguf_reader.h"

namespace met {

Result<GgufFile> GgufFile::open(const std::string& path) {
  MET_ASSIGN_OR_RETURN(MappedFile mapping, MappedFile::open(path));
  const std::span<const uint8_t> bytes = mapping.bytes();
  MET_ASSIGN_OR_RETURN(GgufFile file, parse(bytes, path));
  file.mapping_.emplace(std::move(mapping));  // the mapped bytes do not move
  return file;
}

Result<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes, std::string source_name) {
  Result<gguf_internal::ParsedGguf> parsed = gguf_internal::read_gguf(bytes);
  if (!parsed.ok()) {
    Status status = parsed.status().with_prefix("gguf");
    if (!source_name.empty()) status = status.with_prefix(source_name);
    return status;
  }
  GgufFile file;
  file.bytes_ = bytes;
  file.source_name_ = std::move(source_name);
  file.version_ = parsed->version;
  file.alignment_ = parsed->alignment;
  file.data_offset_ = parsed->data_offset;
  file.metadata_ = std::move(parsed->metadata);
  file.tensors_ = std::move(parsed->tensors);
  file.tensor_index_ = std::move(parsed->tensor_index);
  return file;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const GgufTensorInfo& info) const {
  MET_CHECK(info.offset <= bytes_.size() - data_offset_ &&
                info.num_bytes <= bytes_.size() - data_offset_ - info.offset,
            "tensor '{}' is not a tensor of {}", info.name, source_name_);
  return bytes_.subspan(data_offset_ + info.offset, info.num_bytes);
}

}  // namespace met
