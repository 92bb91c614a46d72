// Reads the GGUF tensor table (name, shape, ggml type, data offset per tensor)
// and checks the data layout: every tensor inside the file, aligned, and no
// two overlapping. Shapes are validated before any size arithmetic, and every
// product is overflow-checked.
// Threading: pure over borrowed bytes. Tested by tests/gguf/gguf_file_test.cc
// and tests/gguf/gguf_corrupt_test.cc.
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "gguf/gguf_reader.h"
#include "gguf/quote_bytes.h"

namespace met::gguf_internal {
namespace {

Result<std::string> read_name(ByteCursor& cursor, uint64_t index) {
  const uint64_t at = cursor.offset();
  const std::optional<uint64_t> num_bytes = cursor.read<uint64_t>();
  if (!num_bytes) return cursor.past_end(fmt::format("tensor #{}: name length", index), at);
  const std::optional<std::string_view> name = cursor.read_text(*num_bytes);
  if (!name) {
    return cursor.past_end(fmt::format("tensor #{}: name of {} bytes", index, *num_bytes), at);
  }
  return std::string(*name);
}

// Reads n_dims and the dimensions; sets info->shape and info->num_elements.
Status read_shape(ByteCursor& cursor, std::string_view where, GgufTensorInfo* info) {
  const uint64_t at = cursor.offset();
  const std::optional<uint32_t> num_dims = cursor.read<uint32_t>();
  if (!num_dims) return cursor.past_end(fmt::format("{}: dimension count", where), at);
  if (*num_dims == 0 || *num_dims > kMaxTensorDims) {
    return data_loss("{}: {} dimensions at offset {} (must be 1 to {})", where, *num_dims, at,
                     kMaxTensorDims);
  }
  const uint64_t dims_at = cursor.offset();
  info->shape.resize(*num_dims);
  if (!cursor.read_array(info->shape.data(), *num_dims)) {
    return cursor.past_end(fmt::format("{}: {} dimensions", where, *num_dims), dims_at);
  }
  uint64_t num_elements = 1;
  for (uint32_t d = 0; d < *num_dims; ++d) {
    if (info->shape[d] == 0) {
      return data_loss("{}: dimension {} is 0 at offset {}", where, d, dims_at + 8 * d);
    }
    if (__builtin_mul_overflow(num_elements, info->shape[d], &num_elements) ||
        num_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return data_loss("{}: shape [{}] at offset {} has more elements than int64 can count", where,
                       fmt::join(info->shape, ", "), dims_at);
    }
  }
  info->num_elements = num_elements;
  return ok_status();
}

// Reads the ggml type; sets info->type and info->num_bytes.
Status read_type(ByteCursor& cursor, std::string_view where, GgufTensorInfo* info) {
  const uint64_t at = cursor.offset();
  const std::optional<uint32_t> raw_type = cursor.read<uint32_t>();
  if (!raw_type) return cursor.past_end(fmt::format("{}: ggml type", where), at);
  const std::optional<GgmlTypeTraits> traits = ggml_type_traits(*raw_type);
  if (!traits) return data_loss("{}: unknown ggml type {} at offset {}", where, *raw_type, at);
  info->type = traits->type;
  if (info->shape[0] % traits->block_size != 0) {
    return data_loss(
        "{}: first dimension {} is not a multiple of {}'s block size {} (type at "
        "offset {})",
        where, info->shape[0], traits->name, traits->block_size, at);
  }
  const uint64_t num_blocks = info->num_elements / traits->block_size;
  if (__builtin_mul_overflow(num_blocks, uint64_t{traits->type_size}, &info->num_bytes)) {
    return data_loss(
        "{}: {} elements of {} take more bytes than uint64 can count (type at "
        "offset {})",
        where, info->num_elements, traits->name, at);
  }
  return ok_status();
}

Result<GgufTensorInfo> read_tensor_info(ByteCursor& cursor, uint64_t index, uint64_t alignment) {
  GgufTensorInfo info;
  MET_ASSIGN_OR_RETURN(info.name, read_name(cursor, index));
  const std::string where = fmt::format("tensor #{} {}", index, quote_bytes(info.name));
  MET_RETURN_IF_ERROR(read_shape(cursor, where, &info));
  MET_RETURN_IF_ERROR(read_type(cursor, where, &info));
  const uint64_t at = cursor.offset();
  const std::optional<uint64_t> offset = cursor.read<uint64_t>();
  if (!offset) return cursor.past_end(fmt::format("{}: data offset", where), at);
  if (*offset % alignment != 0) {
    return data_loss("{}: data offset {} at offset {} is not a multiple of the alignment {}", where,
                     *offset, at, alignment);
  }
  info.offset = *offset;
  return info;
}

std::string tensor_where(const ParsedGguf& parsed, size_t index) {
  return fmt::format("tensor #{} {}", index, quote_bytes(parsed.tensors[index].name));
}

}  // namespace

Status read_tensor_table(ByteCursor& cursor, uint64_t num_tensors, ParsedGguf* parsed) {
  if (!cursor.fits(num_tensors, kMinTensorInfoBytes)) {
    return cursor.past_end(fmt::format("tensor table of {} tensors", num_tensors), cursor.offset());
  }
  parsed->tensors.reserve(num_tensors);
  for (uint64_t i = 0; i < num_tensors; ++i) {
    const uint64_t at = cursor.offset();
    MET_ASSIGN_OR_RETURN(GgufTensorInfo info, read_tensor_info(cursor, i, parsed->alignment));
    auto [it, inserted] = parsed->tensor_index.emplace(info.name, parsed->tensors.size());
    if (!inserted) {
      return data_loss("tensor #{} {} at offset {} duplicates the name of tensor #{}", i,
                       quote_bytes(info.name), at, it->second);
    }
    parsed->tensors.push_back(std::move(info));
  }
  return ok_status();
}

Status check_tensor_layout(const ParsedGguf& parsed, uint64_t file_size) {
  if (parsed.tensors.empty()) return ok_status();
  const uint64_t data_offset = parsed.data_offset;
  if (data_offset > file_size) {
    return data_loss("data section at offset {} is past end of file (file is {} bytes)",
                     data_offset, file_size);
  }
  const uint64_t data_bytes = file_size - data_offset;
  for (size_t i = 0; i < parsed.tensors.size(); ++i) {
    const GgufTensorInfo& info = parsed.tensors[i];
    if (info.offset > data_bytes || info.num_bytes > data_bytes - info.offset) {
      return data_loss(
          "{}: {} bytes of data at data offset {} past end of file (data section "
          "starts at offset {}, file is {} bytes)",
          tensor_where(parsed, i), info.num_bytes, info.offset, data_offset, file_size);
    }
  }
  std::vector<size_t> order(parsed.tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return parsed.tensors[a].offset < parsed.tensors[b].offset;
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const GgufTensorInfo& prev = parsed.tensors[order[k - 1]];
    const GgufTensorInfo& next = parsed.tensors[order[k]];
    if (prev.offset + prev.num_bytes > next.offset) {
      return data_loss("{}: data [{}, {}) overlaps {} data [{}, {})",
                       tensor_where(parsed, order[k]), data_offset + next.offset,
                       data_offset + next.offset + next.num_bytes,
                       tensor_where(parsed, order[k - 1]), data_offset + prev.offset,
                       data_offset + prev.offset + prev.num_bytes);
    }
  }
  return ok_status();
}

}  // namespace met::gguf_internal
