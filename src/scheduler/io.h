// SchedIo: the scheduler's ports (DESIGN.md). The scheduler decides; every
// effect on the world goes through these: `dev` (model info and forward
// steps, DevPort), `kv` (KV bookkeeping effects, kv/kv_manager.h's
// KvManager), `req` (a request's sink), `tel` (counters and timings),
// `clock`. Spill images go through kv/spill_io.h's SpillIo, passed beside
// SchedIo as in the reference. ReqPort and TelPort are interfaces so tests
// record what the scheduler said; DevPort and KvManager are concrete over a
// Device, so tests fake the Device (FakeDevice) and keep the real block
// bookkeeping.
// Threading: engine thread only. Tested through tests/scheduler/*.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/ids.h"
#include "scheduler/active_seq.h"
#include "request/response_sink.h"

namespace met {

class DevPort;
class KvManager;

// What the scheduler tells a request's client.
class ReqPort {
 public:
  virtual ~ReqPort() = default;
  virtual void delta(ResponseSink& sink, const DeltaEvent& event) = 0;
  virtual void finish(ResponseSink& sink, FinishEvent event) = 0;
  // `what` names the path for logs ("error frame", "pre-seq error frame").
  virtual void error(ResponseSink& sink, ErrorEvent event, const char* what) = 0;
};

// Forwards to the sink itself (the engine's ReqPort).
class SinkReqPort final : public ReqPort {
 public:
  void delta(ResponseSink& sink, const DeltaEvent& event) override { sink.delta(event); }
  void finish(ResponseSink& sink, FinishEvent event) override { sink.finish(std::move(event)); }
  void error(ResponseSink& sink, ErrorEvent event, const char* what) override;
};

struct RequestTiming {
  double ttft_ms = 0;
  double decode_ms = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_prompt_tokens = 0;
};

enum class PreemptKind : uint8_t { kSwap, kRecompute };

// A request's lifecycle, as the telemetry port hears it.
enum class RequestEventKind : uint8_t {
  kQueued,      // accepted into the waiting queue
  kAdmitted,    // first admission; cached_tokens came from the prefix cache
  kFirstToken,  // its first output token was committed
  kPreempted,   // preempted for recompute (back to waiting, KV dropped)
  kSwapped,     // preempted to a spill image
  kResumed,     // running again after a preemption or a swap
  kFinished,    // its finish frame was sent (finish_reason, guard)
  kFailed,      // its error frame was sent (error)
};
const char* request_event_name(RequestEventKind kind);

// One lifecycle event. The views borrow the sequence's strings for the call.
struct RequestEvent {
  RequestEventKind kind = RequestEventKind::kQueued;
  RequestId id;
  std::string_view tenant;   // "" when the request has none
  std::string_view adapter;  // the LoRA adapter's name; "" for the base model
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  int32_t output_tokens = 0;
  int32_t kv_blocks = 0;        // blocks it holds as the event happens
  std::string_view finish_reason;  // kFinished
  std::string_view guard;          // kFinished: the guard that cut it short, if any
  std::string_view error;          // kFailed
};

// One forward step that was settled.
struct StepRecord {
  int32_t num_rows = 0;
  int32_t prefill_tokens = 0;  // rows of prompts being computed
  int32_t decode_tokens = 0;   // rows that sample output (drafts verified included)
  int32_t num_blocks_in_use = 0;
  int64_t device_busy_ns = 0;  // the device's time on it (0: not measured)
};

class TelPort {
 public:
  virtual ~TelPort() = default;
  virtual void request_finished(const RequestTiming& timing) = 0;
  virtual void request_failed() = 0;
  virtual void preempted(PreemptKind kind) = 0;
  // A request was admitted for the first time: `query_tokens` looked up in
  // the prefix cache, `hit_tokens` of them found (re-admissions after a
  // preemption are not counted).
  virtual void cache_queried(int64_t query_tokens, int64_t hit_tokens) = 0;
  virtual void step_done(const StepRecord& step) = 0;
  virtual void request_event(const RequestEvent& event) = 0;
  // A sequence's KV went to a spill image (swap-out) or came back from one.
  virtual void spilled(int64_t bytes, Duration took) = 0;
  virtual void restored(int64_t bytes, Duration took) = 0;
  // A verify step checked `drafted` draft tokens of one sequence and
  // committed `accepted` of them in place (speculation.h).
  virtual void speculated(int32_t drafted, int32_t accepted) = 0;
  // Draft tokens proposed for a step and not verified: the draft budget
  // judged them not worth a row (spec/draft_budget.h).
  virtual void drafts_withheld(int32_t n) = 0;
};

class NullTelPort final : public TelPort {
 public:
  void request_finished(const RequestTiming&) override {}
  void request_failed() override {}
  void preempted(PreemptKind) override {}
  void cache_queried(int64_t, int64_t) override {}
  void step_done(const StepRecord&) override {}
  void request_event(const RequestEvent&) override {}
  void spilled(int64_t, Duration) override {}
  void restored(int64_t, Duration) override {}
  void speculated(int32_t, int32_t) override {}
  void drafts_withheld(int32_t) override {}
};

struct SchedIo {
  DevPort& dev;
  KvManager& kv;
  ReqPort& req;
  TelPort& tel;
  const Clock& clock;
};

}  // namespace met
