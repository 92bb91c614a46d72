// gguf_reader_fuzz: libFuzzer target for GgufFile::parse (src/gguf/gguf_file.h).
// Checks, beyond "no crash, no sanitizer report": a refusal is one non-empty
// line; an accepted file's tensor spans lie in the input; and writing an
// accepted file back is stable: write(parse(write(parse(x)))) equals
// write(parse(x)) byte for byte.
// Threading: libFuzzer's thread. Built by fuzz/CMakeLists.txt (MET_FUZZ=ON).
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/check.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace {

// The writer's encoding of `file`, or nullopt when the writer refuses it
// (a tensor name of 64 bytes or more is legal to read but not to write).
std::optional<std::vector<uint8_t>> rewrite(const met::GgufFile& file) {
  met::GgufWriter writer(file.alignment());
  for (const auto& [key, value] : file.metadata().entries()) writer.set(key, value);
  for (const met::GgufTensorInfo& info : file.tensors()) {
    const std::span<const uint8_t> data = file.tensor_data(info);
    const met::Status added =
        writer.add_tensor(info.name, info.shape, info.type, [data](std::span<uint8_t> out) {
          MET_CHECK(out.size() == data.size(), "fill of {} bytes for {}", out.size(), data.size());
          std::memcpy(out.data(), data.data(), data.size());
          return met::ok_status();
        });
    if (!added.ok()) return std::nullopt;
  }
  met::Result<std::vector<uint8_t>> bytes = writer.write_buffer();
  MET_CHECK(bytes.ok(), "writer refused a parsed file: {}", bytes.status().to_string());
  return std::move(bytes).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  met::Result<met::GgufFile> file = met::GgufFile::parse(input, "");
  if (!file.ok()) {
    const std::string& message = file.status().message();
    MET_CHECK(!message.empty() && message.find('\n') == std::string::npos, "bad message: {}",
              message);
    return 0;
  }
  for (const met::GgufTensorInfo& info : file->tensors()) {
    const std::span<const uint8_t> bytes = file->tensor_data(info);
    MET_CHECK(bytes.data() >= data && bytes.data() + bytes.size() <= data + size);
  }
  for (const auto& [key, value] : file->metadata().entries()) {
    MET_CHECK(value.describe().find('\n') == std::string::npos);
  }
  const std::optional<std::vector<uint8_t>> once = rewrite(*file);
  if (!once) return 0;
  met::Result<met::GgufFile> reread = met::GgufFile::parse(*once, "rewritten");
  MET_CHECK(reread.ok(), "rewritten file refused: {}", reread.status().to_string());
  const std::optional<std::vector<uint8_t>> twice = rewrite(*reread);
  MET_CHECK(twice.has_value() && *twice == *once, "rewrite is not stable");
  return 0;
}
