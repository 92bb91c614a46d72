// Sampler. Tested by tests/sampling/sampler_test.cc.
#include "sampling/sampler.h"

#include <algorithm>

#include "sampling/dry.h"
#include "sampling/lz_penalty.h"
#include "sampling/penalties.h"
#include "sampling/token_bans.h"
#include "sampling/truncation.h"

namespace met {
namespace {

// The last `n` tokens of prompt followed by output, into `out`.
void tail_of(std::span<const TokenId> prompt, std::span<const TokenId> output, size_t n,
             std::vector<TokenId>& out) {
  out.clear();
  const size_t from_output = std::min(n, output.size());
  const size_t from_prompt = std::min(n - from_output, prompt.size());
  out.insert(out.end(), prompt.end() - static_cast<std::ptrdiff_t>(from_prompt), prompt.end());
  out.insert(out.end(), output.end() - static_cast<std::ptrdiff_t>(from_output), output.end());
}

TokenId argmax(std::span<const float> logits) {
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return static_cast<TokenId>(best);
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed), adaptive_(params) {}

bool Sampler::changes_logits() const {
  return !params_.logit_bias.empty() || params_.allowed_token_ids.has_value() || !params_.bad_words.empty() ||
         params_.repetition_penalty != 1.0f || params_.presence_penalty != 0.0f ||
         params_.frequency_penalty != 0.0f || params_.dry_multiplier > 0.0f || params_.lz_penalty > 0.0f;
}

bool Sampler::is_greedy() const {
  return (params_.temperature <= 0.0f || params_.top_k == 1) && !changes_logits();
}

void Sampler::process(std::span<float> logits, std::span<const TokenId> prompt, std::span<const TokenId> output) {
  const SamplingParams& p = params_;
  if (!p.logit_bias.empty()) apply_logit_bias(p.logit_bias, logits);
  if (p.allowed_token_ids.has_value()) apply_allowed_tokens(*p.allowed_token_ids, logits, saved_);
  if (!p.bad_words.empty()) apply_bad_words(p.bad_words, output, logits);
  const auto window = static_cast<size_t>(p.repetition_penalty_window);
  if (p.repetition_penalty != 1.0f || p.dry_multiplier > 0.0f) tail_of(prompt, output, window, recent_);
  if (p.repetition_penalty != 1.0f) apply_repetition_penalty(p.repetition_penalty, recent_, tally_, logits);
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) {
    apply_presence_frequency(p.presence_penalty, p.frequency_penalty, output, tally_, logits);
  }
  if (p.dry_multiplier > 0.0f) {
    const DryConfig dry{.multiplier = p.dry_multiplier,
                        .base = p.dry_base,
                        .allowed_length = p.dry_allowed_length,
                        .sequence_breakers = p.dry_sequence_breakers};
    apply_dry(dry, recent_, tally_, logits);
  }
  if (p.lz_penalty > 0.0f) {
    const size_t n = std::min(static_cast<size_t>(p.lz_window), output.size());
    apply_lz_penalty({.alpha = p.lz_penalty, .buffer = p.lz_buffer}, output.last(n), tally_, logits);
  }
}

TokenId Sampler::draw_from(std::span<const float> logits) {
  const SamplingParams& p = params_;
  if (p.temperature <= 0.0f || p.top_k == 1) return argmax(logits);
  const float temperature = p.adaptive_temperature ? adaptive_.next(logits) : p.temperature;
  const auto k = static_cast<size_t>(p.top_k);
  if (k > 0 && k < logits.size()) {
    candidates_.assign_top_k(logits, k);
  } else {
    candidates_.assign_all(logits);
  }
  candidates_.scale(1.0f / temperature);
  apply_top_p(candidates_, p.top_p);
  apply_min_p(candidates_, p.min_p);
  apply_typical_p(candidates_, p.typical_p, typical_scratch_);
  apply_top_n_sigma(candidates_, p.top_n_sigma);
  if (p.xtc_probability > 0.0f) apply_xtc(candidates_, p.xtc_probability, p.xtc_threshold, rng_);
  return draw(candidates_, rng_);
}

TokenId Sampler::sample(std::span<float> logits, std::span<const TokenId> prompt, std::span<const TokenId> output) {
  MET_DCHECK(!logits.empty());
  if (changes_logits()) process(logits, prompt, output);
  return draw_from(logits);
}

TokenId Sampler::sample(std::span<const float> logits) {
  MET_DCHECK(!logits.empty());
  if (!changes_logits()) return draw_from(logits);
  row_.assign(logits.begin(), logits.end());
  process(row_, {}, {});
  return draw_from(row_);
}

}  // namespace met
