// Test fixtures for the gguf tests: the list of real GGUF files under
// ../shared, and a GgufWriter loaded with every metadata value type (nested
// arrays, UTF-8 and NUL bytes in strings) and tensors of several types and
// shapes, whose bytes are a deterministic function of the tensor's name.
// Threading: any. Used by tests/gguf/*_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"

namespace met::testing {

// Every *.gguf directly under <shared>/models and <shared>/tokenizer-vectors,
// sorted.
std::vector<std::string> shared_gguf_paths(const std::string& shared_dir);

// The sample writer's metadata, without general.alignment.
GgufMetadata sample_metadata();

// A writer holding sample_metadata() and the sample tensors.
GgufWriter sample_writer(uint64_t alignment);

// The bytes the sample writer fills tensor `name` of `num_bytes` bytes with.
std::vector<uint8_t> sample_tensor_bytes(const std::string& name, uint64_t num_bytes);

}  // namespace met::testing
