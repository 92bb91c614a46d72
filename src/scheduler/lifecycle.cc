// The sequence lifecycle. Tested by tests/scheduler/lifecycle_test.cc.
#include "scheduler/lifecycle.h"

#include <fmt/format.h>

#include "backend/lora_adapter.h"
#include "core/log.h"
#include "kv/kv_block.h"
#include "scheduler/finish_reason.h"
#include "scheduler/preempt.h"

namespace met {
namespace {

// The request's line at its finish (the reference's RequestAccept::log_done):
// output tokens, finish reason, decode tok/s, TTFT, and its drafts.
void log_finished(const ActiveSeq& a, std::string_view reason, double ttft_ms, double decode_ms) {
  const auto n = static_cast<double>(a.out.tokens.size());
  const double tps = decode_ms > 0 ? n * 1000.0 / decode_ms : 0.0;
  std::string drafts;
  if (a.spec.num_drafted > 0) {
    drafts = fmt::format(", drafts {}/{} accepted ({:.0f}%)", a.spec.num_accepted, a.spec.num_drafted,
                         100.0 * static_cast<double>(a.spec.num_accepted) / static_cast<double>(a.spec.num_drafted));
  }
  MET_LOG_INFO("request {} done: {} tokens, finish {}, {:.1f} tok/s, ttft {:.1f} ms{}", a.sink.id().value(),
               a.out.tokens.size(), reason, tps, ttft_ms, drafts);
}

// The pooled vector an embedding answers with (a mean divides its sum).
std::vector<float> pooled_embedding(ActiveSeq& a) {
  std::vector<float> v = std::move(a.embed.pooled);
  if (*a.embed.pooling == Pooling::kMean && a.out.prompt_len > 0) {
    for (float& x : v) x /= static_cast<float>(a.out.prompt_len);
  }
  return v;
}

}  // namespace

RequestEvent request_event_of(const ActiveSeq& a, RequestEventKind kind) {
  RequestEvent e;
  e.kind = kind;
  e.id = a.sink.id();
  e.tenant = a.tenant;
  if (a.seq.adapter != nullptr) e.adapter = a.seq.adapter->name;
  e.prompt_tokens = a.out.prompt_len;
  e.cached_tokens = a.out.cached_prompt_tokens;
  e.output_tokens = static_cast<int32_t>(a.out.tokens.size());
  e.kv_blocks = static_cast<int32_t>(a.seq.block_table.size()) - a.seq.num_released_blocks;
  return e;
}

void finish_sequence(const SchedIo& io, ActiveSeq& a, size_t max_seq_len) {
  // A failed sequence is not a finished one: an error frame, and no caching
  // (its blocks may hold a truncated or failed generation).
  if (a.status.error.has_value()) {
    ErrorEvent e = std::move(*a.status.error);
    a.status.error.reset();
    send_error(io, a, e.message, std::move(e.param));
    return;
  }
  if (is_embedding(a) && a.seq.seq_len < a.out.prompt_len) {  // cut short by a guard: no vector to give
    const char* why = a.status.guard_stop.has_value() ? guard_stop_name(*a.status.guard_stop) : "stopped";
    send_error(io, a, fmt::format("the input was not embedded: {} after {} of its {} tokens", why, a.seq.seq_len,
                                  a.out.prompt_len));
    return;
  }
  FinishInputs in;
  in.guard_stop = a.status.guard_stop;
  if (!a.out.tokens.empty()) in.last_tok = a.out.tokens.back();
  in.eos_tokens = a.limits.eos_tokens;
  in.tool_call_end_token = a.gram.tool_call_end_token;
  in.stop_string_hit = a.status.stop_string_hit;
  in.remaining = static_cast<size_t>(std::max(a.limits.remaining, 0));
  in.seq_len = a.seq.tokens.size();
  in.max_seq_len = max_seq_len;
  // An embedding ends when its prompt has run: nothing was cut short.
  const std::string_view reason = is_embedding(a) ? kFinishStop : derive_finish_reason(in);

  // Text held back (an incomplete character, a possible stop-string prefix)
  // is final now.
  if (a.out.detok.has_value() && !a.out.detok->stopped()) {
    DetokenizerStep tail = a.out.detok->finish();
    if (!tail.text.empty()) io.req.delta(a.sink, DeltaEvent{{}, std::move(tail.text)});
  }
  const TimePoint now = io.clock.now();
  const TimePoint first = a.timing.decode_start.value_or(now);
  FinishEvent fe;
  fe.finish_reason = std::string(reason);
  if (a.status.guard_stop.has_value()) fe.guard_stop = guard_stop_name(*a.status.guard_stop);
  if (reason == kFinishStop) fe.stop_string_index = a.status.stop_string_index;
  fe.usage.prompt_tokens = a.out.prompt_len;
  fe.usage.completion_tokens = static_cast<int32_t>(a.out.tokens.size());
  fe.usage.cached_prompt_tokens = a.out.cached_prompt_tokens;
  fe.usage.reasoning_tokens = a.think.state.reasoning_tokens;
  if (a.spec.prediction.has_value()) {
    fe.usage.accepted_prediction_tokens = static_cast<int32_t>(a.spec.prediction->usage().accepted_prediction_tokens);
    fe.usage.rejected_prediction_tokens = static_cast<int32_t>(a.spec.prediction->usage().rejected_prediction_tokens);
  }
  fe.time_to_first_token_ms = a.timing.decode_start ? ms_between(a.timing.request_start, first) : 0.0;
  fe.decode_time_ms = ms_between(first, now);
  if (is_embedding(a)) fe.embedding = pooled_embedding(a);
  RequestTiming timing{fe.time_to_first_token_ms, fe.decode_time_ms, a.out.prompt_len,
                       static_cast<int64_t>(a.out.tokens.size()), a.out.cached_prompt_tokens};
  log_finished(a, reason, timing.ttft_ms, timing.decode_ms);
  RequestEvent done = request_event_of(a, RequestEventKind::kFinished);
  done.finish_reason = reason;
  if (a.status.guard_stop.has_value()) done.guard = guard_stop_name(*a.status.guard_stop);
  io.req.finish(a.sink, std::move(fe));
  io.tel.request_finished(timing);
  io.tel.request_event(done);
  // Cache prompt + output while the block ids are valid, then free them.
  io.kv.apply(ReleaseSeq{&a.seq, /*cache=*/a.embed.kv_shareable, "finish_sequence"});
}

void send_error(const SchedIo& io, ActiveSeq& a, std::string_view msg, std::optional<std::string> param) {
  io.req.error(a.sink, ErrorEvent{std::string(msg), std::move(param)}, "error frame");
  io.tel.request_failed();
  RequestEvent failed = request_event_of(a, RequestEventKind::kFailed);
  failed.error = msg;
  io.tel.request_event(failed);
  io.kv.apply(ReleaseSeq{&a.seq, /*cache=*/false, "send_error"});
}

void send_error_to_sink(const SchedIo& io, ResponseSink& sink, std::string_view msg) {
  io.req.error(sink, ErrorEvent{std::string(msg)}, "pre-seq error frame");
  io.tel.request_failed();
  RequestEvent failed;
  failed.kind = RequestEventKind::kFailed;
  failed.id = sink.id();
  failed.error = msg;
  io.tel.request_event(failed);
}

void fail_sequence(ActiveSeq& a, std::string msg, std::optional<std::string> param) {
  a.status.error = ErrorEvent{std::move(msg), std::move(param)};
  a.status.finished = true;
}

ActiveSeq take_active(const SchedIo& io, std::vector<ActiveSeq>& active, size_t idx) {
  ActiveSeq a = std::move(active[idx]);
  if (idx + 1 != active.size()) active[idx] = std::move(active.back());
  active.pop_back();
  // The last row moved into `idx`: compact its slot to match.
  if (idx < active.size() && active[idx].seq.slot_idx != static_cast<int32_t>(idx)) {
    io.kv.apply(CompactSlot{&active[idx].seq, static_cast<int32_t>(idx)});
    // Disown the slot the moved row now owns, so releasing `a` cannot free it.
    io.kv.apply(DetachSlot{&a.seq});
  }
  return a;
}

void release_behind_window(const SchedIo& io, SeqState& seq, int32_t kv_window) {
  const int32_t behind = blocks_behind_window(seq.seq_len, kv_window);
  if (behind > seq.num_released_blocks) io.kv.apply(ReleaseBehindWindow{&seq, behind});
}

Status spill_out_sequence(const SchedIo& io, ActiveSeq& a, SpillIo& spill, SpillId swap_id, SpillImage& scratch) {
  const TimePoint t0 = io.clock.now();
  const int32_t num_blocks = blocks_for_tokens(a.seq.seq_len);
  MET_RETURN_IF_ERROR(io.kv.save_blocks(a.seq, num_blocks, scratch));
  MET_RETURN_IF_ERROR(spill.save(swap_id, scratch));
  io.tel.spilled(static_cast<int64_t>(scratch.bytes.size()), io.clock.now() - t0);
  return ok_status();
}

Result<SwappedSeq> swap_out_sequence(const SchedIo& io, std::vector<ActiveSeq>& active, size_t victim_idx,
                                     SpillIo& spill, SpillId swap_id, SpillImage& scratch) {
  // Not an early return after this: `a` is out of `active`, so every error
  // path must answer the client and free its blocks (send_error does both).
  ActiveSeq a = take_active(io, active, victim_idx);
  Status s = spill_out_sequence(io, a, spill, swap_id, scratch);
  if (!s.ok()) {
    send_error(io, a, fmt::format("swap-out failed: {}", s.message()));
    return s;
  }
  SwappedSeq out;
  out.swap_id = swap_id;
  // The image holds the live blocks: released ones are not saved.
  out.num_blocks = blocks_for_tokens(a.seq.seq_len) - a.seq.num_released_blocks;
  out.num_released_blocks = a.seq.num_released_blocks;
  out.seq_len = a.seq.seq_len;
  // The KV is valid: its full blocks stay findable by the prefix cache.
  io.kv.apply(ReleaseSeq{&a.seq, /*cache=*/true, "swap_out_sequence"});
  out.a = std::move(a);
  return out;
}

namespace {

// Every fallible step of a swap-in. Blocks allocated before a later step
// fails are freed here; once the image was opened its removal is attempted
// on every exit.
Status restore_swapped_image(const SchedIo& io, SwappedSeq& s, SpillIo& spill, SpillImage& scratch) {
  Status opened = spill.open(s.swap_id, io.kv.kv_shape(), scratch);
  if (opened.ok() && scratch.num_blocks != s.num_blocks) {
    opened = data_loss("spill image {} holds {} blocks, the sequence had {}", s.swap_id.value(),
                       scratch.num_blocks, s.num_blocks);
  }
  Status restored = opened.ok() ? io.kv.restore_blocks(s.a.seq, scratch, s.num_released_blocks, s.seq_len) : opened;
  if (!restored.ok()) {
    Status removed = spill.remove(s.swap_id);
    if (!removed.ok()) MET_LOG_WARN("restore_swapped_image: remove after a failed restore: {}", removed.message());
    return restored;
  }
  Status removed = spill.remove(s.swap_id);
  if (!removed.ok()) {
    io.kv.apply(ReleaseSeq{&s.a.seq, /*cache=*/false, "restore_swapped_image"});
    return removed;
  }
  return ok_status();
}

}  // namespace

Result<ActiveSeq> resume_swapped_seq(const SchedIo& io, SwappedSeq s, SpillIo& spill, SpillImage& scratch) {
  const size_t immune_until = s.a.out.tokens.size() + PREEMPT_IMMUNITY_TOKENS;
  const TimePoint t0 = io.clock.now();
  Status st = restore_swapped_image(io, s, spill, scratch);
  if (st.ok()) io.tel.restored(static_cast<int64_t>(scratch.bytes.size()), io.clock.now() - t0);
  if (!st.ok()) {
    // The caller has already taken this request off `swapped`: answer here.
    send_error_to_sink(io, s.a.sink, fmt::format("swap-in failed: {}", st.message()));
    return st;
  }
  ActiveSeq a = std::move(s.a);
  // Swap-out gave back its adapter slot and a resume runs no prefill to
  // take one: it takes it here (the plan found it one).
  const Result<bool> adapter = io.kv.acquire_adapter_slot(a.seq);
  if (!adapter.ok() || !*adapter) {
    const Status err = adapter.ok() ? internal_error("no adapter slot is free") : adapter.status();
    send_error(io, a, fmt::format("swap-in failed: {}", err.message()));
    return err;
  }
  a.seq.seq_len = s.seq_len;
  a.seq.owns_slot = true;
  a.status.finished = false;
  a.status.error.reset();
  a.status.guard_stop.reset();
  a.timing.last_token_time = io.clock.now();
  a.queue.immune_until_tokens = immune_until;
  return a;
}

}  // namespace met
