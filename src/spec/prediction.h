// PredictionMatcher: drafts from a request's predicted output (OpenAI's
// Predicted Outputs: `prediction: {"type": "content", ...}`, tokenized), and
// the request's accounting of them.
// While the output follows the prediction ("in step"), the drafts are the
// prediction's next tokens. When the output leaves it (an edit), the matcher
// looks for where the prediction's text goes on, near where the output left
// it (the "anchor"):
//  - a one-token substitution is tried at once: the step after the output
//    left the prediction drafts the prediction's text past the token it
//    replaced (when the output had followed it for confirm_n tokens before);
//  - else the output's last m tokens since the anchor, found in the
//    prediction at or after the anchor, pick it up after them, at the place
//    nearest to where an edit of as many tokens as it replaced would put the
//    output (distance d), where m is at least need_at(d), 1 + the bits of
//    d: one token of agreement where the edit kept the length, two a token
//    off, three 2-3 off, four 4-7 off, eleven 512-1,023 off. Repetitive text
//    (a loop, boilerplate) has the words before an edit again further on;
//    the distance rule keeps the output from jumping there.
// A pick is tried, not trusted: until confirm_n tokens have followed it in
// step, leaving it again keeps the anchor, so a wrong pick never loses the
// place the output really left.
// Accounting, as OpenAI's completion_tokens_details defines it for Predicted
// Outputs ("accepted: tokens in the prediction that appeared in the
// completion"; "rejected: tokens in the prediction that did not appear in the
// completion ... still counted in the total completion tokens for billing"):
//  - accepted_prediction_tokens: output tokens that continued the prediction
//    in step, whether drafted or the target's own token after the accepted
//    drafts (so it does not depend on how many tokens a step drafts: a
//    prediction the output reproduces whole counts all its tokens);
//  - rejected_prediction_tokens: drafted prediction tokens that were verified
//    and did not enter the output (rejected by the rule, or cut off by a stop).
//    Each was computed by the target, so the request's billed completion
//    tokens are its output tokens plus these.
// Tokens committed out of step (those that re-find the prediction included)
// are not accepted ones, and prediction tokens an edit skipped were never
// drafted, so are not rejected ones. OpenAI publishes only the two sentences
// quoted; usage reported for its guide's example (accepted 49, rejected 107,
// for an output of about 120 tokens that mostly repeats the prediction)
// suggests its counts are of drafts, not of an alignment of the two texts.
// Invariants: propose() depends only on what on_verified() was told; a
// proposal stays valid until the next on_verified().
// Cost: in step, O(drafts) per call; out of step, a committed token m
// tokens after the anchor searches the 2^m places a pick can be at (the
// prediction after the anchor once m reaches kMaxEvidence), each in
// O(kMaxEvidence) at worst.
// No allocation after construction once `drafts` has capacity.
// Threading: one owner (the engine thread). Tested by tests/spec/prediction_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/ids.h"

namespace met {

struct PredictionOptions {
  // Tokens the output must follow a pick for, in step, before it is trusted
  // as the place the output is at (a later edit is looked for near it).
  // Fewer trusts a wrong pick in repetitive text sooner; more keeps looking
  // near an older place longer. >= 1.
  int32_t confirm_n = 4;
};

// OpenAI's usage.completion_tokens_details fields for Predicted Outputs.
struct PredictionUsage {
  int64_t accepted_prediction_tokens = 0;
  int64_t rejected_prediction_tokens = 0;
};

class PredictionMatcher {
 public:
  explicit PredictionMatcher(std::vector<TokenId> prediction, PredictionOptions options = {});

  // Replaces `drafts` with the prediction's next up to max_draft tokens while
  // the output is in step with it; empty otherwise. REQUIRES: max_draft >= 0.
  void propose(int32_t max_draft, std::vector<TokenId>& drafts) const;

  // After a step: the first num_drafted tokens of the last proposal were
  // verified (0 for a step without drafts), and `committed` are the tokens the
  // step added to the output, in order: the drafts kept, then the target's
  // token (fewer when a stop ended the output inside the step). The drafts
  // kept are the leading committed tokens equal to the drafts: the acceptance
  // rule never commits a rejected draft in its own place (greedy: the target's
  // argmax differs from it; sampled: the residual of a point mass excludes it).
  // REQUIRES: num_drafted <= the last proposal's size.
  void on_verified(int32_t num_drafted, std::span<const TokenId> committed);

  // Tokens the output gained without this matcher's drafts (a step without
  // drafts, or one whose drafts came from another source), in order.
  void on_committed(std::span<const TokenId> committed);

  // Whether the output is following the prediction now.
  bool in_step() const { return next_.has_value(); }
  const PredictionUsage& usage() const { return usage_; }

  // The output tokens a pick `distance` tokens from where a same-length edit
  // would put the output needs (above), and the most the matcher keeps.
  static size_t need_at(size_t distance);
  static constexpr size_t kMaxEvidence = 16;

 private:
  void advance(TokenId token);
  void remember(TokenId token);
  void leave();
  void resync();
  size_t evidence_at(size_t next, size_t limit) const;

  std::vector<TokenId> prediction_;
  PredictionOptions options_;
  std::optional<size_t> next_ = 0;  // the prediction's token the output is expected to produce next, while in step
  size_t run_ = 0;                  // tokens in step since the prediction was (last) picked up
  size_t anchor_ = 0;               // where the output last left the prediction after confirm_n tokens in step
  size_t since_anchor_ = 0;         // output tokens since then (all of them, until it first does)
  bool try_substitution_ = false;   // the output has just left a run of confirm_n tokens in step
  std::vector<TokenId> recent_;     // the output's last (up to) kMaxEvidence tokens, oldest first
  PredictionUsage usage_;
};

}  // namespace met
