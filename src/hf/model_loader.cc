// load_model. Tested by tests/hf/hf_model_test.cc.
#include "hf/model_loader.h"

#include "hf/hf_model.h"

namespace met {

Result<std::unique_ptr<Model>> load_model(const std::string& path, const Model::LoadProgress& progress,
                                          WeightPacking packing) {
  MET_ASSIGN_OR_RETURN(GgufFile file, open_model_file(path));
  Result<std::unique_ptr<Model>> model = Model::from_file(std::move(file), progress, packing);
  if (!model.ok()) return model.status().with_prefix(path);
  return model;
}

}  // namespace met
