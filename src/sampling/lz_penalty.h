// The LZ penalty (Ginart et al., "LZ Penalty: An information-theoretic
// repetition penalty for autoregressive language models", arXiv 2504.20131),
// the chain's fourth step. It penalizes a candidate by the bits LZ77 would
// save coding it as a copy from a sliding window instead of as a literal,
// so decoding samples from the model's distribution with the highly
// compressible part removed; it lets reasoning models decode greedily
// without degenerate loops.
//
// Definition, following the authors' reference implementation (the SGLang
// penalizer in github.com/tginart/sglang, penaltylib/lz_penalty.py; the
// paper's method section itself was not reachable from here):
//   W = the last `window` (lz_window, 512) output tokens, w = |W|;
//   b = `buffer` (lz_buffer, 32), the longest match considered.
//   If w <= b, no penalty. Otherwise, for every position p in [b, w):
//     U(p) = length of the common suffix of W[..p-1] and W[..w-1], capped at b
//            (how much of the recent text the copy source already matches);
//     emitting a = W[p] next would extend that match to length U(p) + 1, a
//     copy from distance d(p) = w - p.
//   For a candidate a, its best match is the longest one among positions
//   with W[p] = a, ties going to the nearest (smallest d). Its LZ codelength
//   is log2(d) bits, clamped to [0, log2 V] (V: the vocabulary), against a
//   literal's log2 V. The penalty is the saving, applied to the logit:
//     logit(a) -= alpha * (log2 V - clamp(log2 d(a), 0, log2 V)),
//   and 0 for a token with no match in W. alpha = lz_penalty (0.15-0.2 in
//   the authors' runs). Work: O(w * b) compares per call.
// Threading: pure function over the caller's row and scratch.
// Tested by tests/sampling/lz_penalty_test.cc.
#pragma once

#include <span>

#include "core/ids.h"
#include "sampling/token_tally.h"

namespace met {

struct LzConfig {
  float alpha = 0.0f;
  int32_t buffer = 32;
};

// `window` is the last lz_window output tokens.
void apply_lz_penalty(const LzConfig& config, std::span<const TokenId> window, TokenTally& scratch,
                      std::span<float> logits);

}  // namespace met
