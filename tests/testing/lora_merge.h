// merge_lora: the model a LoRA adapter stands for, as a file: every matrix
// W the adapter pairs with becomes W + scale · B·A, computed in double from
// the decoded base and adapter tensors (src/tensor's reference decoders)
// and written as F32; every other tensor and all metadata are copied.
// scale is alpha / rank (1 without adapter.lora.alpha), times `scale`.
// The double-precision reference forward run on the merged file is what an
// adapter's logits are checked against.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <string>

#include "core/status.h"

namespace met::testing {

Status merge_lora(const std::string& base_path, const std::string& adapter_path, const std::string& out_path,
                  float scale = 1.0f);

}  // namespace met::testing
