// Scheduler. Tested by tests/scheduler/scheduler_test.cc.
#include "scheduler/scheduler.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/check.h"
#include "core/fault_flag.h"
#include "core/log.h"
#include "scheduler/finish_reason.h"
#include "scheduler/lifecycle.h"
#include "scheduler/settle.h"

namespace met {
Result<std::unique_ptr<Scheduler>> Scheduler::create(SchedIo io, SpillIo* spill, const Tokenizer& tokenizer,
                                                     SchedulerOptions options) {
  const DeviceInfo& di = io.dev.info();
  if (options.max_seqs < 1) return invalid_argument("--max-seqs must be at least 1");
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
      lane_(io, max_seq_len_),
      step_(static_cast<size_t>(options.max_seqs)) {
  model_eos_ = tokenizer_.vocab().eog_ids();
  active_.reserve(static_cast<size_t>(options_.max_seqs));
}

Scheduler::~Scheduler() {
  if (!idle()) fail_all("the engine stopped");
}

RequestLimits Scheduler::limits() const {
  return RequestLimits{io_.dev.info().vocab_size, options_.max_seq_len, io_.dev.num_blocks()};
}

ActiveSeq Scheduler::make_seq(EngineRequest&& r, ResponseSink&& sink, TimePoint submitted) {
  ActiveSeq a;
  a.seq.id = SeqId(next_seq_id_++);
  a.prompt_len = static_cast<int32_t>(r.prompt.size());
  a.seq.tokens = std::move(r.prompt);
  a.seq.salt = CacheSalt{tenant_salt(r.cache_salt), r.adapter_id};
  a.remaining = r.max_tokens;
  a.min_tokens = r.min_tokens;
  if (!r.ignore_eos) a.eos_tokens = model_eos_;
  a.eos_tokens.insert(a.eos_tokens.end(), r.stop_token_ids.begin(), r.stop_token_ids.end());
  a.sampler = Sampler(r.sampling);
  a.logprobs = r.logprobs;
  a.prompt_logprobs = r.prompt_logprobs;
  a.thinking = r.thinking;
  if (a.thinking.has_value()) a.think = initial_thinking_state(*a.thinking);
  a.tool_call_end_token = r.tool_call_end_token;
  if (r.grammar != nullptr || r.triggered_grammar.has_value()) {
    if (trie_ == nullptr) trie_ = std::make_unique<TokenTrie>(TokenTrie::build(tokenizer_));
    a.trie = trie_.get();
  }
  if (r.grammar != nullptr) {
    a.grammar = std::move(r.grammar);
    a.matcher.emplace(*a.grammar, *trie_);
  }
  a.triggered = std::move(r.triggered_grammar);
  DetokenizerOptions dopt;
  dopt.skip_special = !r.render_special_tokens;
  dopt.stop_strings = std::move(r.stop_strings);
  // A prompt of control tokens only (BOS) has no text yet: the output begins
  // the text, so its first piece loses SentencePiece's leading space.
  const Vocab& vocab = tokenizer_.vocab();
  dopt.at_sequence_start = std::all_of(a.seq.tokens.begin(), a.seq.tokens.end(), [&](TokenId t) {
    return vocab.contains(t) && vocab.token(t).kind == TokenKind::kControl;
  });
  a.detok.emplace(tokenizer_, std::move(dopt));
  a.sink = std::move(sink);
  a.request_start = submitted;
  a.last_token_time = submitted;
  if (r.timeout.has_value()) a.timeout_at = submitted + *r.timeout;
  return a;
}

void Scheduler::enqueue(EngineRequest request, ResponseSink sink, TimePoint submitted) {
  Status s = validate_request(request, limits());
  if (!s.ok()) {
    send_error_to_sink(io_, sink, s.message());
    return;
  }
  ActiveSeq a = make_seq(std::move(request), std::move(sink), submitted);
  if (a.remaining == 0) {  // nothing to generate: answered without a step
    finish_sequence(io_, a, max_seq_len_);
    return;
  }
  waiting_.push_back(std::move(a));
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
}

void Scheduler::retire_cancelled_and_timed_out() {
  const TimePoint now = io_.clock.now();
  // Marks `a` ended (failed when cancelled, "timeout" past its deadline);
  // finish_sequence answers it either way.
  auto ends_now = [&](ActiveSeq& a) {
    if (a.sink.cancelled()) {
      fail_sequence(a, "cancelled by the client");
    } else if (a.timeout_at.has_value() && now >= *a.timeout_at) {
      a.guard_stop = GuardStop::kRequestTimeout;
      a.finished = true;
    } else {
      return false;
    }
    return true;
  };
  for (ActiveSeq& a : active_) {
    if (!a.finished) ends_now(a);  // retired by retire_finished
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
    if (!active_[i].finished) {
      ++i;
      continue;
    }
    ActiveSeq a = take_active(io_, active_, i);
    finish_sequence(io_, a, max_seq_len_);
  }
}

void Scheduler::resume_swapped() {
  while (!swapped_.empty() && active_.size() < static_cast<size_t>(options_.max_seqs)) {
    const int32_t need = std::min(swapped_.front().num_blocks + 1, io_.dev.num_blocks());
    if (io_.dev.num_free_blocks() < need) return;
    SwappedSeq s = std::move(swapped_.front());
    swapped_.pop_front();
    Result<ActiveSeq> r = resume_swapped_seq(io_, std::move(s), *spill_, image_);
    if (!r.ok()) {
      MET_LOG_WARN("resume failed: {}", r.status().message());
      continue;
    }
    r->seq.slot_idx = static_cast<int32_t>(active_.size());
    active_.push_back(std::move(*r));
  }
}

void Scheduler::admit_waiting() {
  if (!swapped_.empty()) return;  // swapped sequences were admitted earlier: they go first
  while (!waiting_.empty() && active_.size() < static_cast<size_t>(options_.max_seqs)) {
    ActiveSeq& a = waiting_.front();
    // In-batch prefix sharing (SGLang's): a prompt whose first block another
    // sequence is computing now waits for it, then hits the prefix cache
    // (PublishPrefix) instead of computing it again; FCFS order holds.
    if (prefix_in_flight(a)) return;
    // Prompt logprobs need every prompt position evaluated: no reuse.
    const PrefixMatch m = wants_prompt_logprobs(a) ? PrefixMatch{} : io_.dev.match_prefix(a.seq);
    const int32_t chunk = std::min(pending_tokens(a), options_.max_batch_tokens);
    const int32_t need = blocks_for_tokens(a.seq.seq_len + chunk) - static_cast<int32_t>(a.seq.block_table.size());
    if (need > io_.dev.num_free_blocks()) {
      io_.dev.apply(ReleaseSeq{&a.seq, /*cache=*/false, "admit_waiting: no room"});
      return;
    }
    if (a.num_preemptions == 0) {
      a.cached_prompt_tokens = std::min(m.num_tokens, a.prompt_len);
      io_.tel.cache_queried(static_cast<int64_t>(a.seq.tokens.size()), m.num_tokens);
    } else {
      a.preempt_immune_until_tokens = a.output_tokens.size() + PREEMPT_IMMUNITY_TOKENS;
    }
    if (a.admit_order == 0) a.admit_order = next_admit_order_++;
    a.seq.slot_idx = static_cast<int32_t>(active_.size());
    a.seq.owns_slot = true;
    active_.push_back(std::move(a));
    waiting_.pop_front();
  }
}

bool Scheduler::prefix_in_flight(const ActiveSeq& a) const {
  if (wants_prompt_logprobs(a) || a.seq.tokens.size() <= static_cast<size_t>(kKvBlockTokens)) return false;
  const auto block = static_cast<std::ptrdiff_t>(kKvBlockTokens);
  for (const ActiveSeq& b : active_) {
    if (b.finished || b.seq.seq_len >= kKvBlockTokens || pending_tokens(b) <= 1) continue;
    if (b.seq.tokens.size() <= static_cast<size_t>(kKvBlockTokens) || !(b.seq.salt == a.seq.salt)) continue;
    if (std::equal(a.seq.tokens.begin(), a.seq.tokens.begin() + block, b.seq.tokens.begin())) return true;
  }
  return false;
}

void Scheduler::requeue(ActiveSeq a) {
  auto it = waiting_.begin();
  while (it != waiting_.end() && it->admit_order != 0 && it->admit_order < a.admit_order) ++it;
  waiting_.insert(it, std::move(a));
}

void Scheduler::preempt(size_t idx) {
  ActiveSeq& v = active_[idx];
  MET_LOG_DEBUG("preempting seq {} ({} tokens cached)", v.seq.id.value(), v.seq.seq_len);
  if (options_.preempt == PreemptMode::kSwap && spill_ != nullptr && v.seq.seq_len > 0) {
    Result<SwappedSeq> r = swap_out_sequence(io_, active_, idx, *spill_, SpillId(next_swap_id_++), image_);
    if (!r.ok()) {
      MET_LOG_WARN("swap-out failed: {}", r.status().message());
      return;
    }
    ++r->a.num_preemptions;
    swapped_.push_back(std::move(*r));
    io_.tel.preempted(PreemptKind::kSwap);
    return;
  }
  ActiveSeq a = take_active(io_, active_, idx);
  // The KV is valid: its full blocks stay findable, so the re-prefill may hit.
  io_.dev.apply(ReleaseSeq{&a.seq, /*cache=*/true, "preempt for recompute"});
  ++a.num_preemptions;
  io_.tel.preempted(PreemptKind::kRecompute);
  requeue(std::move(a));
}

void Scheduler::collect_victim_candidates() {
  candidates_.clear();
  order_.clear();
  for (size_t i = 0; i < active_.size(); ++i) {
    const ActiveSeq& a = active_[i];
    if (a.finished) continue;
    candidates_.push_back(VictimCandidate{a.admit_order, a.output_tokens.size(), a.preempt_immune_until_tokens});
    order_.push_back(i);
  }
}

void Scheduler::make_decode_room() {
  for (;;) {
    int32_t need = 0;
    for (const ActiveSeq& a : active_) {
      if (!a.finished && pending_tokens(a) == 1 &&
          blocks_for_tokens(a.seq.seq_len + 1) > static_cast<int32_t>(a.seq.block_table.size())) {
        ++need;
      }
    }
    if (need <= io_.dev.num_free_blocks()) return;
    if (!give_way()) return;
  }
}

bool Scheduler::give_way() {
  collect_victim_candidates();
  if (candidates_.empty()) return false;
  if (candidates_.size() == 1) {
    // Alone and out of blocks: it needs more KV than the whole pool.
    ActiveSeq& a = active_[order_[0]];
    a.guard_stop = GuardStop::kKvExhausted;
    a.finished = true;
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
  settle_step();
  io_.tel.step_done(step_.plan().num_rows(), io_.dev.num_blocks_in_use());
}

void Scheduler::settle_step() {
  for (const Scheduled& s : step_.scheduled()) {
    ActiveSeq& a = active_[s.active_idx];
    a.seq.seq_len += s.num_rows;
    // A prefill chunk's full blocks are shareable at once (a sibling choice
    // or another request with the same prefix hits them while `a` runs).
    if (s.num_rows > 1) io_.dev.apply(PublishPrefix{&a.seq});
    record_prompt_logprobs(a, s, result_);
    if (!s.output.has_value()) continue;
    const auto i = static_cast<size_t>(*s.output);
    const bool use_logits = step_.plan().outputs[i].kind == OutputKind::kLogits;
    const TokenId token = pick_token(a, result_, i, use_logits, pick_scratch_);
    commit_output(io_, a, token, max_seq_len_);
  }
}

bool Scheduler::needs_quiet() const {
  // A sequence could be resumed or admitted now (without counting prefix
  // hits: those are found at admission, once the lane is drained anyway).
  const bool has_slot = active_.size() < static_cast<size_t>(options_.max_seqs);
  const int32_t free_blocks = io_.dev.num_free_blocks();
  if (has_slot && !swapped_.empty() &&
      free_blocks >= std::min(swapped_.front().num_blocks + 1, io_.dev.num_blocks())) {
    return true;
  }
  if (has_slot && swapped_.empty() && !waiting_.empty()) {
    const ActiveSeq& w = waiting_.front();
    if (free_blocks >= blocks_for_tokens(std::min(pending_tokens(w), options_.max_batch_tokens))) return true;
  }
  const TimePoint now = io_.clock.now();
  for (const ActiveSeq& a : active_) {
    if (a.finished || a.sink.cancelled() || (a.timeout_at.has_value() && now >= *a.timeout_at)) return true;
  }
  return false;
}

void Scheduler::after_lane() {
  if (is_faulted()) fail_all(fmt::format("the server is faulted: {}", fault_reason()));
}

bool Scheduler::tick() {
  if (idle()) return false;
  if (lane_.has_inflight()) {
    if (!needs_quiet()) {
      const LaneStep r = lane_.step(active_);
      after_lane();
      if (r == LaneStep::kRan) return true;
    } else {
      lane_.drain(active_);
      after_lane();
    }
  }
  retire_cancelled_and_timed_out();
  retire_finished();
  resume_swapped();
  admit_waiting();
  make_decode_room();
  bool ran = false;
  if (step_.build(active_, io_.dev, options_.max_batch_tokens)) {
    if (options_.pipeline && step_.is_decode_only(active_.size()) && ahead_allowed(active_)) {
      // Keep the step in flight: the next tick launches the one after it
      // before settling this one.
      const TimePoint t0 = io_.clock.now();
      Result<Ticket> t = io_.dev.launch(step_.plan());
      if (t.ok()) {
        lane_.hold(*t, t0, step_.plan(), active_);
      } else {
        for (const Scheduled& s : step_.scheduled()) {
          fail_sequence(active_[s.active_idx],
                        fmt::format("the forward step was refused: {}", t.status().message()));
        }
      }
    } else {
      run_step();
    }
    ran = true;
  } else if (!active_.empty()) {
    // Every running sequence is mid-prefill and the pool is full.
    give_way();
  }
  retire_finished();
  return ran;
}

}  // namespace met
