// libFuzzer target: compile_gbnf on arbitrary text must return a Grammar or
// an error, never crash; a compiled grammar must print back to GBNF that
// compiles again and generate under a matcher steered by the input's bytes
// (grammar_walk.h) within the matcher's budget.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/check.h"
#include "grammar/gbnf_parser.h"
#include "grammar_walk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  met::Result<met::Grammar> g = met::compile_gbnf(text);
  if (!g.ok()) return 0;
  MET_CHECK(met::compile_gbnf(g->to_gbnf()).ok(), "printed grammar does not compile: {}", g->to_gbnf());
  met::fuzz::walk_grammar(*g, {data, size});
  return 0;
}
