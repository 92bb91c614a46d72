// llama.cpp's `general.file_type` codes (LLAMA_FTYPE_*) for a file whose
// weight matrices are mostly of one GgmlType, and the name llama.cpp prints.
// Threading: pure functions. Tested by tests/model/file_type_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gguf/ggml_type.h"

namespace met {

// nullopt for a type that no file type describes (e.g. Q8_K).
std::optional<uint32_t> llama_file_type(GgmlType mostly);
// "MOSTLY_Q4_K_S" etc.; "unknown (N)" is left to the caller.
std::optional<std::string_view> llama_file_type_name(uint32_t file_type);

}  // namespace met
