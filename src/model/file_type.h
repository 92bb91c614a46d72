// llama.cpp's `general.file_type` codes (LLAMA_FTYPE_*) for a file whose
// weight matrices are mostly of one GgmlType, and the name llama.cpp prints.
// Threading: pure functions. Tested by tests/model/file_type_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "gguf/ggml_type.h"

namespace met {

// nullopt for a type that no file type describes (e.g. Q8_K).
std::optional<uint32_t> llama_file_type(GgmlType mostly);
// "MOSTLY_Q4_K_S" etc.; "unknown (N)" is left to the caller.
std::optional<std::string_view> llama_file_type_name(uint32_t file_type);

// The type llama.cpp's quantizer gives a weight matrix of `shape` (ggml order,
// shape[0] the row length) in a file of mostly `mostly`: `mostly` itself, but
// for MXFP4 (MOSTLY_MXFP4_MOE) only the expert tensors (shape[2] > 1) are
// MXFP4 and every other matrix, output and embeddings included, is Q8_0.
// Whether the row length fits the type's block is the caller's question.
GgmlType file_type_matrix_type(GgmlType mostly, std::span<const uint64_t> shape);

}  // namespace met
