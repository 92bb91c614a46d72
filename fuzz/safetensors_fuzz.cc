// safetensors_fuzz: libFuzzer target for SafetensorsFile::parse
// (src/hf/safetensors_file.h). Checks, beyond "no crash, no sanitizer
// report": a refusal is one non-empty line; an accepted file's tensors lie in
// the input's data section, each of exactly its elements' bytes, none
// overlapping another.
// Threading: libFuzzer's thread. Built by fuzz/CMakeLists.txt (MET_FUZZ=ON).
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/check.h"
#include "hf/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  met::Result<met::SafetensorsFile> file = met::SafetensorsFile::parse(bytes, "");
  if (!file.ok()) {
    const std::string& message = file.status().message();
    MET_CHECK(!message.empty() && message.find('\n') == std::string::npos, "refusal '{}'", message);
    return 0;
  }
  std::vector<std::span<const uint8_t>> spans;
  for (const met::SafetensorsTensor& t : file->tensors()) {
    MET_CHECK(t.bytes.size() == t.num_elements * met::safetensors_dtype_bytes(t.dtype), "tensor '{}' size", t.name);
    MET_CHECK(t.bytes.empty() || (t.bytes.data() >= data + 8 && t.bytes.data() + t.bytes.size() <= data + size),
              "tensor '{}' outside the input", t.name);
    spans.push_back(t.bytes);
  }
  std::sort(spans.begin(), spans.end(), [](auto a, auto b) { return a.data() < b.data(); });
  for (size_t i = 1; i < spans.size(); ++i) {
    MET_CHECK(spans[i - 1].data() + spans[i - 1].size() <= spans[i].data(), "tensors overlap");
  }
  return 0;
}
