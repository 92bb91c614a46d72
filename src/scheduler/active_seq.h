// The scheduler's sequence records (the reference's names): SeqState
// (kv/kv_seq.h) is a sequence's KV side (tokens, how many are cached, its
// block table and slot); ActiveSeq a running sequence with everything its output needs (sampler,
// detokenizer, guards, timings, sink); SwappedSeq one parked in a spill image.
// A request not yet admitted, and a sequence preempted for recompute (the
// reference's PreemptedSeq), wait as an ActiveSeq with no KV: it keeps its
// sampler and output so far, and is prefilled again from seq.tokens.
// Invariants: seq.tokens = prompt + output_tokens; seq.seq_len <= tokens.size();
// block_table covers at least seq_len positions; a sink gets exactly one
// terminal frame (lifecycle.h); slot_idx is the sequence's index in `active`.
// Threading: engine thread only. Tested through tests/scheduler/*.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "grammar/grammar_matcher.h"
#include "kv/kv_seq.h"
#include "sampling/sampler.h"
#include "request/engine_request.h"
#include "request/response_sink.h"
#include "scheduler/thinking.h"
#include "tokenizer/incremental_detokenizer.h"

namespace met {

// A server-side guard that cut a sequence short (finish_reason.h maps it).
enum class GuardStop : uint8_t {
  kRequestTimeout,  // the request's deadline passed
  kKvExhausted,     // the sequence alone needs more KV than the whole pool
};
const char* guard_stop_name(GuardStop g);

struct ActiveSeq {
  SeqState seq;
  int32_t prompt_len = 0;
  std::vector<TokenId> output_tokens;
  int32_t remaining = 0;             // output budget left (max_tokens countdown)
  int32_t min_tokens = 0;
  std::vector<TokenId> eos_tokens;   // the model's EOG ids plus the request's stop ids
  Sampler sampler{SamplingParams{}};
  std::optional<IncrementalDetokenizer> detok;
  bool finished = false;
  std::optional<std::string> error;
  std::optional<GuardStop> guard_stop;
  bool stop_string_hit = false;
  ResponseSink sink;
  uint64_t admit_order = 0;          // larger = admitted later (victim choice)
  size_t preempt_immune_until_tokens = 0;
  int32_t cached_prompt_tokens = 0;
  int32_t num_preemptions = 0;
  TimePoint request_start{};
  std::optional<TimePoint> decode_start;  // set when the first output token is sampled
  TimePoint last_token_time{};
  std::optional<TimePoint> timeout_at;
  std::optional<int32_t> logprobs;              // alternatives per token; nullopt: no logprobs
  std::optional<TokenLogprob> picked_logprob;   // of the token pick_token chose, until accepted
  std::optional<int32_t> prompt_logprobs;       // alternatives per prompt token; nullopt: none
  int32_t prompt_logprobs_next = 1;             // the next prompt token whose logprob is missing
  std::vector<TokenLogprob> prompt_logprob_entries;  // computed, not yet sent
  std::optional<ThinkingConfig> thinking;       // nullopt: no think markers
  ThinkingState think;
  ThinkEndCause forced_by = ThinkEndCause::kNone;  // why pick_token forced its token
  std::shared_ptr<const Grammar> grammar;       // kept alive for `matcher`
  std::optional<GrammarMatcher> matcher;        // set when the request has a grammar
  std::optional<TokenId> tool_call_end_token;
  // EngineRequest::triggered_grammar; `matcher` runs it while triggered_active.
  std::optional<EngineRequest::TriggeredGrammar> triggered;
  bool triggered_active = false;
  const TokenTrie* trie = nullptr;  // the scheduler's, for a grammar started later
};

// Whether prompt logprobs are asked for and some are still to be computed.
inline bool wants_prompt_logprobs(const ActiveSeq& a) {
  return a.prompt_logprobs.has_value() && a.prompt_logprobs_next < a.prompt_len;
}

// Tokens of `a` whose KV is not computed yet (1 for a decoding sequence: its
// last sampled token; more while a prompt is being prefilled).
inline int32_t pending_tokens(const ActiveSeq& a) {
  return static_cast<int32_t>(a.seq.tokens.size()) - a.seq.seq_len;
}

struct SwappedSeq {
  ActiveSeq a;            // its block table is empty while swapped out
  SpillId swap_id;
  int32_t num_blocks = 0; // blocks in the image
  int32_t seq_len = 0;    // tokens whose KV the image holds
};

}  // namespace met
