// `met make-lora BASE.gguf -o OUT.gguf --rank R --targets q,k,v,o,gate,up,down
// --seed S`: a random LoRA adapter for BASE in llama.cpp's GGUF form
// (model/random_lora.h), for tests and benchmarks.
// Tested by tests/cli/make_lora_command_test.cc.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "model/random_lora.h"

namespace met {
namespace {

struct MakeLoraOptions {
  std::string base;
  std::string out;
  int32_t rank = 16;
  std::string targets = "q,k,v,o,gate,up,down";
  uint64_t seed = 0;
  float alpha = 0.0f;
  std::string dtype = "f32";
  float strength = 0.5f;
};

Status make_lora(const MakeLoraOptions& o) {
  RandomLoraSpec spec;
  spec.rank = o.rank;
  MET_ASSIGN_OR_RETURN(spec.targets, parse_lora_targets(o.targets));
  if (spec.targets.empty()) return invalid_argument("--targets names no matrix");
  spec.seed = o.seed;
  spec.alpha = o.alpha;
  const std::optional<GgmlType> type = parse_ggml_type(o.dtype);
  if (!type) return invalid_argument("--dtype '{}' is not f32, f16, bf16 or q8_0", o.dtype);
  spec.dtype = *type;
  if (!(o.strength > 0.0f) || o.strength > 100.0f) {
    return invalid_argument("--strength {} must be in (0, 100]", o.strength);
  }
  spec.strength = o.strength;
  MET_ASSIGN_OR_RETURN(RandomLoraSummary s, make_random_lora(o.base, o.out, spec));
  std::cout << fmt::format("wrote {}: rank {} on {} matrices ({}), {} bytes\n", o.out, o.rank, s.num_pairs,
                           o.targets, s.num_bytes);
  return ok_status();
}

}  // namespace

void add_make_lora_command(CLI::App& app) {
  auto o = std::make_shared<MakeLoraOptions>();
  CLI::App* cmd = app.add_subcommand("make-lora", "Write a random LoRA adapter for a GGUF model");
  cmd->add_option("base", o->base, "The base model's GGUF file")->required();
  cmd->add_option("-o,--output", o->out, "The adapter's GGUF file")->required();
  cmd->add_option("--rank", o->rank, "Rank of every pair")->capture_default_str();
  cmd->add_option("--targets", o->targets, "Matrices to adapt: q, k, v, o, gate, up, down, output")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "adapter.lora.alpha (default: the rank, a scale of 1)");
  cmd->add_option("--dtype", o->dtype, "f32, f16, bf16 or q8_0")->capture_default_str();
  cmd->add_option("--strength", o->strength, "The update's size relative to the weights' output")
      ->capture_default_str();
  cmd->callback([o] { exit_on_error("make-lora", make_lora(*o)); });
}

}  // namespace met
