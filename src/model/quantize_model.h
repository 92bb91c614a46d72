// quantize_model: rewrites a GGUF model with its weight matrices in another
// dtype, or in a recipe's mix of types (quant_recipe.h; what `met quantize`
// does). Metadata is copied with general.file_type updated; norms, biases and
// other 1-D tensors are copied unchanged; a matrix whose rows do not fit the
// type it gets falls back as llama.cpp does (row_fallback_type), then to F16. MXFP4
// means llama.cpp's MOSTLY_MXFP4_MOE: experts MXFP4, other matrices Q8_0
// (file_type_matrix_type); expert routers and ssm_conv1d kernels are kept as
// they are.
// Threading: rows of each tensor spread over num_threads; call from one thread.
// Tested by tests/model/quantize_model_test.cc.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_file.h"
#include "model/quant_recipe.h"
#include "model/random_model.h"

namespace met {

struct QuantizeSummary {
  size_t num_quantized = 0;
  size_t num_copied = 0;
  uint64_t in_bytes = 0;
  uint64_t out_bytes = 0;
  std::vector<std::string> fallbacks;
};

Result<QuantizeSummary> quantize_model(const std::string& in_path, const std::string& out_path,
                                       const QuantRecipe& recipe, int num_threads,
                                       const ProgressFn& progress = {});
// The same over a file already open (an assembled Hugging Face folder:
// `met convert`); a null recipe copies every tensor as it is.
Result<QuantizeSummary> quantize_model(const GgufFile& in, const std::string& out_path, const QuantRecipe* recipe,
                                       int num_threads, const ProgressFn& progress = {});
// The plain recipe of `type`.
Result<QuantizeSummary> quantize_model(const std::string& in_path, const std::string& out_path,
                                       GgmlType type, int num_threads,
                                       const ProgressFn& progress = {});

}  // namespace met
