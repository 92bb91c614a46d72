// assemble_hf_weights: the tensors of a Hugging Face folder's safetensors
// shards under their GGUF names and shapes (hf_tensor_names.h), ready for
// GgufFile::assemble: views into the shards' mappings where the bytes can be
// used as they are, owned copies where they cannot (llama's permuted q/k rows,
// an offset not aligned to the element size) and computed tensors
// (rope_freqs.weight for Llama 3 rope scaling).
// Invariants: every tensor of the llama family the config needs is present
// (the error names the Hugging Face tensor and the folder's files otherwise);
// a tensor with no GGUF name, a dtype other than F32/F16/BF16, or a name in two
// shards is an error naming it and its file.
// Threading: pure over the shards. Tested by tests/hf/hf_model_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_file.h"
#include "hf/hf_config.h"
#include "hf/safetensors_file.h"

namespace met {

struct HfWeights {
  std::vector<GgufTensorSource> tensors;
  GgufBacking backing;     // the shards' mappings and the owned copies
  uint32_t file_type = 0;  // general.file_type: ALL_F32, MOSTLY_F16 or MOSTLY_BF16 by the matrices' type
};

// Takes the shards' mappings into the result's backing.
Result<HfWeights> assemble_hf_weights(const HfConfig& config, std::vector<SafetensorsFile> shards);

}  // namespace met
