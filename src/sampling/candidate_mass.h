// Candidate mass: the linear, vectorized passes over a row of candidates that
// let truncation work in proportion to what it keeps: the max logit, the
// exp-mass sum(exp(logit - max)), the logit floor above which a given mass
// lies (a histogram of mass by distance below the max), and a draw in the
// candidates' order that skips whole blocks of eight.
// Invariants: weights are avx2::exp_nonpositive's (0 for -inf logits); sums
// are accumulated in double. The floor is conservative: the candidates with
// logit >= floor_of_mass(...) always hold at least the target mass (up to
// rounding of the weights, which callers re-check).
// Threading: pure functions. Tested by tests/sampling/candidate_mass_test.cc.
#pragma once

#include <optional>
#include <random>
#include <span>

#include "sampling/candidates.h"

namespace met {

// The largest logit. REQUIRES: !items.empty().
float max_logit_of(std::span<const Candidate> items);

// sum(exp(logit - max_logit)). REQUIRES: max_logit finite.
double exp_mass(std::span<const Candidate> items, float max_logit);

// A logit floor such that the candidates at or above it hold >= target of
// the mass `total` (= exp_mass(items, max_logit)), chosen so that few
// candidates below the crossing pass; nullopt when every candidate may be
// needed (target within rounding of total). REQUIRES: max_logit finite.
std::optional<float> floor_of_mass(std::span<const Candidate> items, float max_logit, double total,
                                   double target);

// The first candidate, in the items' order, at which the running weight
// reaches r (skipping weight-0 candidates); the last positive-weight one if
// rounding leaves r unreached. REQUIRES: max_logit finite, r >= 0.
TokenId pick_by_mass(std::span<const Candidate> items, float max_logit, double r);

}  // namespace met
