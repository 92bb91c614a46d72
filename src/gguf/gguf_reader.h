// The GGUF parser behind GgufFile::parse, split by section: the header and
// the alignment rule here (gguf_reader.cc), metadata values
// (gguf_metadata_reader.cc), the tensor table and the data layout
// (gguf_tensor_table.cc). Internal to met_gguf: callers use GgufFile.
// Invariants: see gguf_file.h; every error is one kDataLoss (or, for a GGUF v1
// or big-endian file, kUnimplemented) line naming the field and its offset,
// without the "gguf: " prefix that GgufFile adds.
// Threading: pure functions over borrowed bytes.
// Tested by tests/gguf/gguf_file_test.cc and tests/gguf/gguf_corrupt_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/byte_cursor.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_value.h"

namespace met::gguf_internal {

// Smallest on-disk sizes, used to bound counts before anything is reserved.
inline constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;  // key len, type, u8
inline constexpr uint64_t kMinTensorInfoBytes =
    8 + 4 + 8 + 4 + 8;  // name len, n_dims, ne0, type, offset
inline constexpr uint32_t kMaxTensorDims = 4;
// Far above any real model (tens of keys, thousands of tensors); they bound
// the bookkeeping a file of tiny hostile entries could make the reader build.
inline constexpr uint64_t kMaxMetadataKeys = uint64_t{1} << 20;
inline constexpr uint64_t kMaxTensors = uint64_t{1} << 20;
// general.alignment must be a power of two no larger than this (u32 per spec).
inline constexpr uint64_t kMaxAlignment = uint64_t{1} << 31;

struct ParsedGguf {
  uint32_t version = 0;
  uint64_t alignment = kGgufDefaultAlignment;
  uint64_t data_offset = 0;
  GgufMetadata metadata;
  std::vector<GgufTensorInfo> tensors;
  std::map<std::string, size_t, std::less<>> tensor_index;  // name -> position
};

Result<ParsedGguf> read_gguf(std::span<const uint8_t> bytes);

struct ReadMetadata {
  GgufMetadata metadata;
  uint64_t alignment_value_offset = 0;  // where general.alignment's value starts, if present
};

// Reads num_keys key/value pairs at the cursor.
Result<ReadMetadata> read_metadata(ByteCursor& cursor, uint64_t num_keys);

// Reads num_tensors tensor infos at the cursor; offsets must be multiples of
// alignment. Fills parsed->tensors and parsed->tensor_index.
Status read_tensor_table(ByteCursor& cursor, uint64_t num_tensors, ParsedGguf* parsed);

// Checks every tensor's data lies in [data_offset, file_size) without overlap.
Status check_tensor_layout(const ParsedGguf& parsed, uint64_t file_size);

}  // namespace met::gguf_internal
