// hf_model: a Hugging Face model folder (config.json, model.safetensors or
// the shards model.safetensors.index.json lists, tokenizer.json,
// tokenizer_config.json, generation_config.json, chat_template.jinja) opened
// as an in-memory GgufFile with the metadata and tensor names llama.cpp's
// convert_hf_to_gguf.py would write, so Model::from_file, the tokenizer and
// `met convert` run on it unchanged.
// Tensors stay in the safetensors mappings where no transform is needed
// (F32, F16, BF16 at an aligned offset); llama's q/k projections (permuted
// rows) and any unaligned tensor are copied into buffers the GgufFile owns.
// `__metadata__` aliases ("model.embed_tokens.weight": "lm_head.weight") are
// honoured, and with tie_word_embeddings the output matrix is left out (GGUF
// ties by its absence); Llama 3 rope scaling adds rope_freqs.weight.
// Errors name the folder and the file, key or tensor at fault: a missing
// config.json or tokenizer.json, no safetensors, a shard the index names but
// the folder lacks, an unknown tensor or dtype, a tensor the model needs
// that no file has, an unsupported architecture.
// Threading: the result is immutable; any thread.
// Tested by tests/hf/hf_model_test.cc.
#pragma once

#include <string>

#include "core/status.h"
#include "gguf/gguf_file.h"

namespace met {

// Opens the folder `dir`.
Result<GgufFile> open_hf_folder(const std::string& dir);

// A model path of either kind: a folder goes through open_hf_folder, any
// other path through GgufFile::open.
Result<GgufFile> open_model_file(const std::string& path);

}  // namespace met
