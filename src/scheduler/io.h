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
  virtual void error(ResponseSink& sink, std::string_view message, const char* what) = 0;
};

// Forwards to the sink itself (the engine's ReqPort).
class SinkReqPort final : public ReqPort {
 public:
  void delta(ResponseSink& sink, const DeltaEvent& event) override { sink.delta(event); }
  void finish(ResponseSink& sink, FinishEvent event) override { sink.finish(std::move(event)); }
  void error(ResponseSink& sink, std::string_view message, const char* what) override;
};

struct RequestTiming {
  double ttft_ms = 0;
  double decode_ms = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_prompt_tokens = 0;
};

enum class PreemptKind : uint8_t { kSwap, kRecompute };

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
  virtual void step_done(int32_t num_rows, int32_t num_blocks_in_use) = 0;
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
  void step_done(int32_t, int32_t) override {}
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
