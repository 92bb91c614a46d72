// libFuzzer target: compile_json_schema on arbitrary text must return a
// Grammar or an error, never crash or throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "grammar/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)met::compile_json_schema(text).ok();
  return 0;
}
