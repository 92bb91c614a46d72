// Sampling flags. Tested by tests/cli/sampling_flags_test.cc.
#include "cli/sampling_flags.h"

namespace met {

void add_sampling_flags(CLI::App& cmd, SamplingParams& p) {
  cmd.add_option("--temp", p.temperature, "Temperature; 0 is greedy")->capture_default_str();
  cmd.add_option("--top-k", p.top_k, "Top-k; 0 is off")->capture_default_str();
  cmd.add_option("--top-p", p.top_p, "Top-p; 1 is off")->capture_default_str();
  cmd.add_option("--seed", p.seed, "Sampling seed")->capture_default_str();
  cmd.add_option("--min-p", p.min_p, "Min-p; 0 is off")->capture_default_str();
  cmd.add_option("--typical-p", p.typical_p, "Typical-p; 1 is off")->capture_default_str();
  cmd.add_option("--top-n-sigma", p.top_n_sigma, "Keep logits within n standard deviations of the max; 0 is off")
      ->capture_default_str();
  cmd.add_option("--xtc-probability", p.xtc_probability, "XTC: chance to exclude the top choices; 0 is off")
      ->capture_default_str();
  cmd.add_option("--xtc-threshold", p.xtc_threshold, "XTC: probability above which a choice is excluded")
      ->capture_default_str();
  cmd.add_option("--repeat-penalty,--repetition-penalty", p.repetition_penalty, "Repetition penalty; 1 is off")
      ->capture_default_str();
  cmd.add_option("--repeat-last-n", p.repetition_penalty_window, "Tokens the repetition penalty and DRY look back")
      ->capture_default_str();
  cmd.add_option("--presence-penalty", p.presence_penalty, "OpenAI presence penalty")->capture_default_str();
  cmd.add_option("--frequency-penalty", p.frequency_penalty, "OpenAI frequency penalty")->capture_default_str();
  cmd.add_option("--dry-multiplier", p.dry_multiplier, "DRY strength; 0 is off")->capture_default_str();
  cmd.add_option("--dry-base", p.dry_base, "DRY base")->capture_default_str();
  cmd.add_option("--dry-allowed-length", p.dry_allowed_length, "DRY: repeats up to this long are free")
      ->capture_default_str();
  cmd.add_option("--lz-penalty", p.lz_penalty, "LZ penalty strength (arXiv 2504.20131); 0 is off")
      ->capture_default_str();
  cmd.add_flag("--adaptive-temperature", p.adaptive_temperature,
               "Cool the temperature while the model is confident; restore it on entropy spikes");
}

}  // namespace met
