// read_gguf: the GGUF header (magic, version, counts), general.alignment, and
// the order of sections: header, metadata, tensor table, padding, data.
// Invariants: see gguf_reader.h. Threading: pure over borrowed bytes.
// Tested by tests/gguf/gguf_file_test.cc and tests/gguf/gguf_corrupt_test.cc.
#include "gguf/gguf_reader.h"

#include "gguf/quote_bytes.h"

namespace met::gguf_internal {
namespace {

struct Header {
  uint32_t version = 0;
  uint64_t num_tensors = 0;
  uint64_t num_keys = 0;
};

Status check_version(uint32_t version) {
  if (version == 2 || version == 3) return ok_status();
  if (version == 1) {
    return unimplemented(
        "version 1 files are not supported (met reads GGUF versions 2 and 3; re-convert the "
        "model with a current llama.cpp)");
  }
  const uint32_t swapped = __builtin_bswap32(version);
  if (swapped == 2 || swapped == 3) {
    return unimplemented("big-endian GGUF (version {}) is not supported", swapped);
  }
  return data_loss("unknown version {} at offset 4 (met reads GGUF versions 2 and 3)", version);
}

Result<Header> read_header(ByteCursor& cursor) {
  Header header;
  const std::optional<uint32_t> magic = cursor.read<uint32_t>();
  if (!magic) return cursor.past_end("header: magic", 0);
  if (*magic != kGgufMagic) {
    const std::string_view bytes(reinterpret_cast<const char*>(&*magic), sizeof(*magic));
    return data_loss("bad magic {} at offset 0, expected 'GGUF': not a GGUF file",
                     quote_bytes(bytes));
  }
  const std::optional<uint32_t> version = cursor.read<uint32_t>();
  if (!version) return cursor.past_end("header: version", 4);
  MET_RETURN_IF_ERROR(check_version(*version));
  header.version = *version;
  const std::optional<uint64_t> num_tensors = cursor.read<uint64_t>();
  if (!num_tensors) return cursor.past_end("header: tensor count", 8);
  const std::optional<uint64_t> num_keys = cursor.read<uint64_t>();
  if (!num_keys) return cursor.past_end("header: metadata key count", 16);
  if (!cursor.fits(*num_tensors, kMinTensorInfoBytes)) {
    return cursor.past_end(fmt::format("header: tensor count {}", *num_tensors), 8);
  }
  if (!cursor.fits(*num_keys, kMinKeyValueBytes)) {
    return cursor.past_end(fmt::format("header: metadata key count {}", *num_keys), 16);
  }
  if (*num_tensors > kMaxTensors) {
    return data_loss("header: tensor count {} at offset 8 is more than met accepts ({})",
                     *num_tensors, kMaxTensors);
  }
  if (*num_keys > kMaxMetadataKeys) {
    return data_loss("header: metadata key count {} at offset 16 is more than met accepts ({})",
                     *num_keys, kMaxMetadataKeys);
  }
  header.num_tensors = *num_tensors;
  header.num_keys = *num_keys;
  return header;
}

// general.alignment, if present: any integer type (u32 per spec), a power of
// two in [1, kMaxAlignment].
Result<uint64_t> read_alignment(const ReadMetadata& read) {
  const GgufValue* value = read.metadata.find("general.alignment");
  if (value == nullptr) return kGgufDefaultAlignment;
  const uint64_t at = read.alignment_value_offset;
  Result<uint64_t> alignment = read.metadata.get_u64("general.alignment");
  if (!alignment.ok()) {
    return data_loss("metadata key 'general.alignment' at offset {} is {}, expected uint32", at,
                     value->describe());
  }
  if (*alignment == 0 || (*alignment & (*alignment - 1)) != 0 || *alignment > kMaxAlignment) {
    return data_loss(
        "metadata key 'general.alignment' = {} at offset {} is not a power of two in [1, {}]",
        *alignment, at, kMaxAlignment);
  }
  return *alignment;
}

}  // namespace

Result<ParsedGguf> read_gguf(std::span<const uint8_t> bytes) {
  ByteCursor cursor(bytes);
  MET_ASSIGN_OR_RETURN(const Header header, read_header(cursor));
  MET_ASSIGN_OR_RETURN(ReadMetadata read, read_metadata(cursor, header.num_keys));
  ParsedGguf parsed;
  parsed.version = header.version;
  MET_ASSIGN_OR_RETURN(parsed.alignment, read_alignment(read));
  parsed.metadata = std::move(read.metadata);
  MET_RETURN_IF_ERROR(read_tensor_table(cursor, header.num_tensors, &parsed));
  // The data section starts at the first multiple of the alignment after the
  // table. A file without tensors may end before that (vocab-only files do).
  const uint64_t table_end = cursor.offset();
  const uint64_t padded_end =
      (table_end + parsed.alignment - 1) / parsed.alignment * parsed.alignment;
  parsed.data_offset = parsed.tensors.empty() ? std::min(padded_end, cursor.size()) : padded_end;
  MET_RETURN_IF_ERROR(check_tensor_layout(parsed, cursor.size()));
  return parsed;
}

}  // namespace met::gguf_internal
