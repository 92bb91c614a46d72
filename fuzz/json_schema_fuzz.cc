// libFuzzer target: compile_json_schema on arbitrary text must return a
// Grammar or an error, never crash or throw; a compiled grammar must
// generate under a matcher steered by the input's bytes (grammar_walk.h)
// within the matcher's budget.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "grammar/json_schema.h"
#include "grammar_walk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  met::Result<met::Grammar> g = met::compile_json_schema(text);
  if (g.ok()) met::fuzz::walk_grammar(*g, {data, size});
  return 0;
}
