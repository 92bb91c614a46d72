// GgmlType: the tensor element types a GGUF file may name, with the block
// geometry the format fixes for each (elements per block, bytes per block).
// The reader needs this to bounds-check tensor data; src/tensor owns the block
// layouts and the arithmetic. Values are the on-disk ids (never renumber).
// Threading: constant data. Tested by tests/gguf/ggml_type_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace met {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;   // lower case, as llama.cpp prints it: "q4_k", "bf16"
  uint32_t block_size;     // elements per block
  uint32_t type_size;      // bytes per block
};

// The traits of an on-disk type id, or nullopt for an id GGUF does not define
// (including the removed ids 4, 5, 31-33, 36-38).
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t raw_type);
const GgmlTypeTraits& ggml_type_traits(GgmlType type);
std::string_view ggml_type_name(GgmlType type);
// Parses a lower- or upper-case name ("Q8_0", "q4_k", "f16").
std::optional<GgmlType> parse_ggml_type(std::string_view name);

// Bytes of a row of `num_elements` elements, or nullopt if num_elements is not
// a multiple of the block size (or the byte count overflows uint64).
std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t num_elements);

}  // namespace met
