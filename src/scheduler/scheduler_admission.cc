// Scheduler admission: turning an EngineRequest into an ActiveSeq
// (make_seq, enqueue), the view of the queues plan_tick decides over
// (tick_plan.h), and applying its plan: preemptions, resumes, admissions
// with their prefix hits. The rest of Scheduler is in scheduler.cc.
// Threading: engine thread only. Tested by tests/scheduler/scheduler_test.cc.
#include "scheduler/scheduler.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/log.h"
#include "kv/block_key.h"
#include "kv/kv_block.h"
#include "scheduler/lifecycle.h"
#include "request/request_limits.h"

namespace met {

namespace {

// Tokens reserved at most up front; a longer output grows its vectors
// geometrically past it.
constexpr size_t kMaxReservedTokens = 16384;

}  // namespace

// Reserves the sequence's token and block vectors for its whole output (within
// the served context), so decoding does not grow them token by token.
void Scheduler::reserve_for_output(ActiveSeq& a, int32_t max_tokens) const {
  const size_t prompt = a.seq.tokens.size();
  size_t total = prompt + static_cast<size_t>(std::max(max_tokens, 0));
  if (max_seq_len_ > 0) total = std::min(total, max_seq_len_);
  total = std::min(std::max(total, prompt), prompt + kMaxReservedTokens);
  a.seq.tokens.reserve(total);
  a.out.tokens.reserve(total - prompt);
  a.seq.block_table.reserve(static_cast<size_t>(blocks_for_tokens(static_cast<int64_t>(total))));
}

ActiveSeq Scheduler::make_seq(EngineRequest&& r, ResponseSink&& sink, TimePoint submitted) {
  ActiveSeq a;
  a.seq.id = SeqId(next_seq_id_++);
  a.out.prompt_len = static_cast<int32_t>(r.prompt.size());
  a.seq.tokens = std::move(r.prompt);
  reserve_for_output(a, r.max_tokens);
  a.seq.salt = CacheSalt{tenant_salt(r.cache_salt), r.adapter_id};
  a.seq.adapter = std::move(r.adapter);
  a.tenant = std::move(r.tenant);
  a.limits.remaining = r.max_tokens;
  a.limits.min_tokens = r.min_tokens;
  if (!r.ignore_eos) a.limits.eos_tokens = model_eos_;
  a.limits.eos_tokens.insert(a.limits.eos_tokens.end(), r.stop_token_ids.begin(), r.stop_token_ids.end());
  a.sampler = Sampler(r.sampling);
  a.logprobs.per_token = r.logprobs;
  a.logprobs.prompt = r.prompt_logprobs;
  a.think.config = r.thinking;
  if (a.think.config.has_value()) a.think.state = initial_thinking_state(*a.think.config);
  a.gram.tool_call_end_token = r.tool_call_end_token;
  a.gram.field = std::move(r.grammar_field);
  if (r.grammar != nullptr || r.triggered_grammar.has_value()) {
    if (trie_ == nullptr) trie_ = std::make_unique<TokenTrie>(TokenTrie::build(tokenizer_));
    a.gram.trie = trie_.get();
  }
  if (r.grammar != nullptr) {
    a.gram.grammar = std::move(r.grammar);
    a.gram.matcher.emplace(*a.gram.grammar, *trie_);
  }
  a.gram.triggered = std::move(r.triggered_grammar);
  if (!r.prediction.empty()) a.spec.prediction.emplace(std::move(r.prediction));
  if (r.max_draft_tokens.has_value()) a.spec.max_draft = *r.max_draft_tokens;
  a.embed.pooling = r.embed;
  a.embed.kv_shareable = io_.dev.info().causal;
  if (is_embedding(a)) a.spec.max_draft = 0;  // nothing is decoded
  DetokenizerOptions dopt;
  dopt.skip_special = !r.render_special_tokens;
  dopt.stop_strings = std::move(r.stop_strings);
  // A prompt of control tokens only (BOS) has no text yet: the output begins
  // the text, so its first piece loses SentencePiece's leading space.
  const Vocab& vocab = tokenizer_.vocab();
  dopt.at_sequence_start = std::all_of(a.seq.tokens.begin(), a.seq.tokens.end(), [&](TokenId t) {
    return vocab.contains(t) && vocab.token(t).kind == TokenKind::kControl;
  });
  a.out.detok.emplace(tokenizer_, std::move(dopt));
  a.sink = std::move(sink);
  a.timing.request_start = submitted;
  a.timing.last_token_time = submitted;
  if (r.timeout.has_value()) a.limits.timeout_at = submitted + *r.timeout;
  return a;
}

void Scheduler::enqueue(EngineRequest request, ResponseSink sink, TimePoint submitted) {
  MET_DCHECK(validate_request(request, limits()).ok(), "request {}: enqueued without Engine::submit's checks",
             sink.id().value());
  ActiveSeq a = make_seq(std::move(request), std::move(sink), submitted);
  io_.tel.request_event(request_event_of(a, RequestEventKind::kQueued));
  // A grammar too ambiguous to follow even at its start fails before any step.
  const bool grammar_failed = a.gram.matcher.has_value() && a.gram.matcher->failure().has_value();
  if (grammar_failed) fail_sequence(a, *a.gram.matcher->failure(), a.gram.field);
  if (grammar_failed || (a.limits.remaining == 0 && !is_embedding(a))) {  // answered without a step
    finish_sequence(io_, a, max_seq_len_);
    return;
  }
  waiting_.push_back(std::move(a));
}

namespace {

// The key of the first block of `seq`'s tokens, when it has more than one
// block's worth (a shorter prompt shares nothing worth waiting for).
std::optional<BlockKey> first_block_key(const SeqState& seq) {
  if (seq.tokens.size() <= static_cast<size_t>(kKvBlockTokens)) return std::nullopt;
  return block_key(std::nullopt, std::span<const TokenId>(seq.tokens).first(kKvBlockTokens), seq.salt);
}

bool needs_decode_block(const ActiveSeq& a) {
  return !a.status.finished && pending_tokens(a) == 1 &&
         blocks_for_tokens(a.seq.seq_len + 1) > static_cast<int32_t>(a.seq.block_table.size());
}

}  // namespace

void Scheduler::view_queues() {
  running_views_.clear();
  int32_t decode_need = 0;
  for (const ActiveSeq& a : active_) {
    RunningView r;
    r.id = a.seq.id;
    r.finished = a.status.finished;
    r.needs_block = needs_decode_block(a);
    r.admit_order = a.queue.admit_order;
    r.num_output_tokens = a.out.tokens.size();
    r.immune_until_tokens = a.queue.immune_until_tokens;
    if (!a.status.finished && a.seq.seq_len < kKvBlockTokens && pending_tokens(a) > 1) {
      r.computing_first_block = first_block_key(a.seq);
    }
    decode_need += r.needs_block ? 1 : 0;
    running_views_.push_back(r);
  }
  // Sole blocks matter only when a victim must be chosen.
  if (decode_need > io_.kv.num_free_blocks()) {
    for (size_t i = 0; i < active_.size(); ++i) {
      running_views_[i].num_sole_blocks = io_.kv.num_sole_blocks(active_[i].seq);
    }
  }
  // Resumes and admissions stop at the first sequence whose adapter could
  // not get a slot (every slot busy with other adapters): it waits there,
  // FCFS, until one frees; a swapped one holds back admissions too.
  io_.kv.adapter_slots().begin_plan();
  bool adapters_blocked = false;
  swapped_views_.clear();
  for (const SwappedSeq& s : swapped_) {
    if (!io_.kv.adapter_slots().plan_take(s.a.seq.adapter.get())) {
      adapters_blocked = true;
      break;
    }
    swapped_views_.push_back(SwappedView{s.num_blocks});
  }
  // Only the requests that could be admitted this tick are looked up.
  waiting_views_.clear();
  idle_hits_.clear();
  hit_blocks_.clear();
  hits_begin_.clear();
  const auto slots = static_cast<ptrdiff_t>(options_.max_seqs) - static_cast<ptrdiff_t>(active_.size()) -
                     static_cast<ptrdiff_t>(swapped_.size());
  const size_t num_candidates =
      slots > 0 && !adapters_blocked ? std::min(waiting_.size(), static_cast<size_t>(slots)) : 0;
  for (size_t i = 0; i < num_candidates; ++i) {
    const ActiveSeq& a = waiting_[i];
    if (!io_.kv.adapter_slots().plan_take(a.seq.adapter.get())) break;
    WaitingView w;
    w.num_tokens = static_cast<int32_t>(a.seq.tokens.size());
    w.first_block = first_block_key(a.seq);
    // Prompt logprobs and some poolings need every prompt position evaluated: no reuse.
    w.may_share_first_block = may_reuse_prefix(a);
    hits_begin_.push_back(hit_blocks_.size());
    if (w.may_share_first_block) w.hit_blocks = io_.kv.find_prefix(a.seq, hit_blocks_).num_blocks;
    w.idle_hits_begin = idle_hits_.size();
    for (size_t k = hits_begin_.back(); k < hit_blocks_.size(); ++k) {
      if (io_.kv.is_idle(hit_blocks_[k])) idle_hits_.push_back(hit_blocks_[k]);
    }
    w.num_idle_hits = idle_hits_.size() - w.idle_hits_begin;
    waiting_views_.push_back(w);
  }
  view_.max_seqs = options_.max_seqs;
  view_.max_batch_tokens = options_.max_batch_tokens;
  view_.num_blocks = io_.kv.num_blocks();
  view_.num_free_blocks = io_.kv.num_free_blocks();
  view_.num_unkeyed_free_blocks = io_.kv.num_unkeyed_free_blocks();
  view_.kv_window = kv_window_;
  view_.running = running_views_;
  view_.swapped = swapped_views_;
  view_.waiting = waiting_views_;
  view_.hit_block_ids = idle_hits_;
}

void Scheduler::apply_plan() {
  for (SeqId id : plan_.victims) {
    const auto it = std::find_if(active_.begin(), active_.end(), [&](const ActiveSeq& a) { return a.seq.id == id; });
    MET_CHECK(it != active_.end(), "seq {}: a planned victim is not running", id.value());
    preempt(static_cast<size_t>(it - active_.begin()));
  }
  if (plan_.cut_short.has_value()) {
    // Alone and out of blocks: it needs more KV than the whole pool.
    for (ActiveSeq& a : active_) {
      if (a.seq.id != *plan_.cut_short) continue;
      a.status.guard_stop = GuardStop::kKvExhausted;
      a.status.finished = true;
    }
  }
  for (int32_t i = 0; i < plan_.num_resumes; ++i) resume_front();
  for (int32_t i = 0; i < plan_.num_admissions; ++i) admit_front(static_cast<size_t>(i));
}

void Scheduler::resume_front() {
  SwappedSeq s = std::move(swapped_.front());
  swapped_.pop_front();
  Result<ActiveSeq> r = resume_swapped_seq(io_, std::move(s), *spill_, image_);
  if (!r.ok()) {
    MET_LOG_WARN("resume failed: {}", r.status().message());
    return;
  }
  r->seq.slot_idx = static_cast<int32_t>(active_.size());
  io_.tel.request_event(request_event_of(*r, RequestEventKind::kResumed));
  active_.push_back(std::move(*r));
}

// REQUIRES: waiting_views_[waiting_idx] describes waiting_.front() (the
// admissions before it were popped).
void Scheduler::admit_front(size_t waiting_idx) {
  ActiveSeq& a = waiting_.front();
  const WaitingView& w = waiting_views_[waiting_idx];
  // The plan found it a slot; the device may still refuse the adapter.
  const Result<bool> adapter = io_.kv.acquire_adapter_slot(a.seq);
  if (!adapter.ok() || !*adapter) {
    send_error(io_, a, adapter.ok() ? "no adapter slot is free" : adapter.status().message());
    waiting_.pop_front();
    return;
  }
  PrefixMatch m;
  if (w.may_share_first_block) {
    const auto hits = std::span<const BlockId>(hit_blocks_).subspan(hits_begin_[waiting_idx],
                                                                    static_cast<size_t>(w.hit_blocks));
    m = io_.kv.adopt_prefix(a.seq, hits);
    release_behind_window(io_, a.seq, kv_window_);  // a long hit's early blocks
  }
  if (a.queue.num_preemptions == 0) {
    a.out.cached_prompt_tokens = std::min(m.num_tokens, a.out.prompt_len);
    io_.tel.cache_queried(static_cast<int64_t>(a.seq.tokens.size()), m.num_tokens);
  } else {
    a.queue.immune_until_tokens = a.out.tokens.size() + PREEMPT_IMMUNITY_TOKENS;
  }
  if (a.queue.admit_order == 0) a.queue.admit_order = next_admit_order_++;
  // Running and swapped sequences are at most max_seqs, and only running ones
  // hold a state slot, of which the device has at least max_seqs (create()).
  MET_CHECK(io_.kv.acquire_state_slot(a.seq), "seq {}: no free state slot with {} sequences running",
            a.seq.id.value(), active_.size());
  a.seq.slot_idx = static_cast<int32_t>(active_.size());
  a.seq.owns_slot = true;
  io_.tel.request_event(
      request_event_of(a, a.queue.num_preemptions == 0 ? RequestEventKind::kAdmitted : RequestEventKind::kResumed));
  active_.push_back(std::move(a));
  waiting_.pop_front();
}

void Scheduler::requeue(ActiveSeq a) {
  auto it = waiting_.begin();
  while (it != waiting_.end() && it->queue.admit_order != 0 && it->queue.admit_order < a.queue.admit_order) ++it;
  waiting_.insert(it, std::move(a));
}

}  // namespace met
