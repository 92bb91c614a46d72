// RecordingReq: a ReqPort that records, per request, every delta and the
// terminal frames, then forwards to the sink (whose checks catch a second
// terminal frame). CountingTel counts what the scheduler reported.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/io.h"

namespace met::testing {

struct RecordedRequest {
  std::vector<TokenId> tokens;
  std::string text;
  std::vector<TokenLogprob> logprobs;
  std::vector<TokenLogprob> prompt_logprobs;
  std::vector<FinishEvent> finishes;
  std::vector<std::string> errors;
  std::vector<std::optional<std::string>> error_params;  // ErrorEvent::param of each
  int num_terminal() const { return static_cast<int>(finishes.size() + errors.size()); }
};

class RecordingReq final : public ReqPort {
 public:
  void delta(ResponseSink& sink, const DeltaEvent& event) override {
    RecordedRequest& r = requests_[sink.id().value()];
    r.tokens.insert(r.tokens.end(), event.tokens.begin(), event.tokens.end());
    r.text += event.text;
    r.logprobs.insert(r.logprobs.end(), event.logprobs.begin(), event.logprobs.end());
    r.prompt_logprobs.insert(r.prompt_logprobs.end(), event.prompt_logprobs.begin(), event.prompt_logprobs.end());
    sink.delta(event);
    if (on_delta) on_delta(sink.id().value(), r.tokens.size());
  }
  void finish(ResponseSink& sink, FinishEvent event) override {
    requests_[sink.id().value()].finishes.push_back(event);
    sink.finish(std::move(event));
  }
  void error(ResponseSink& sink, ErrorEvent event, const char* /*what*/) override {
    RecordedRequest& r = requests_[sink.id().value()];
    r.errors.push_back(event.message);
    r.error_params.push_back(event.param);
    sink.error(std::move(event.message), std::move(event.param));
  }

  const RecordedRequest& at(uint64_t id) { return requests_[id]; }

  // Called after each delta with the request's token count so far (a client
  // that reacts to what it has received, e.g. by cancelling).
  std::function<void(uint64_t id, size_t num_tokens)> on_delta;
  const std::map<uint64_t, RecordedRequest>& all() const { return requests_; }

 private:
  std::map<uint64_t, RecordedRequest> requests_;
};

class CountingTel final : public TelPort {
 public:
  void request_finished(const RequestTiming& t) override {
    ++num_finished;
    timings.push_back(t);
  }
  void request_failed() override { ++num_failed; }
  void preempted(PreemptKind kind) override { ++(kind == PreemptKind::kSwap ? num_swaps : num_recomputes); }
  void cache_queried(int64_t query_tokens, int64_t hit_tokens) override {
    num_query_tokens += query_tokens;
    num_hit_tokens += hit_tokens;
  }
  void step_done(const StepRecord& step) override {
    ++num_steps;
    steps.push_back(step);
  }
  void request_event(const RequestEvent& e) override {
    events.push_back(RecordedEvent{e.kind, e.id.value(), std::string(e.tenant), e.cached_tokens, e.output_tokens,
                                   std::string(e.finish_reason), std::string(e.error)});
  }
  void spilled(int64_t bytes, Duration) override {
    ++num_spills;
    spill_bytes += bytes;
  }
  void restored(int64_t bytes, Duration) override {
    ++num_restores;
    restore_bytes += bytes;
  }
  // The kinds of request `id`'s events, in order.
  std::vector<RequestEventKind> kinds_of(uint64_t id) const {
    std::vector<RequestEventKind> out;
    for (const RecordedEvent& e : events) {
      if (e.id == id) out.push_back(e.kind);
    }
    return out;
  }
  void speculated(int32_t drafted, int32_t accepted) override {
    num_drafted += drafted;
    num_accepted += accepted;
  }
  void drafts_withheld(int32_t n) override { num_withheld += n; }

  int64_t num_query_tokens = 0;
  int64_t num_hit_tokens = 0;
  int64_t num_drafted = 0;
  int64_t num_accepted = 0;
  int64_t num_withheld = 0;
  int num_finished = 0;
  int num_failed = 0;
  int num_swaps = 0;
  int num_recomputes = 0;
  int num_steps = 0;
  int num_spills = 0;
  int num_restores = 0;
  int64_t spill_bytes = 0;
  int64_t restore_bytes = 0;
  std::vector<RequestTiming> timings;
  std::vector<StepRecord> steps;
  struct RecordedEvent {
    RequestEventKind kind;
    uint64_t id;
    std::string tenant;
    int32_t cached_tokens;
    int32_t output_tokens;
    std::string finish_reason;
    std::string error;
  };
  std::vector<RecordedEvent> events;
};

}  // namespace met::testing
