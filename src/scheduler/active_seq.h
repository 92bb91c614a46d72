// The scheduler's sequence records (the reference's names): SeqState
// (kv/kv_seq.h) is a sequence's KV side (tokens, how many are cached, its
// block table and slot); ActiveSeq a running sequence with everything its output needs (sampler,
// detokenizer, guards, timings, sink); SwappedSeq one parked in a spill image.
// A request not yet admitted, and a sequence preempted for recompute (the
// reference's PreemptedSeq), wait as an ActiveSeq with no KV: it keeps its
// sampler and output so far, and is prefilled again from seq.tokens.
// Its fields are grouped by concern: the KV side (seq), the output and its
// text (out), its bounds (limits), sampling and logprobs, thinking, grammar
// and tools, speculation, how it ended (status), its place in the queues,
// timings, sink.
// Invariants: seq.tokens = prompt + out.tokens; seq.seq_len <= tokens.size();
// block_table covers at least seq_len positions; a sink gets exactly one
// terminal frame (lifecycle.h); slot_idx is the sequence's index in `active`.
// Threading: engine thread only. Tested through tests/scheduler/*.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/device.h"
#include "core/clock.h"
#include "core/ids.h"
#include "grammar/grammar_matcher.h"
#include "kv/kv_seq.h"
#include "sampling/sampler.h"
#include "request/engine_request.h"
#include "request/response_sink.h"
#include "request/stream_event.h"
#include "scheduler/thinking.h"
#include "spec/draft_budget.h"
#include "spec/prediction.h"
#include "tokenizer/incremental_detokenizer.h"

namespace met {

// A server-side guard that cut a sequence short (finish_reason.h maps it).
enum class GuardStop : uint8_t {
  kRequestTimeout,  // the request's deadline passed
  kKvExhausted,     // the sequence alone needs more KV than the whole pool
};
const char* guard_stop_name(GuardStop g);

// The output so far and what turns it into text.
struct OutputState {
  int32_t prompt_len = 0;
  std::vector<TokenId> tokens;  // sampled after the prompt
  std::optional<IncrementalDetokenizer> detok;
  int32_t cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache
  DeltaEvent delta;  // the storage each token's delta is built in, reused
};

// What bounds the output: its budget, the ids that stop it, its deadline.
struct OutputLimits {
  int32_t remaining = 0;            // output budget left (max_tokens countdown)
  int32_t min_tokens = 0;
  std::vector<TokenId> eos_tokens;  // the model's EOG ids plus the request's stop ids
  std::optional<TimePoint> timeout_at;
};

// Whether and why the sequence ended (finish_reason.h reads it).
struct SeqStatus {
  bool finished = false;
  std::optional<ErrorEvent> error;  // failed: answered with this error frame
  std::optional<GuardStop> guard_stop;
  bool stop_string_hit = false;
  std::optional<size_t> stop_string_index;  // which of the request's stop strings matched
};

// Its place among the scheduler's queues (victim choice, FCFS requeue).
struct QueueState {
  uint64_t admit_order = 0;  // larger = admitted later; 0 = never admitted
  size_t immune_until_tokens = 0;  // not preempted while out.tokens.size() < this
  int32_t num_preemptions = 0;
};

struct SeqTimings {
  TimePoint request_start{};
  std::optional<TimePoint> decode_start;  // set when the first output token is sampled
  TimePoint last_token_time{};
};

struct LogprobState {
  std::optional<int32_t> per_token;        // alternatives per token; nullopt: no logprobs
  std::optional<TokenLogprob> picked;      // of the token pick_token chose, until accepted
  std::optional<int32_t> prompt;           // alternatives per prompt token; nullopt: none
  int32_t prompt_next = 1;                 // the next prompt token whose logprob is missing
  std::vector<TokenLogprob> prompt_entries;  // computed, not yet sent
};

struct ThinkingTrack {
  std::optional<ThinkingConfig> config;  // nullopt: no think markers
  ThinkingState state;
  ThinkEndCause forced_by = ThinkEndCause::kNone;  // why pick_token forced its token
};

// Grammar-constrained output and tool calls.
struct GrammarTrack {
  std::shared_ptr<const Grammar> grammar;  // kept alive for `matcher`
  std::string field;                       // EngineRequest::grammar_field
  std::optional<GrammarMatcher> matcher;   // set while a grammar constrains the output
  std::optional<TokenId> tool_call_end_token;
  // EngineRequest::triggered_grammar; `matcher` runs it while triggered_active.
  std::optional<EngineRequest::TriggeredGrammar> triggered;
  bool triggered_active = false;
  const TokenTrie* trie = nullptr;  // the scheduler's, for a grammar started later
};

// Speculative decoding (speculation.h): this step's drafts and the counts so far.
struct SpecTrack {
  std::vector<TokenId> drafts;  // proposed for the step being built; cleared at its settle
  bool drafts_from_prediction = false;       // else from prompt lookup, MTP guesses or the draft model
  bool drafts_from_model = false;            // from the draft model (DraftPlanner's acceptance of it)
  std::optional<PredictionMatcher> prediction;  // the request's predicted output, if any
  bool verifying = false;       // settle_verify is committing: it tells `prediction` itself
  int32_t max_draft = kNoDraftCap;  // the request's cap on drafts per step (EngineRequest::max_draft_tokens)
  static constexpr int32_t kNoDraftCap = 1 << 30;
  AcceptanceRate rate;          // its recent verify steps (the draft budget's input)
  int64_t num_drafted = 0;      // drafts verified
  int64_t num_accepted = 0;     // of them, committed in place
  // The model's MTP block's guesses at the tokens after the pending one (from
  // the step that committed it: its own, then its chain), while
  // `a.seq.tokens` holds mtp_for tokens.
  std::array<TokenId, kMaxMtpDrafts> mtp_drafts{};
  int32_t num_mtp_drafts = 0;
  size_t mtp_for = 0;  // 0: none
  // The drafts the budget would verify at the next step, were the guesses
  // there (DraftPlanner::mtp_guesses_pay): a step that verifies none asks
  // the block for that many guesses (mtp_chain_for). 0: not decided.
  int32_t guesses_wanted = 0;
};

// Embeddings (EngineRequest::embed): the pooling and what is pooled so far.
struct EmbedTrack {
  std::optional<Pooling> pooling;  // nullopt: a generation request
  // Mean: the sum of the hidden states of the rows run so far; CLS and
  // last: the row's state once its step ran.
  std::vector<float> pooled;
  // False on a model without causal attention: a block's KV depends on the
  // tokens after it, so the sequence's blocks are never cached or reused.
  bool kv_shareable = true;
};

struct ActiveSeq {
  SeqState seq;            // the KV side
  OutputState out;
  OutputLimits limits;
  Sampler sampler{SamplingParams{}};
  LogprobState logprobs;
  ThinkingTrack think;
  GrammarTrack gram;
  SpecTrack spec;
  EmbedTrack embed;
  SeqStatus status;
  QueueState queue;
  SeqTimings timing;
  std::string tenant;  // EngineRequest::tenant, for telemetry
  ResponseSink sink;
};

// Whether prompt logprobs are asked for and some are still to be computed.
inline bool wants_prompt_logprobs(const ActiveSeq& a) {
  return a.logprobs.prompt.has_value() && a.logprobs.prompt_next < a.out.prompt_len;
}

inline bool is_embedding(const ActiveSeq& a) { return a.embed.pooling.has_value(); }

// Whether a prefix-cache hit may stand in for the start of `a`'s prompt:
// not while prompt logprobs or a pooling over every row (mean) or the
// first one (CLS) need those rows run, nor where KV is not shareable.
inline bool may_reuse_prefix(const ActiveSeq& a) {
  const bool pools_early_rows =
      a.embed.pooling.has_value() && (*a.embed.pooling == Pooling::kMean || *a.embed.pooling == Pooling::kCls);
  return !wants_prompt_logprobs(a) && !pools_early_rows && a.embed.kv_shareable;
}

// Tokens of `a` whose KV is not computed yet (1 for a decoding sequence: its
// last sampled token; more while a prompt is being prefilled).
inline int32_t pending_tokens(const ActiveSeq& a) {
  return static_cast<int32_t>(a.seq.tokens.size()) - a.seq.seq_len;
}

struct SwappedSeq {
  ActiveSeq a;            // its block table is empty while swapped out
  SpillId swap_id;
  int32_t num_blocks = 0; // blocks in the image (its live blocks)
  int32_t num_released_blocks = 0;  // leading table entries that come back released
  int32_t seq_len = 0;    // tokens whose KV the image holds
};

}  // namespace met
