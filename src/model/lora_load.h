// Reading LoRA adapters in llama.cpp's GGUF form for a loaded Model:
// general.type "adapter", adapter.type "lora", general.architecture the
// model's, adapter.lora.alpha (optional: without it the scale is the user's
// scale alone, else scale · alpha / rank, as llama.cpp), and a pair of
// tensors `<base>.lora_a` (ne = [cols, rank]) and `<base>.lora_b` (ne =
// [rank, rows]) per adapted matrix `<base>` of the model (ne = [cols,
// rows]). The matrices met adapts are a layer's attn_q, attn_k, attn_v,
// attn_output, ffn_gate, ffn_up, ffn_down, and the head (output.weight);
// A and B may be F32, F16, BF16 or Q8_0 and are kept as F32.
// Every fault is an error naming the file and the tensor: a file that is
// not a LoRA adapter, an architecture other than the model's, a tensor
// without its pair or with another suffix, a base tensor the model lacks
// (the wrong base model), a matrix met does not adapt, a shape that does
// not fit the base tensor, a type it cannot decode.
// Threading: pure functions over their arguments. Tested by
// tests/model/lora_load_test.cc.
#pragma once

#include <memory>
#include <string>

#include "backend/lora_adapter.h"
#include "core/status.h"
#include "gguf/gguf_file.h"
#include "model/model.h"

namespace met {

Result<std::shared_ptr<const LoraAdapter>> load_lora(const std::string& path, const Model& model, std::string name,
                                                     float scale = 1.0f);
// The same from a file already opened (file.source_name() names it).
Result<std::shared_ptr<const LoraAdapter>> lora_from_file(const GgufFile& file, const Model& model, std::string name,
                                                          float scale = 1.0f);

}  // namespace met
