// `met info MODEL.gguf [--json]`. Tested by tests/cli/info_command_test.cc.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/model_info.h"
#include "hf/hf_model.h"

namespace met {
namespace {

struct InfoOptions {
  std::string model_path;
  bool json = false;
};

Status run_info(const InfoOptions& opt) {
  MET_ASSIGN_OR_RETURN(GgufFile file, open_model_file(opt.model_path));
  MET_ASSIGN_OR_RETURN(ModelInfo info, gather_model_info(file, opt.model_path));
  if (opt.json) {
    std::cout << model_info_json(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << render_model_info_text(info);
  }
  return ok_status();
}

}  // namespace

void exit_on_error(std::string_view command, const Status& s) {
  if (s.ok()) return;
  std::fprintf(stderr, "met %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               s.message().c_str());
  throw CLI::RuntimeError(1);
}

void add_info_command(CLI::App& app) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a GGUF model: architecture, sizes, vocab");
  cmd->add_option("model", opt->model_path, "GGUF file or Hugging Face model folder")->required();
  cmd->add_flag("--json", opt->json, "Print one JSON object");
  cmd->callback([opt] { exit_on_error("info", run_info(*opt)); });
}

}  // namespace met
