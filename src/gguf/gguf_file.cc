// GgufFile: maps a file and hands its bytes to the parser (gguf_reader.h);
// owns the mapping, the copied-out metadata and the tensor table.
// Invariants: see gguf_file.h. Threading: immutable after construction.
// Tested by tests/gguf/gguf_file_test.cc and tests/gguf/gguf_corrupt_test.cc.
#include "gguf/gguf_file.h"

#include <fmt/ranges.h>

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

namespace {

// Checks one assembled tensor and fills in num_elements and num_bytes.
Status check_assembled_tensor(GgufTensorSource& t) {
  GgufTensorInfo& info = t.info;
  if (info.name.empty()) return invalid_argument("a tensor has an empty name");
  if (info.shape.empty() || info.shape.size() > gguf_internal::kMaxTensorDims) {
    return invalid_argument("tensor '{}' has {} dimensions", info.name, info.shape.size());
  }
  uint64_t num_elements = 1;
  for (uint64_t d : info.shape) {
    if (d == 0 || __builtin_mul_overflow(num_elements, d, &num_elements)) {
      return invalid_argument("tensor '{}' has shape [{}]", info.name, fmt::join(info.shape, ", "));
    }
  }
  const GgmlTypeTraits& traits = ggml_type_traits(info.type);
  if (info.shape[0] % traits.block_size != 0) {
    return invalid_argument("tensor '{}': first dimension {} is not a multiple of {}'s block size {}", info.name,
                            info.shape[0], traits.name, traits.block_size);
  }
  info.num_elements = num_elements;
  info.num_bytes = num_elements / traits.block_size * traits.type_size;
  if (t.bytes.size() != info.num_bytes) {
    return invalid_argument("tensor '{}': {} bytes given for {} {} elements ({} bytes)", info.name, t.bytes.size(),
                            num_elements, traits.name, info.num_bytes);
  }
  return ok_status();
}

}  // namespace

Result<GgufFile> GgufFile::assemble(std::string source_name, GgufMetadata metadata,
                                    std::vector<GgufTensorSource> tensors, GgufBacking backing) {
  GgufFile file;
  file.source_name_ = std::move(source_name);
  file.version_ = 3;
  file.metadata_ = std::move(metadata);
  file.assembled_ = true;
  uint64_t offset = 0;
  for (GgufTensorSource& t : tensors) {
    MET_RETURN_IF_ERROR(check_assembled_tensor(t));
    if (!file.tensor_index_.emplace(t.info.name, file.tensors_.size()).second) {
      return invalid_argument("tensor '{}' appears twice", t.info.name);
    }
    offset = (offset + file.alignment_ - 1) / file.alignment_ * file.alignment_;
    t.info.offset = offset;
    offset += t.info.num_bytes;
    file.tensor_bytes_.push_back(t.bytes);
    file.tensors_.push_back(std::move(t.info));
  }
  file.assembled_bytes_ = offset;
  file.backing_ = std::move(backing);
  return file;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const GgufTensorInfo& info) const {
  if (assembled_) {
    const std::less<const GgufTensorInfo*> before;  // a total order, for any two pointers
    if (!before(&info, tensors_.data()) && before(&info, tensors_.data() + tensors_.size())) {
      return tensor_bytes_[static_cast<size_t>(&info - tensors_.data())];
    }
    auto it = tensor_index_.find(info.name);  // a copy of an entry
    MET_CHECK(it != tensor_index_.end(), "tensor '{}' is not a tensor of {}", info.name, source_name_);
    return tensor_bytes_[it->second];
  }
  MET_CHECK(info.offset <= bytes_.size() - data_offset_ &&
                info.num_bytes <= bytes_.size() - data_offset_ - info.offset,
            "tensor '{}' is not a tensor of {}", info.name, source_name_);
  return bytes_.subspan(data_offset_ + info.offset, info.num_bytes);
}

}  // namespace met
