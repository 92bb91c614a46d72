// load_model: a model path of either kind (a GGUF file or a Hugging Face
// folder, hf_model.h's open_model_file) bound as a Model. What the engine and
// the benchmarks open a model path with.
// Threading: any thread; the Model is immutable. Tested by
// tests/hf/hf_model_test.cc and, through `met run`, tests/cli/hf_commands_test.cc.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "model/model.h"

namespace met {

// Errors are prefixed with the path (as Model::load's).
Result<std::unique_ptr<Model>> load_model(const std::string& path, const Model::LoadProgress& progress = nullptr,
                                          WeightPacking packing = WeightPacking::kForCpu);

}  // namespace met
