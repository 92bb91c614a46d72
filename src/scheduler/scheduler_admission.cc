// Scheduler admission: turning an EngineRequest into an ActiveSeq
// (make_seq, enqueue), resuming swapped sequences, and admitting waiting
// ones FCFS within max_seqs and the KV pool, with prefix-cache matching and
// in-batch prefix sharing. The rest of Scheduler is in scheduler.cc.
// Threading: engine thread only. Tested by tests/scheduler/scheduler_test.cc.
#include "scheduler/scheduler.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/log.h"
#include "scheduler/lifecycle.h"
#include "request/request_limits.h"

namespace met {

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
  MET_DCHECK(validate_request(request, limits()).ok(), "request {}: enqueued without Engine::submit's checks",
             sink.id().value());
  ActiveSeq a = make_seq(std::move(request), std::move(sink), submitted);
  if (a.remaining == 0) {  // nothing to generate: answered without a step
    finish_sequence(io_, a, max_seq_len_);
    return;
  }
  waiting_.push_back(std::move(a));
}

void Scheduler::resume_swapped() {
  while (!swapped_.empty() && active_.size() < static_cast<size_t>(options_.max_seqs)) {
    const int32_t need = std::min(swapped_.front().num_blocks + 1, io_.kv.num_blocks());
    if (io_.kv.num_free_blocks() < need) return;
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
    const PrefixMatch m = wants_prompt_logprobs(a) ? PrefixMatch{} : io_.kv.match_prefix(a.seq);
    const int32_t chunk = std::min(pending_tokens(a), options_.max_batch_tokens);
    const int32_t need = blocks_for_tokens(a.seq.seq_len + chunk) - static_cast<int32_t>(a.seq.block_table.size());
    if (need > io_.kv.num_free_blocks()) {
      io_.kv.apply(ReleaseSeq{&a.seq, /*cache=*/false, "admit_waiting: no room"});
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

}  // namespace met
