// Scheduler: creation, retirement, preemption and the step loop; admission
// is in scheduler_admission.cc. Tested by tests/scheduler/scheduler_test.cc.
#include "scheduler/scheduler.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/check.h"
#include "core/fault_flag.h"
#include "core/log.h"
#include "kv/kv_block.h"
#include "scheduler/finish_reason.h"
#include "scheduler/lifecycle.h"
#include "scheduler/commit_token.h"

namespace met {
Result<std::unique_ptr<Scheduler>> Scheduler::create(SchedIo io, SpillIo* spill, const Tokenizer& tokenizer,
                                                     SchedulerOptions options) {
  const DeviceInfo& di = io.dev.info();
  if (di.kv_block_tokens != kKvBlockTokens) {
    return invalid_argument("the device's KV blocks hold {} tokens; the KV manager's hold {}", di.kv_block_tokens,
                            kKvBlockTokens);
  }
  if (options.max_seqs < 1) return invalid_argument("--max-seqs must be at least 1");
  const SpecOptions& spec = options.spec;
  if (spec.max_draft < 0 || spec.max_draft > kMaxDraftTokens) {
    return invalid_argument("--spec-lookup {} must be in [0, {}]", spec.max_draft, kMaxDraftTokens);
  }
  if (spec.prediction_draft < 1 || spec.prediction_draft > kMaxDraftTokens) {
    return invalid_argument("a predicted output's drafts per step ({}) must be in [1, {}]", spec.prediction_draft,
                            kMaxDraftTokens);
  }
  if (spec.draft_model != nullptr && (spec.model_draft < 1 || spec.model_draft > kMaxDraftTokens)) {
    return invalid_argument("--draft-max {} must be in [1, {}]", spec.model_draft, kMaxDraftTokens);
  }
  if (spec.draft_model != nullptr && spec.draft_model->info().vocab_size != di.vocab_size) {
    return invalid_argument("the draft model's vocabulary has {} tokens; the model's has {}",
                            spec.draft_model->info().vocab_size, di.vocab_size);
  }
  if (spec.mtp && di.mtp_drafts == 0) {
    return invalid_argument("MTP drafting needs a device that runs the model's MTP block (DeviceInfo::mtp_drafts)");
  }
  if (spec.min_ngram < 1 || spec.max_ngram < spec.min_ngram) {
    return invalid_argument("--spec-ngram {}..{}: the shortest n-gram must be at least 1 and at most the longest",
                            spec.min_ngram, spec.max_ngram);
  }
  if (options.max_batch_tokens < options.max_seqs) {
    return invalid_argument("--max-batch-tokens ({}) must be at least --max-seqs ({})", options.max_batch_tokens,
                            options.max_seqs);
  }
  if (di.max_rows > 0 && options.max_batch_tokens > di.max_rows) {
    return invalid_argument("--max-batch-tokens {} is more than the device's {} rows", options.max_batch_tokens,
                            di.max_rows);
  }
  if (di.max_seqs > 0 && options.max_seqs > std::min(di.max_seqs, di.max_outputs)) {
    return invalid_argument("--max-seqs {} is more than the device's {}", options.max_seqs,
                            std::min(di.max_seqs, di.max_outputs));
  }
  if (di.num_state_slots > 0 && options.max_seqs > di.num_state_slots - di.num_state_snapshot_slots) {
    return invalid_argument("--max-seqs {} is more than the device's {} recurrent-state slots", options.max_seqs,
                            di.num_state_slots - di.num_state_snapshot_slots);
  }
  if (options.preempt == PreemptMode::kSwap && spill == nullptr) {
    return invalid_argument("--preempt swap needs a spill directory (--spill-dir)");
  }
  if (options.max_seq_len <= 0 || (di.max_context > 0 && options.max_seq_len > di.max_context)) {
    options.max_seq_len = di.max_context;
  }
  return std::unique_ptr<Scheduler>(new Scheduler(io, spill, tokenizer, options));
}

Scheduler::Scheduler(SchedIo io, SpillIo* spill, const Tokenizer& tokenizer, SchedulerOptions options)
    : io_(io),
      spill_(spill),
      tokenizer_(tokenizer),
      options_(options),
      max_seq_len_(static_cast<size_t>(std::max(options.max_seq_len, 0))),
      kv_window_(options.release_behind_window ? std::max(io.dev.info().kv_window, 0) : 0),
      lane_(io, max_seq_len_, kv_window_),
      step_(static_cast<size_t>(options.max_seqs)) {
  model_eos_ = tokenizer_.vocab().eog_ids();
  active_.reserve(static_cast<size_t>(options_.max_seqs));
  lane_.observe_costs(&drafts_.cost());
}

Scheduler::~Scheduler() {
  if (!idle()) fail_all("the engine stopped");
}

RequestLimits Scheduler::limits() const {
  const DeviceInfo& info = io_.dev.info();
  RequestLimits r{info.vocab_size, options_.max_seq_len, io_.kv.num_blocks(), kv_window_, info.num_adapter_slots};
  r.has_head = info.has_head;
  r.max_whole_prompt = info.causal ? 0 : std::min(options_.max_batch_tokens, info.max_rows);
  return r;
}

void Scheduler::fail_all(std::string_view message) {
  lane_.abandon();  // the device is quiet before any block is given back
  for (ActiveSeq& a : active_) send_error(io_, a, message);
  active_.clear();
  for (ActiveSeq& a : waiting_) send_error(io_, a, message);
  waiting_.clear();
  for (SwappedSeq& s : swapped_) {
    if (spill_ != nullptr) {
      Status r = spill_->remove(s.swap_id);
      if (!r.ok()) MET_LOG_WARN("fail_all: {}", r.message());
    }
    send_error(io_, s.a, message);
  }
  swapped_.clear();
  drafts_.forget_retired(active_, options_.spec);
}

void Scheduler::retire_cancelled_and_timed_out() {
  const TimePoint now = io_.clock.now();
  // Marks `a` ended (failed when cancelled, "timeout" past its deadline);
  // finish_sequence answers it either way.
  auto ends_now = [&](ActiveSeq& a) {
    if (a.sink.cancelled()) {
      fail_sequence(a, a.sink.cancel_reason());
    } else if (a.limits.timeout_at.has_value() && now >= *a.limits.timeout_at) {
      a.status.guard_stop = GuardStop::kRequestTimeout;
      a.status.finished = true;
    } else {
      return false;
    }
    return true;
  };
  for (ActiveSeq& a : active_) {
    if (!a.status.finished) ends_now(a);  // retired by retire_finished
  }
  for (size_t i = 0; i < waiting_.size();) {
    if (!ends_now(waiting_[i])) {
      ++i;
      continue;
    }
    ActiveSeq out = std::move(waiting_[i]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    finish_sequence(io_, out, max_seq_len_);
  }
  for (size_t i = 0; i < swapped_.size();) {
    if (!ends_now(swapped_[i].a)) {
      ++i;
      continue;
    }
    SwappedSeq out = std::move(swapped_[i]);
    swapped_.erase(swapped_.begin() + static_cast<std::ptrdiff_t>(i));
    Status r = spill_->remove(out.swap_id);
    if (!r.ok()) MET_LOG_WARN("retiring a swapped sequence: {}", r.message());
    finish_sequence(io_, out.a, max_seq_len_);
  }
}

void Scheduler::retire_finished() {
  for (size_t i = 0; i < active_.size();) {
    if (!active_[i].status.finished) {
      ++i;
      continue;
    }
    ActiveSeq a = take_active(io_, active_, i);
    finish_sequence(io_, a, max_seq_len_);
  }
}

void Scheduler::preempt(size_t idx) {
  ActiveSeq& v = active_[idx];
  MET_LOG_DEBUG("preempting seq {} ({} tokens cached)", v.seq.id.value(), v.seq.seq_len);
  // A sequence admitted from a state snapshot it has not restored yet holds
  // no state of its own to save: it is preempted for recompute.
  if (options_.preempt == PreemptMode::kSwap && spill_ != nullptr && v.seq.seq_len > 0 &&
      !v.seq.restore_from.has_value()) {
    Result<SwappedSeq> r = swap_out_sequence(io_, active_, idx, *spill_, SpillId(next_swap_id_++), image_);
    if (!r.ok()) {
      MET_LOG_WARN("swap-out failed: {}", r.status().message());
      return;
    }
    ++r->a.queue.num_preemptions;
    RequestEvent swapped = request_event_of(r->a, RequestEventKind::kSwapped);
    swapped.kv_blocks = r->num_blocks;  // in the image now
    io_.tel.request_event(swapped);
    swapped_.push_back(std::move(*r));
    io_.tel.preempted(PreemptKind::kSwap);
    return;
  }
  ActiveSeq a = take_active(io_, active_, idx);
  // The KV is valid: its full blocks stay findable, so the re-prefill may hit.
  io_.kv.apply(ReleaseSeq{&a.seq, /*cache=*/true, "preempt for recompute"});
  ++a.queue.num_preemptions;
  io_.tel.preempted(PreemptKind::kRecompute);
  io_.tel.request_event(request_event_of(a, RequestEventKind::kPreempted));
  requeue(std::move(a));
}

void Scheduler::describe(std::vector<SeqProgress>& out) const {
  auto progress = [](const ActiveSeq& a, SeqPhase phase) {
    return SeqProgress{a.sink.id(), phase, static_cast<int32_t>(a.out.tokens.size()),
                       static_cast<int32_t>(a.seq.block_table.size()) - a.seq.num_released_blocks};
  };
  for (const ActiveSeq& a : waiting_) {
    out.push_back(progress(a, a.queue.num_preemptions > 0 ? SeqPhase::kPreempted : SeqPhase::kWaiting));
  }
  for (const ActiveSeq& a : active_) {
    const bool decoding = a.timing.decode_start.has_value() && pending_tokens(a) <= 1;
    out.push_back(progress(a, decoding ? SeqPhase::kRunning : SeqPhase::kPrefill));
  }
  for (const SwappedSeq& s : swapped_) {
    SeqProgress p = progress(s.a, SeqPhase::kSwapped);
    p.kv_blocks = s.num_blocks;
    out.push_back(p);
  }
}

void Scheduler::collect_victim_candidates() {
  candidates_.clear();
  order_.clear();
  for (size_t i = 0; i < active_.size(); ++i) {
    const ActiveSeq& a = active_[i];
    if (a.status.finished) continue;
    candidates_.push_back(VictimCandidate{a.queue.admit_order, a.out.tokens.size(), a.queue.immune_until_tokens});
    order_.push_back(i);
  }
}

bool Scheduler::give_way() {
  collect_victim_candidates();
  if (candidates_.empty()) return false;
  if (candidates_.size() == 1) {
    // Alone and out of blocks: it needs more KV than the whole pool.
    ActiveSeq& a = active_[order_[0]];
    a.status.guard_stop = GuardStop::kKvExhausted;
    a.status.finished = true;
    return false;
  }
  preempt(order_[*choose_decode_victim(candidates_)]);
  return true;
}

void Scheduler::run_step() {
  Result<Ticket> t = io_.dev.launch(step_.plan());
  if (!t.ok()) {
    for (const Scheduled& s : step_.scheduled()) {
      fail_sequence(active_[s.active_idx], fmt::format("the forward step was refused: {}", t.status().message()));
    }
    return;
  }
  Status st = io_.dev.await_result(*t, result_);
  if (!st.ok()) {
    // The device's state is unknown now: nothing it holds can be trusted.
    set_fault(fmt::format("a forward step failed: {}", st.message()));
    fail_all(fmt::format("the device failed ({}); the server is shutting down", st.message()));
    return;
  }
  drafts_.observe_step(step_.plan().num_rows(), result_.busy_ns);
  StepRecord record;
  record.num_rows = step_.plan().num_rows();
  record.device_busy_ns = result_.busy_ns;
  for (const Scheduled& s : step_.scheduled()) {
    // A decode row (and its drafts) samples the sequence's next token; any
    // other rows compute a prompt (or re-compute one after a preemption).
    const bool decode = s.output.has_value() && !s.embeds && s.num_rows == 1 + s.num_drafts;
    (decode ? record.decode_tokens : record.prefill_tokens) += s.num_rows;
  }
  settle_step();
  record.num_blocks_in_use = io_.kv.num_blocks_in_use();
  io_.tel.step_done(record);
}

void Scheduler::settle_step() {
  for (const Scheduled& s : step_.scheduled()) {
    ActiveSeq& a = active_[s.active_idx];
    if (s.num_drafts > 0) {
      const bool from_model = a.spec.drafts_from_model;
      const int64_t accepted_before = a.spec.num_accepted;
      settle_verify(io_, a, step_.plan().outputs, *s.output, result_, pick_scratch_, max_seq_len_);
      if (from_model) {
        drafts_.observe_model_verify(s.num_drafts, static_cast<int32_t>(a.spec.num_accepted - accepted_before));
      }
      release_behind_window(io_, a.seq, kv_window_);
      continue;
    }
    a.seq.seq_len += s.num_rows;
    // A prefill chunk's full blocks are shareable at once (a sibling choice
    // or another request with the same prefix hits them while `a` runs).
    if (s.num_rows > 1 && a.embed.kv_shareable) io_.kv.apply(PublishPrefix{&a.seq});
    release_behind_window(io_, a.seq, kv_window_);
    record_prompt_logprobs(a, s, result_);
    if (s.embeds) {
      record_embedding(a, s, result_);
      if (a.seq.seq_len == a.out.prompt_len) {
        a.timing.decode_start = io_.clock.now();  // its one answer is ready: the "first token"
        a.status.finished = true;
      }
      continue;
    }
    if (!s.output.has_value()) continue;
    const auto i = static_cast<size_t>(*s.output);
    const bool use_logits = step_.plan().outputs[i].kind == OutputKind::kLogits;
    const TokenId token = pick_token(a, result_, i, use_logits, pick_scratch_);
    commit_token(io_, a, token, max_seq_len_);
    note_mtp_draft(a, result_, i, token);
  }
}

bool Scheduler::needs_quiet() const {
  // A sequence could be resumed or admitted now (without counting prefix
  // hits: those are found at admission, once the lane is drained anyway).
  const bool has_slot = active_.size() < static_cast<size_t>(options_.max_seqs);
  const int32_t free_blocks = io_.kv.num_free_blocks();
  if (has_slot && !swapped_.empty() &&
      free_blocks >= std::min(swapped_.front().num_blocks + 1, io_.kv.num_blocks())) {
    return true;
  }
  if (has_slot && swapped_.empty() && !waiting_.empty()) {
    const ActiveSeq& w = waiting_.front();
    int32_t need = blocks_for_tokens(std::min(pending_tokens(w), options_.max_batch_tokens));
    if (kv_window_ > 0) need = std::min(need, window_min_blocks(kv_window_));  // as plan_tick admits
    if (free_blocks >= need) return true;
  }
  const TimePoint now = io_.clock.now();
  for (const ActiveSeq& a : active_) {
    const bool timed_out = a.limits.timeout_at.has_value() && now >= *a.limits.timeout_at;
    if (a.status.finished || a.sink.cancelled() || timed_out) return true;
  }
  return false;
}

void Scheduler::after_lane() {
  if (is_faulted()) fail_all(fmt::format("the server is faulted: {}", fault_reason()));
}

void Scheduler::decide_mtp_guesses() {
  const DeviceInfo& info = io_.dev.info();
  const bool guesses = drafts_.mtp_guesses_pay(active_, options_.spec, DraftLimits{max_seq_len_, info.state_drafts},
                                               info.mtp_drafts);
  step_.set_mtp_guesses(guesses);
  lane_.set_mtp_guesses(guesses);
}

bool Scheduler::inflight_guesses_stand() {
  const DeviceInfo& info = io_.dev.info();
  return lane_.inflight_guesses() &&
         drafts_.inflight_guesses_stand(active_, options_.spec, DraftLimits{max_seq_len_, info.state_drafts},
                                        info.mtp_drafts);
}

bool Scheduler::propose_all_drafts(DraftPlanner::Mode mode) {
  const DraftLimits limits{max_seq_len_, io_.dev.info().state_drafts};
  return drafts_.propose(active_, options_.spec, limits, io_.tel, mode);
}

bool Scheduler::tick() {
  if (idle()) return false;
  decide_mtp_guesses();
  if (lane_.has_inflight()) {
    // A sequence with drafts verifies them in a synchronous step: the lane
    // settles first.
    if (!needs_quiet() && !propose_all_drafts(DraftPlanner::Mode::kProbe) && !inflight_guesses_stand()) {
      const LaneStep r = lane_.step_decode_pipelined(active_);
      after_lane();
      if (r == LaneStep::kRan) {
        drafts_.step_launched();
        return true;
      }
    } else {
      lane_.drain(active_);
      after_lane();
    }
  }
  retire_cancelled_and_timed_out();
  retire_finished();
  view_queues();
  plan_tick(view_, plan_, plan_scratch_);
  apply_plan();
  propose_all_drafts(DraftPlanner::Mode::kPropose);
  decide_mtp_guesses();
  bool ran = false;
  if (step_.build(active_, io_.dev.info(), io_.kv, options_.max_batch_tokens)) {
    if (options_.pipeline && step_.is_decode_only(active_.size()) && ahead_allowed(active_)) {
      lane_.launch_fresh(step_.plan(), active_);
    } else {
      run_step();
    }
    drafts_.step_launched();
    ran = true;
  } else if (!active_.empty()) {
    // Every running sequence is mid-prefill and the pool is full.
    give_way();
  }
  retire_finished();
  drafts_.forget_retired(active_, options_.spec);
  return ran;
}

}  // namespace met
