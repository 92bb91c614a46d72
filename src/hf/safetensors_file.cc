// SafetensorsFile: the header parser and its checks. Threading: see the header.
// Tested by tests/hf/safetensors_file_test.cc.
#include "hf/safetensors_file.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/little_endian.h"
#include "gguf/quote_bytes.h"

namespace met {
namespace {

struct DtypeEntry {
  SafetensorsDtype dtype;
  std::string_view name;
  size_t bytes;
};

constexpr std::array<DtypeEntry, 15> kDtypes = {{
    {SafetensorsDtype::kF64, "F64", 8},       {SafetensorsDtype::kF32, "F32", 4},
    {SafetensorsDtype::kF16, "F16", 2},       {SafetensorsDtype::kBF16, "BF16", 2},
    {SafetensorsDtype::kF8E4M3, "F8_E4M3", 1}, {SafetensorsDtype::kF8E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::kI64, "I64", 8},       {SafetensorsDtype::kI32, "I32", 4},
    {SafetensorsDtype::kI16, "I16", 2},       {SafetensorsDtype::kI8, "I8", 1},
    {SafetensorsDtype::kU64, "U64", 8},       {SafetensorsDtype::kU32, "U32", 4},
    {SafetensorsDtype::kU16, "U16", 2},       {SafetensorsDtype::kU8, "U8", 1},
    {SafetensorsDtype::kBool, "BOOL", 1},
}};

const DtypeEntry& entry_of(SafetensorsDtype dtype) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.dtype == dtype) return e;
  }
  return kDtypes[1];  // unreachable: every enumerator is in the table
}

using Json = nlohmann::json;

// A non-negative JSON integer, or nullopt.
std::optional<uint64_t> json_u64(const Json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
  return std::nullopt;
}

Result<std::vector<uint64_t>> read_shape(const std::string& name, const Json& shape, uint64_t* num_elements) {
  const std::string quoted = quote_bytes(name);  // the file's bytes, one printable line
  if (!shape.is_array()) return data_loss("tensor {}: 'shape' is not an array", quoted);
  std::vector<uint64_t> out;
  *num_elements = 1;
  for (const Json& d : shape) {
    const std::optional<uint64_t> dim = json_u64(d);
    if (!dim) return data_loss("tensor {}: shape {} has a dimension that is not a non-negative integer", quoted,
                               shape.dump());
    if (__builtin_mul_overflow(*num_elements, *dim, num_elements)) {
      return data_loss("tensor {}: shape {} has too many elements", quoted, shape.dump());
    }
    out.push_back(*dim);
  }
  return out;
}

// One header entry checked against the data section of `data_size` bytes.
Result<SafetensorsTensor> read_tensor(const std::string& name, const Json& entry,
                                      std::span<const uint8_t> data) {
  const std::string quoted = quote_bytes(name);  // the file's bytes, one printable line
  if (!entry.is_object()) return data_loss("tensor {}: header entry is not an object", quoted);
  SafetensorsTensor t;
  t.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) return data_loss("tensor {}: no 'dtype' string", quoted);
  const std::optional<SafetensorsDtype> parsed = parse_safetensors_dtype(dtype->get_ref<const std::string&>());
  if (!parsed) return data_loss("tensor {}: unknown dtype {}", quoted,
                                quote_bytes(dtype->get_ref<const std::string&>()));
  t.dtype = *parsed;
  const auto shape = entry.find("shape");
  if (shape == entry.end()) return data_loss("tensor {}: no 'shape'", quoted);
  MET_ASSIGN_OR_RETURN(t.shape, read_shape(name, *shape, &t.num_elements));
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2) {
    return data_loss("tensor {}: 'data_offsets' is not a [begin, end] pair", quoted);
  }
  const std::optional<uint64_t> begin = json_u64((*offsets)[0]);
  const std::optional<uint64_t> end = json_u64((*offsets)[1]);
  if (!begin || !end || *begin > *end) {
    return data_loss("tensor {}: data_offsets {} are not a range", quoted, offsets->dump());
  }
  if (*end > data.size()) {
    return data_loss("tensor {}: data_offsets {} end past the data section's {} bytes", quoted, offsets->dump(),
                     data.size());
  }
  uint64_t expected = 0;
  if (__builtin_mul_overflow(t.num_elements, uint64_t{safetensors_dtype_bytes(t.dtype)}, &expected) ||
      expected != *end - *begin) {
    return data_loss("tensor {}: {} {} elements of shape [{}] need {} bytes, data_offsets {} hold {}", quoted,
                     t.num_elements, safetensors_dtype_name(t.dtype), fmt::join(t.shape, ", "), expected,
                     offsets->dump(), *end - *begin);
  }
  t.bytes = data.subspan(*begin, *end - *begin);
  return t;
}

Status read_metadata(const Json& md, std::map<std::string, std::string, std::less<>>& out) {
  if (!md.is_object()) return data_loss("'__metadata__' is not an object");
  for (const auto& [key, value] : md.items()) {
    if (!value.is_string()) return data_loss("'__metadata__' key {} is not a string", quote_bytes(key));
    out.emplace(key, value.get<std::string>());
  }
  return ok_status();
}

Status check_no_overlap(std::vector<SafetensorsTensor> tensors) {
  std::sort(tensors.begin(), tensors.end(),
            [](const auto& a, const auto& b) { return a.bytes.data() < b.bytes.data(); });
  for (size_t i = 1; i < tensors.size(); ++i) {
    const SafetensorsTensor& a = tensors[i - 1];
    if (a.bytes.data() + a.bytes.size() > tensors[i].bytes.data()) {
      return data_loss("tensors {} and {} overlap", quote_bytes(a.name), quote_bytes(tensors[i].name));
    }
  }
  return ok_status();
}

}  // namespace

std::string_view safetensors_dtype_name(SafetensorsDtype dtype) { return entry_of(dtype).name; }
size_t safetensors_dtype_bytes(SafetensorsDtype dtype) { return entry_of(dtype).bytes; }

std::optional<SafetensorsDtype> parse_safetensors_dtype(std::string_view name) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.name == name) return e.dtype;
  }
  return std::nullopt;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  MET_ASSIGN_OR_RETURN(MappedFile mapping, MappedFile::open(path));
  const std::span<const uint8_t> bytes = mapping.bytes();
  MET_ASSIGN_OR_RETURN(SafetensorsFile file, parse(bytes, path));
  file.mapping_.emplace(std::move(mapping));  // the mapped bytes do not move
  return file;
}

Result<SafetensorsFile> SafetensorsFile::parse(std::span<const uint8_t> bytes, std::string source_name) {
  auto fail = [&](Status s) { return source_name.empty() ? s : s.with_prefix(source_name); };
  if (bytes.size() < 8) return fail(data_loss("{} bytes is too short for a safetensors header", bytes.size()));
  const uint64_t header_bytes = get_u64(bytes.data());
  if (header_bytes > bytes.size() - 8) {
    return fail(data_loss("header length {} runs past the end of the file ({} bytes)", header_bytes, bytes.size()));
  }
  const auto* text = reinterpret_cast<const char*>(bytes.data() + 8);
  const Json header = Json::parse(text, text + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return fail(data_loss("header is not a JSON object"));
  const std::span<const uint8_t> data = bytes.subspan(8 + header_bytes);
  SafetensorsFile file;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (Status s = read_metadata(entry, file.metadata_); !s.ok()) return fail(s);
      continue;
    }
    Result<SafetensorsTensor> t = read_tensor(name, entry, data);
    if (!t.ok()) return fail(t.status());
    file.index_.emplace(name, file.tensors_.size());
    file.tensors_.push_back(std::move(t).value());
  }
  if (Status s = check_no_overlap(file.tensors_); !s.ok()) return fail(s);
  file.source_name_ = std::move(source_name);
  return file;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace met
