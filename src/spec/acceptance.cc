// accept_greedy, accept_token_draft, accept_sampled_draft.
// Tested by tests/spec/acceptance_test.cc.
#include "spec/acceptance.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>

#include "core/check.h"

namespace met {
namespace {

// p(id) of an unsorted list; 0 for an id not in it.
double prob_in_list(std::span<const TokenProb> probs, TokenId id) {
  for (const TokenProb& e : probs) {
    if (e.id == id) return e.prob;
  }
  return 0.0;
}

// q(id) of a list sorted by id; 0 for an id not in it.
double prob_in_sorted_list(std::span<const TokenProb> sorted, TokenId id) {
  const auto it =
      std::lower_bound(sorted.begin(), sorted.end(), id, [](const TokenProb& e, TokenId v) { return e.id < v; });
  return it != sorted.end() && it->id == id ? it->prob : 0.0;
}

[[maybe_unused]] bool sums_to_one(std::span<const TokenProb> probs) {
  double sum = 0.0;
  for (const TokenProb& e : probs) sum += e.prob;
  return std::abs(sum - 1.0) < 1e-3;
}

[[maybe_unused]] bool is_uniform_draw(double u) { return u >= 0.0 && u < 1.0; }

// Draws from normalize(max(0, p - q)), q given by draft_prob(id), with the
// uniform u; nullopt when the residual has no mass (p <= q everywhere, which
// for two distributions means p = q up to rounding).
template <typename DraftProb>
std::optional<TokenId> draw_residual(std::span<const TokenProb> target, DraftProb draft_prob, double u) {
  double total = 0.0;
  for (const TokenProb& e : target) total += std::max(0.0, e.prob - draft_prob(e.id));
  if (!(total > 0.0)) return std::nullopt;
  const double threshold = u * total;
  double cumulative = 0.0;
  std::optional<TokenId> last;
  for (const TokenProb& e : target) {
    const double mass = std::max(0.0, e.prob - draft_prob(e.id));
    if (mass <= 0.0) continue;
    cumulative += mass;
    last = e.id;
    if (threshold < cumulative) return e.id;
  }
  return last;  // rounding left the threshold at the very top
}

}  // namespace

GreedyVerdict accept_greedy(std::span<const TokenId> drafts, std::span<const TokenId> target_argmax) {
  MET_CHECK(target_argmax.size() == drafts.size() + 1, "{} drafts need {} argmax tokens, got {}", drafts.size(),
            drafts.size() + 1, target_argmax.size());
  size_t kept = 0;
  while (kept < drafts.size() && drafts[kept] == target_argmax[kept]) ++kept;
  return {static_cast<int32_t>(kept), target_argmax[kept]};
}

DraftVerdict accept_token_draft(TokenId draft, std::span<const TokenProb> target, double u_accept,
                                double u_residual) {
  MET_DCHECK(sums_to_one(target));
  MET_DCHECK(is_uniform_draw(u_accept) && is_uniform_draw(u_residual), "uniforms {} {}", u_accept, u_residual);
  // min(1, p(d) / q(d)) with q(d) = 1.
  if (u_accept < prob_in_list(target, draft)) return {true, draft};
  const auto point_mass = [draft](TokenId id) { return id == draft ? 1.0 : 0.0; };
  if (const std::optional<TokenId> token = draw_residual(target, point_mass, u_residual)) return {false, *token};
  return {true, draft};
}

DraftVerdict accept_sampled_draft(TokenId draft, std::span<const TokenProb> target,
                                  std::span<const TokenProb> draft_probs, double u_accept, double u_residual) {
  MET_DCHECK(sums_to_one(target) && sums_to_one(draft_probs));
  MET_DCHECK(std::is_sorted(draft_probs.begin(), draft_probs.end(),
                            [](const TokenProb& a, const TokenProb& b) { return a.id < b.id; }));
  MET_DCHECK(is_uniform_draw(u_accept) && is_uniform_draw(u_residual), "uniforms {} {}", u_accept, u_residual);
  const double q_draft = prob_in_sorted_list(draft_probs, draft);
  MET_DCHECK(q_draft > 0.0, "draft {} has no probability under the draft distribution", draft);
  // u < p(d) / q(d), without the division.
  if (u_accept * q_draft < prob_in_list(target, draft)) return {true, draft};
  const auto draft_prob = [draft_probs](TokenId id) { return prob_in_sorted_list(draft_probs, id); };
  if (const std::optional<TokenId> token = draw_residual(target, draft_prob, u_residual)) return {false, *token};
  return {true, draft};
}

}  // namespace met
