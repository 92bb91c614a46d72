// `met convert DIR -o OUT.gguf [--dtype T]`: a Hugging Face model folder
// (hf/hf_model.h) written as a GGUF file, its weights as stored (`auto`,
// the default) or in another type or llama.cpp mix (model/quantize_model.h).
// Tested by tests/cli/hf_commands_test.cc.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "core/parallel_for.h"
#include "hf/hf_model.h"
#include "model/quantize_model.h"

namespace met {
namespace {

struct ConvertOptions {
  std::string in_dir;
  std::string out_path;
  std::string dtype = "auto";
  int threads = 0;
};

Status run_convert(const ConvertOptions& o) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.in_dir, ec)) {
    return invalid_argument("{} is not a folder (met convert reads a Hugging Face model folder)", o.in_dir);
  }
  std::optional<QuantRecipe> recipe;
  if (o.dtype != "auto") {
    recipe = find_quant_recipe(o.dtype);
    if (!recipe) return invalid_argument("--dtype '{}' is not a known type or recipe", o.dtype);
  }
  MET_ASSIGN_OR_RETURN(GgufFile in, open_hf_folder(o.in_dir));
  const int threads = o.threads > 0 ? o.threads : default_num_threads();
  QuantizeSummary s;
  {
    ProgressBar bar("converting");
    MET_ASSIGN_OR_RETURN(s, quantize_model(in, o.out_path, recipe ? &*recipe : nullptr, threads,
                                           [&bar](size_t d, size_t t) { bar.update(d, t); }));
  }
  for (const auto& f : s.fallbacks) std::cerr << "met convert: note: " << f << "\n";
  std::cout << fmt::format("wrote {}: {} tensors ({} converted to {}, {} as stored), {} bytes\n", o.out_path,
                           s.num_quantized + s.num_copied, s.num_quantized, recipe ? recipe->name : "-",
                           s.num_copied, s.out_bytes);
  return ok_status();
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a Hugging Face model folder as a GGUF file");
  cmd->add_option("input", o->in_dir, "Hugging Face model folder (config.json, *.safetensors, tokenizer.json)")
      ->required();
  cmd->add_option("-o,--output", o->out_path, "Output GGUF file")->required();
  cmd->add_option("--dtype", o->dtype,
                  "auto (the weights as stored), f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, or llama.cpp's "
                  "mixes q4_k_m, q5_k_m, iq4_nl, iq4_xs")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (default: all cores)");
  cmd->callback([o] { exit_on_error("convert", run_convert(*o)); });
}

}  // namespace met
