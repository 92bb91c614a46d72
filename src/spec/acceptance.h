// The acceptance rule of speculative decoding: which drafted tokens a verify
// step keeps, and which token it commits after them.
//  - Greedy: the drafts kept are the longest prefix equal to the target's
//    argmax at each position; the target's argmax after them is committed
//    too, so k drafts commit between 1 and k + 1 tokens, exactly the tokens
//    plain greedy decoding would have produced.
//  - Sampled (Leviathan et al. 2023, Chen et al. 2023): at a position where
//    the target's final distribution (after the whole sampler chain) is p and
//    the draft d was drawn from q, d is kept with probability
//    min(1, p(d) / q(d)); otherwise the committed token is drawn from the
//    residual normalize(max(0, p - q)). The committed token is then
//    distributed exactly as p. Drafts without probabilities (prompt lookup,
//    predicted outputs) have q a point mass on d: d is kept with probability
//    p(d), and the residual is p without d, renormalised. The engine walks the
//    drafts in order and stops at the first one not kept; when all are kept,
//    the token after them is sampled from the target's last distribution as
//    usual.
// The uniforms are the caller's (drawn from the sequence's seeded RNG), in
// [0, 1). Distributions are sparse (id, probability) lists summing to 1 with
// distinct ids, as truncation leaves them.
// Threading: pure functions; no allocation. Tested by tests/spec/acceptance_test.cc.
#pragma once

#include <cstdint>
#include <span>

#include "core/ids.h"

namespace met {

struct TokenProb {
  TokenId id = 0;
  float prob = 0.0f;
};

struct GreedyVerdict {
  int32_t num_accepted = 0;  // leading drafts equal to the target's argmax
  TokenId next = 0;          // the target's argmax after them, committed after the accepted drafts
};

// REQUIRES: target_argmax.size() == drafts.size() + 1: the target's argmax at
// each draft's position, then at the position after the last draft.
GreedyVerdict accept_greedy(std::span<const TokenId> drafts, std::span<const TokenId> target_argmax);

struct DraftVerdict {
  bool accepted = false;
  TokenId token = 0;  // the token to commit: the draft when accepted, else the residual's draw
};

// A draft with no distribution of its own (q a point mass on `draft`).
// u_accept decides acceptance; u_residual draws the replacement. A target
// that is a point mass on the draft never rejects it.
DraftVerdict accept_token_draft(TokenId draft, std::span<const TokenProb> target, double u_accept,
                                double u_residual);

// A draft drawn from `draft_probs`. REQUIRES: draft_probs sorted by id, with
// `draft` in it at a positive probability. Cost: O(|target| log |draft_probs|)
// on rejection, O(|target| + log |draft_probs|) otherwise.
DraftVerdict accept_sampled_draft(TokenId draft, std::span<const TokenProb> target,
                                  std::span<const TokenProb> draft_probs, double u_accept, double u_residual);

}  // namespace met
