// Speculative decoding in the scheduler. Tested by tests/scheduler/speculation_test.cc.
#include "scheduler/speculation.h"

#include <algorithm>

#include "kv/kv_manager.h"
#include "spec/prompt_lookup.h"

namespace met {

bool can_speculate(const ActiveSeq& a) {
  return !a.status.finished && pending_tokens(a) == 1 && !wants_prompt_logprobs(a) && a.spec.max_draft > 0;
}

int64_t draft_room(const ActiveSeq& a, const DraftLimits& limits) {
  // k drafts commit up to k + 1 tokens: within the output budget and the
  // context (the rows' positions end at tokens.size() - 1 + k).
  const auto room = static_cast<int64_t>(limits.max_seq_len) - static_cast<int64_t>(a.seq.tokens.size());
  const int64_t state = a.seq.state_slot.has_value() ? limits.state_drafts : int64_t{kMaxDraftTokens};
  return std::min({int64_t{a.limits.remaining} - 1, room, int64_t{a.spec.max_draft}, state});
}

void propose_drafts(ActiveSeq& a, const SpecOptions& options, const DraftLimits& limits) {
  a.spec.drafts.clear();
  a.spec.drafts_from_prediction = false;
  a.spec.drafts_from_model = false;
  if ((!options.enabled() && !a.spec.prediction.has_value()) || !can_speculate(a)) return;
  const int64_t budget = draft_room(a, limits);
  if (a.spec.prediction.has_value()) {
    const int64_t cap = std::min<int64_t>(options.prediction_draft, budget);
    if (cap > 0) a.spec.prediction->propose(static_cast<int32_t>(cap), a.spec.drafts);
    a.spec.drafts_from_prediction = !a.spec.drafts.empty();
    if (a.spec.drafts_from_prediction) return;
  }
  if (budget <= 0) return;
  if (options.max_draft > 0) {
    const auto cap = static_cast<int32_t>(std::min<int64_t>(options.max_draft, budget));
    propose_prompt_lookup(a.seq.tokens, PromptLookupOptions{options.min_ngram, options.max_ngram, cap}, a.spec.drafts);
  }
  if (a.spec.drafts.empty() && options.mtp && a.spec.mtp_for == a.seq.tokens.size()) {
    const int64_t n = std::min<int64_t>(a.spec.num_mtp_drafts, budget);
    a.spec.drafts.assign(a.spec.mtp_drafts.begin(), a.spec.mtp_drafts.begin() + n);
  }
}

void note_mtp_draft(ActiveSeq& a, const StepResult& result, size_t o, TokenId token) {
  a.spec.mtp_for = 0;
  a.spec.num_mtp_drafts = 0;
  if (o >= result.mtp_argmax.size() || result.argmax[o] != token || a.status.finished) return;
  a.spec.mtp_drafts[0] = result.mtp_argmax[o];
  int32_t n = 1;
  const auto width = static_cast<size_t>(result.mtp_chain_width);
  for (size_t j = 0; j < width && n < kMaxMtpDrafts; ++j) {
    const TokenId t = result.mtp_chain[o * width + j];
    if (t == kNoChainToken) break;
    a.spec.mtp_drafts[static_cast<size_t>(n++)] = t;
  }
  a.spec.num_mtp_drafts = n;
  a.spec.mtp_for = a.seq.tokens.size();
}

int32_t mtp_chain_for(const ActiveSeq& a, int32_t num_drafts, int32_t device_mtp_drafts) {
  const int64_t wanted = num_drafts > 0 ? int64_t{num_drafts} + 1 : int64_t{a.spec.guesses_wanted} - 1;
  if (wanted <= 0 || device_mtp_drafts <= 1 || a.spec.prediction.has_value() || wants_prompt_logprobs(a)) return 0;
  const int64_t room = std::min<int64_t>(a.spec.max_draft, a.limits.remaining - 1) - 1;
  return static_cast<int32_t>(std::clamp<int64_t>(std::min(room, wanted), 0, device_mtp_drafts - 1));
}

int32_t model_draft_offer(const ActiveSeq& a, const SpecOptions& options, const DraftLimits& limits) {
  if (options.draft_model == nullptr || !a.spec.drafts.empty() || !can_speculate(a)) return 0;
  return static_cast<int32_t>(std::clamp<int64_t>(draft_room(a, limits), 0, options.model_draft));
}

bool DraftPlanner::propose(std::vector<ActiveSeq>& active, const SpecOptions& options, const DraftLimits& limits,
                           TelPort& tel, Mode mode) {
  offers_.clear();
  offered_.clear();
  from_model_.clear();
  int32_t decode_rows = 0;
  for (size_t i = 0; i < active.size(); ++i) {
    ActiveSeq& a = active[i];
    propose_drafts(a, options, limits);
    if (!a.status.finished && pending_tokens(a) == 1) ++decode_rows;
    const int32_t model = model_draft_offer(a, options, limits);
    const int32_t available = model > 0 ? model : static_cast<int32_t>(a.spec.drafts.size());
    if (available == 0) {
      // Left without guesses (the steps computed none: the budget gave it
      // none), it drifts back towards trying as a sequence whose drafts were
      // withheld does; else a rate that fell stays where it fell.
      if (!counted_ && options.mtp && can_speculate(a) && !a.spec.prediction.has_value()) a.spec.rate.idle();
      continue;
    }
    // A draft model's drafts start from its recent acceptance and cost its time.
    const bool priced = model > 0;
    offers_.push_back({priced ? a.spec.rate.rate(model_acceptance_.rate()) : a.spec.rate.rate(), available,
                       priced ? draft_cost_.per_draft_ns() : 0.0});
    offered_.push_back(i);
    from_model_.push_back(model > 0);
  }
  if (offers_.empty()) {
    counted_ = true;
    return false;
  }
  if (options.adaptive) {
    allocate_drafts(offers_, cost_, decode_rows, steps_, given_, scratch_);
  } else {
    given_.clear();
    for (const DraftOffer& o : offers_) given_.push_back(o.available);  // every proposal stands
  }
  return trim_to_budget(active, options, tel, mode);
}

int32_t DraftPlanner::collect_guess_offers(const std::vector<ActiveSeq>& active, const DraftLimits& limits,
                                           int32_t device_mtp_drafts) {
  guess_offers_.clear();
  guess_offered_.clear();
  int32_t decode_rows = 0;
  for (size_t i = 0; i < active.size(); ++i) {
    const ActiveSeq& a = active[i];
    if (a.status.finished || pending_tokens(a) != 1) continue;
    ++decode_rows;
    if (!can_speculate(a) || a.spec.prediction.has_value()) continue;
    const int64_t room = std::min<int64_t>(draft_room(a, limits), device_mtp_drafts);
    if (room <= 0) continue;
    guess_offers_.push_back({a.spec.rate.rate(), static_cast<int32_t>(room), 0.0});
    guess_offered_.push_back(i);
  }
  return decode_rows;
}

bool DraftPlanner::guesses_stand(int32_t decode_rows, uint64_t step) {
  if (guess_offers_.empty()) return false;
  allocate_drafts(guess_offers_, cost_, decode_rows, step, guess_given_, scratch_);
  return std::any_of(guess_given_.begin(), guess_given_.end(), [](int32_t k) { return k > 0; });
}

bool DraftPlanner::mtp_guesses_pay(std::vector<ActiveSeq>& active, const SpecOptions& options,
                                   const DraftLimits& limits, int32_t device_mtp_drafts) {
  for (ActiveSeq& a : active) a.spec.guesses_wanted = 0;
  if (!options.mtp || !options.adaptive || device_mtp_drafts <= 0 || !cost_.known()) return true;
  const int32_t decode_rows = collect_guess_offers(active, limits, device_mtp_drafts);
  if (decode_rows == 0) return true;
  if (!guesses_stand(decode_rows, steps_ + 1)) return false;
  for (size_t k = 0; k < guess_offered_.size(); ++k) active[guess_offered_[k]].spec.guesses_wanted = guess_given_[k];
  return true;
}

bool DraftPlanner::inflight_guesses_stand(const std::vector<ActiveSeq>& active, const SpecOptions& options,
                                          const DraftLimits& limits, int32_t device_mtp_drafts) {
  if (!options.mtp || device_mtp_drafts <= 0) return false;
  const int32_t decode_rows = collect_guess_offers(active, limits, device_mtp_drafts);
  if (!options.adaptive) return !guess_offers_.empty();
  return guesses_stand(decode_rows, steps_);
}

bool DraftPlanner::trim_to_budget(std::vector<ActiveSeq>& active, const SpecOptions& options, TelPort& tel,
                                  Mode mode) {
  bool any = false;
  int32_t withheld = 0;
  asks_.clear();
  for (size_t k = 0; k < offers_.size(); ++k) {
    ActiveSeq& a = active[offered_[k]];
    withheld += offers_[k].available - given_[k];
    if (from_model_[k]) {
      if (given_[k] > 0 && mode == Mode::kPropose) {
        asks_.push_back({a.seq.id.value(), a.seq.tokens, given_[k], &a.spec.drafts});
        a.spec.drafts_from_model = true;
      }
      any = any || given_[k] > 0;
    } else {
      a.spec.drafts.resize(static_cast<size_t>(given_[k]));
      any = any || !a.spec.drafts.empty();
    }
    if (given_[k] == 0 && !counted_) a.spec.rate.idle();
  }
  if (!counted_ && withheld > 0) tel.drafts_withheld(withheld);
  counted_ = true;
  if (asks_.empty()) return any;
  const int64_t busy_before = options.draft_model->busy_ns();
  options.draft_model->propose(asks_);
  int32_t asked = 0;
  for (const DraftAsk& ask : asks_) asked += ask.num_drafts;
  draft_cost_.observe(asked, options.draft_model->busy_ns() - busy_before);
  any = false;
  for (size_t k = 0; k < offers_.size(); ++k) any = any || !active[offered_[k]].spec.drafts.empty();
  return any;
}

void DraftPlanner::forget_retired(const std::vector<ActiveSeq>& active, const SpecOptions& options) {
  if (options.draft_model == nullptr || options.draft_model->num_tracked() == 0) return;
  live_.clear();
  for (const ActiveSeq& a : active) live_.push_back(a.seq.id.value());
  options.draft_model->retain_only(live_);
}

void add_verify_outputs(StepPlan& plan, int32_t first_row, int32_t num_rows, const ActiveSeq& a) {
  const OutputKind kind = needs_logits(a) ? OutputKind::kLogits : OutputKind::kArgmax;
  for (int32_t k = 0; k < num_rows; ++k) add_output_row(plan, first_row + k, kind, a, k);
}

void settle_verify(const SchedIo& io, ActiveSeq& a, std::span<const OutputRow> outputs, int32_t first_output,
                   StepResult& result, PickScratch& scratch, size_t max_seq_len) {
  const int32_t base = a.seq.seq_len;
  const auto num_drafts = static_cast<int32_t>(a.spec.drafts.size());
  const size_t output_before = a.out.tokens.size();
  a.spec.verifying = true;
  int32_t accepted = 0;
  for (int32_t j = 0; j <= num_drafts; ++j) {
    // Row j's input was draft j - 1, committed in place: its output is the
    // next token, picked as plain decoding picks it from the same logits
    // with the state those drafts left (the sampler's draw included), unless
    // the sequence ended or an argmax row's token is no longer the argmax's
    // to give (a forced think token, a grammar that started).
    const auto o = static_cast<size_t>(first_output + j);
    const bool use_logits = outputs[o].kind == OutputKind::kLogits;
    if (j > 0 && (a.status.finished || (!use_logits && needs_logits(a)))) break;
    a.seq.seq_len = base + j + 1;
    const TokenId token = pick_token(a, result, o, use_logits, scratch);
    commit_token(io, a, token, max_seq_len);
    note_mtp_draft(a, result, o, token);
    const bool kept = j < num_drafts && token == a.spec.drafts[static_cast<size_t>(j)];
    if (kept) ++accepted;
    if (!kept || a.status.finished) break;
  }
  a.spec.verifying = false;
  if (a.spec.prediction.has_value()) {
    const std::span<const TokenId> committed(a.out.tokens.data() + output_before, a.out.tokens.size() - output_before);
    if (a.spec.drafts_from_prediction) {
      a.spec.prediction->on_verified(num_drafts, committed);
    } else {
      a.spec.prediction->on_committed(committed);  // prompt lookup's drafts
    }
  }
  a.spec.rate.observe(num_drafts, accepted);
  a.spec.num_drafted += num_drafts;
  a.spec.num_accepted += accepted;
  io.tel.speculated(num_drafts, accepted);
  a.spec.drafts.clear();
  io.kv.apply(Rollback{&a.seq});
}

}  // namespace met
