// validate_sampling. Tested by tests/sampling/sampling_params_test.cc.
#include "sampling/sampling_params.h"

#include <cmath>

namespace met {
namespace {

bool finite(float v) { return std::isfinite(v); }

Status check_tokens(const char* field, const std::vector<TokenId>& tokens) {
  for (TokenId t : tokens) {
    if (t < 0) return invalid_argument("{}: token id {} must be >= 0", field, t);
  }
  return ok_status();
}

Status validate_bans(const SamplingParams& p) {
  for (const LogitBias& b : p.logit_bias) {
    if (b.token < 0) return invalid_argument("logit_bias: token id {} must be >= 0", b.token);
    if (!(b.bias >= -100.0f && b.bias <= 100.0f)) {
      return invalid_argument("logit_bias: bias {} for token {} must be in [-100, 100]", b.bias, b.token);
    }
  }
  if (p.allowed_token_ids.has_value()) {
    if (p.allowed_token_ids->empty()) return invalid_argument("allowed_token_ids must not be empty");
    MET_RETURN_IF_ERROR(check_tokens("allowed_token_ids", *p.allowed_token_ids));
  }
  for (const auto& word : p.bad_words) {
    if (word.empty()) return invalid_argument("bad_words: a sequence must not be empty");
    MET_RETURN_IF_ERROR(check_tokens("bad_words", word));
  }
  return ok_status();
}

Status validate_penalties(const SamplingParams& p) {
  if (!(p.repetition_penalty > 0.0f) || !finite(p.repetition_penalty)) {
    return invalid_argument("repetition_penalty {} must be a finite number > 0", p.repetition_penalty);
  }
  if (p.repetition_penalty_window < 0) {
    return invalid_argument("repetition_penalty_window {} must be >= 0", p.repetition_penalty_window);
  }
  if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f)) {
    return invalid_argument("presence_penalty {} must be in [-2, 2]", p.presence_penalty);
  }
  if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f)) {
    return invalid_argument("frequency_penalty {} must be in [-2, 2]", p.frequency_penalty);
  }
  if (!(p.dry_multiplier >= 0.0f) || !finite(p.dry_multiplier)) {
    return invalid_argument("dry_multiplier {} must be a finite number >= 0", p.dry_multiplier);
  }
  if (!(p.dry_base > 1.0f) || !finite(p.dry_base)) {
    return invalid_argument("dry_base {} must be a finite number > 1", p.dry_base);
  }
  if (p.dry_allowed_length < 1) return invalid_argument("dry_allowed_length {} must be >= 1", p.dry_allowed_length);
  MET_RETURN_IF_ERROR(check_tokens("dry_sequence_breakers", p.dry_sequence_breakers));
  if (!(p.lz_penalty >= 0.0f) || !finite(p.lz_penalty)) {
    return invalid_argument("lz_penalty {} must be a finite number >= 0", p.lz_penalty);
  }
  if (p.lz_window < 2 || p.lz_window > 4096) return invalid_argument("lz_window {} must be in [2, 4096]", p.lz_window);
  if (p.lz_buffer < 1 || p.lz_buffer > 256 || p.lz_buffer >= p.lz_window) {
    return invalid_argument("lz_buffer {} must be in [1, 256] and below lz_window", p.lz_buffer);
  }
  return ok_status();
}

Status validate_truncation(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !finite(p.temperature)) {
    return invalid_argument("temperature {} must be a finite number >= 0", p.temperature);
  }
  if (p.top_k < 0) return invalid_argument("top_k {} must be >= 0", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return invalid_argument("top_p {} must be in (0, 1]", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return invalid_argument("min_p {} must be in [0, 1]", p.min_p);
  if (!(p.typical_p > 0.0f && p.typical_p <= 1.0f)) {
    return invalid_argument("typical_p {} must be in (0, 1]", p.typical_p);
  }
  if (!(p.top_n_sigma >= 0.0f) || !finite(p.top_n_sigma)) {
    return invalid_argument("top_n_sigma {} must be a finite number >= 0", p.top_n_sigma);
  }
  if (!(p.xtc_probability >= 0.0f && p.xtc_probability <= 1.0f)) {
    return invalid_argument("xtc_probability {} must be in [0, 1]", p.xtc_probability);
  }
  if (!(p.xtc_threshold > 0.0f && p.xtc_threshold <= 1.0f)) {
    return invalid_argument("xtc_threshold {} must be in (0, 1]", p.xtc_threshold);
  }
  return ok_status();
}

Status validate_adaptive(const SamplingParams& p) {
  if (!(p.adaptive_confidence > 0.0f && p.adaptive_confidence < 1.0f)) {
    return invalid_argument("adaptive_confidence {} must be in (0, 1)", p.adaptive_confidence);
  }
  if (!(p.adaptive_decay > 0.0f && p.adaptive_decay < 1.0f)) {
    return invalid_argument("adaptive_decay {} must be in (0, 1)", p.adaptive_decay);
  }
  if (!(p.adaptive_min_ratio > 0.0f && p.adaptive_min_ratio <= 1.0f)) {
    return invalid_argument("adaptive_min_ratio {} must be in (0, 1]", p.adaptive_min_ratio);
  }
  if (!(p.adaptive_entropy_spike > 0.0f) || !finite(p.adaptive_entropy_spike)) {
    return invalid_argument("adaptive_entropy_spike {} must be a finite number > 0", p.adaptive_entropy_spike);
  }
  return ok_status();
}

}  // namespace

Status validate_sampling(const SamplingParams& p) {
  MET_RETURN_IF_ERROR(validate_truncation(p));
  MET_RETURN_IF_ERROR(validate_bans(p));
  MET_RETURN_IF_ERROR(validate_penalties(p));
  return validate_adaptive(p);
}

}  // namespace met
