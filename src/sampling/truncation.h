// Truncation samplers, applied in this order after the temperature (top_k is
// Candidates::assign_top_k). Each keeps a subset of the candidates; the
// later ones see the earlier ones' survivors, renormalized:
//  - top_p: the smallest prefix (by probability) whose mass reaches p;
//  - min_p: tokens with probability >= min_p * the top probability;
//  - typical_p (Meister et al.): tokens ranked by |-log p - H| (H the
//    entropy), the smallest such set whose mass reaches p;
//  - top_n_sigma (Tang et al.): logits >= max - n * sigma, sigma the standard
//    deviation of the candidates' logits;
//  - XTC ("exclude top choices"): with probability xtc_probability, every
//    token with probability >= threshold but the least likely of them is
//    removed (nothing happens when fewer than two reach it).
// Each keeps at least one token. Work: top_p and XTC sort only the prefix
// they keep; min_p and top_n_sigma are linear; typical_p sorts its scores.
// Threading: pure functions over the caller's candidates.
// Tested by tests/sampling/truncation_test.cc.
#pragma once

#include <random>
#include <vector>

#include "sampling/candidates.h"

namespace met {

void apply_top_p(Candidates& c, float top_p);
void apply_min_p(Candidates& c, float min_p);
// `scratch` is reused across calls.
void apply_typical_p(Candidates& c, float typical_p, std::vector<std::pair<float, uint32_t>>& scratch);
void apply_top_n_sigma(Candidates& c, float n);
// Draws one uniform from `rng` whenever called.
void apply_xtc(Candidates& c, float probability, float threshold, std::mt19937_64& rng);

// Draws one candidate in proportion to exp(logit). REQUIRES: c.size() > 0.
TokenId draw(const Candidates& c, std::mt19937_64& rng);

}  // namespace met
