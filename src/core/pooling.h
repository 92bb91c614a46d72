// Pooling: how an embedding model turns a sequence's final hidden states
// into one vector, with llama.cpp's GGUF numbering (`{arch}.pooling_type`):
// none 0 (per token: no single vector), mean 1, CLS 2 (the first token's),
// last 3 (the last token's). Rank (4, rerankers) is not one met runs.
// Threading: pure. Tested by tests/core/pooling_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace met {

enum class Pooling : uint8_t { kNone, kMean, kCls, kLast };

// The GGUF number's pooling; nullopt for a number met does not run.
std::optional<Pooling> pooling_from_gguf(uint32_t value);
std::string_view pooling_name(Pooling p);
// "none", "mean", "cls", "last" (as --pooling takes them); nullopt otherwise.
std::optional<Pooling> parse_pooling(std::string_view name);

}  // namespace met
