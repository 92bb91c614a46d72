// `met quantize IN.gguf OUT.gguf --dtype T`. Tested by tests/cli/quantize_command_test.cc.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "core/parallel_for.h"
#include "model/quantize_model.h"

namespace met {
namespace {

struct QuantizeOptions {
  std::string in_path;
  std::string out_path;
  std::string dtype;
  int threads = 0;
};

Status run_quantize(const QuantizeOptions& o) {
  const std::optional<QuantRecipe> recipe = find_quant_recipe(o.dtype);
  if (!recipe) return invalid_argument("--dtype '{}' is not a known type or recipe", o.dtype);
  const int threads = o.threads > 0 ? o.threads : default_num_threads();
  QuantizeSummary s;
  {
    ProgressBar bar("quantizing");
    MET_ASSIGN_OR_RETURN(s, quantize_model(o.in_path, o.out_path, *recipe, threads,
                                           [&bar](size_t d, size_t t) { bar.update(d, t); }));
  }
  for (const auto& f : s.fallbacks) std::cerr << "met quantize: note: " << f << "\n";
  std::cout << fmt::format("wrote {}: {} tensors quantized to {}, {} copied; {} -> {} bytes\n",
                           o.out_path, s.num_quantized, recipe->name, s.num_copied,
                           s.in_bytes, s.out_bytes);
  return ok_status();
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* cmd = app.add_subcommand("quantize", "Rewrite a GGUF model's weights in another dtype");
  cmd->add_option("input", o->in_path, "Input GGUF file")->required();
  cmd->add_option("output", o->out_path, "Output GGUF file")->required();
  cmd->add_option("--dtype", o->dtype,
                  "f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q3_k, q4_k, q5_k, q6_k, mxfp4 (experts; rest "
                  "q8_0), or llama.cpp's mixes q2_k, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, "
                  "iq4_nl, iq4_xs")
      ->required();
  cmd->add_option("--threads", o->threads, "Threads (default: all cores)");
  cmd->callback([o] { exit_on_error("quantize", run_quantize(*o)); });
}

}  // namespace met
