// Engine: the engine thread and its inbox. Clients call submit() from any
// thread; the request is checked at once (a bad one is refused with a Status
// and never queued) and handed to the engine thread through the inbox; the
// client reads its events from the returned RequestHandle. The engine thread
// owns the Scheduler and the ports it talks through (DevPort and the
// KvManager over the Device, the sinks, EngineStats, the clock, the optional
// spill store).
// Invariants: every accepted request gets exactly one terminal event, also on
// shutdown and on a device fault; after a fault nothing more is accepted and
// the engine thread exits once every request is answered.
// Threading: submit/stats/shutdown from any thread; all scheduling on the
// engine thread. Events reach clients through a StreamPublisher: staged
// during a tick, each touched request published once after it (no thread and
// no lock per token; a client's unsent bytes bounded by options.streams).
// Operators: inspect() answers from the engine thread (the request board
// merged with the scheduler's live progress, engine_view.h), cancel() ends
// one request with an error frame as a disconnect would, and
// subscribe_telemetry() follows the telemetry stream (telemetry_feed.h).
// Tested by tests/engine/engine_test.cc and tests/engine/engine_telemetry_test.cc.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/device.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "engine/engine_stats.h"
#include "engine/engine_telemetry.h"
#include "engine/engine_view.h"
#include "engine/telemetry_feed.h"
#include "engine/kv_event_publisher.h"
#include "engine/kv_event_stager.h"
#include "kv/kv_manager.h"
#include "kv/spill_io.h"
#include "request/engine_request.h"
#include "request/response_sink.h"
#include "request/stream_publisher.h"
#include "scheduler/dev_port.h"
#include "scheduler/scheduler.h"
#include "tokenizer/tokenizer.h"

namespace met {

struct EngineOptions {
  SchedulerOptions scheduler;
  StreamLimits streams;            // each client's unsent-bytes bound
  std::function<void()> on_fault;  // called once from the engine thread after a device fault
  // Hybrid recurrent models: blocks between two state snapshots of a prompt.
  int32_t state_snapshot_blocks = KvManager::kDefaultSnapshotBlocks;
  // Where the prefix cache's KV events go (null: off), one batch per tick
  // that changed the cache, opened by an AllBlocksCleared. Borrowed; it
  // outlives the engine.
  KvEventPublisher* kv_events = nullptr;
};

// The client's end of a request.
class RequestHandle {
 public:
  RequestHandle(RequestId id, std::shared_ptr<ResponseStream> stream) : id_(id), stream_(std::move(stream)) {}
  RequestId id() const { return id_; }
  // The next event; false after the terminal one was taken.
  bool next(StreamEvent& out) { return stream_->pop(out); }
  bool next_for(StreamEvent& out, std::chrono::milliseconds timeout) { return stream_->pop_for(out, timeout); }
  // Every event published so far, appended to `out` in order (none after the
  // terminal one); never blocks.
  void take(std::vector<StreamEvent>& out) { stream_->take(out); }
  bool has_events() { return stream_->has_events(); }
  // `waker` runs on the engine thread once per tick that publishes events
  // for this request (and at once if some wait): cheap, non-blocking, never
  // calling back into the handle. Once clear_waker() returns it never runs.
  void set_waker(std::function<void()> waker) { stream_->set_waker(std::move(waker)); }
  void clear_waker() { stream_->clear_waker(); }
  // The engine answers with an error frame at its next tick.
  void cancel() { stream_->cancel(); }

 private:
  RequestId id_;
  std::shared_ptr<ResponseStream> stream_;
};

// What an embedding client needs of the model (DeviceInfo's view).
struct EmbeddingInfo {
  int32_t hidden_size = 0;  // the pooled vector's width
  Pooling pooling = Pooling::kLast;
  bool has_head = true;  // false: an encoder, which only embeds
};

class Engine {
 public:
  // Borrows device, tokenizer, spill (may be null) and clock; they outlive it.
  static Result<std::unique_ptr<Engine>> create(Device& device, const Tokenizer& tokenizer, SpillIo* spill,
                                                const Clock& clock, EngineOptions options);
  ~Engine();  // stop(): requests still open get an error frame

  Result<RequestHandle> submit(EngineRequest request);
  RequestLimits limits() const { return limits_; }
  EmbeddingInfo embedding_info() const {
    const DeviceInfo& i = device_.info();
    return EmbeddingInfo{i.hidden_size, i.pooling, i.has_head};
  }
  // The counters and load, and a MoE model's expert load from the device.
  EngineStatsSnapshot stats() const;
  // Every request in flight and the last ones that ended, with per-tenant
  // totals, as the engine thread sees them at its next tick; an error when
  // it does not answer within `timeout` (stopped, or one step runs longer).
  Result<EngineView> inspect(Duration timeout = std::chrono::seconds(5));
  // Ends request `id` with an error frame saying `reason` at the engine's
  // next tick (a client's disconnect does the same); false when no such
  // request is in flight.
  bool cancel(RequestId id, std::string reason);
  TelemetryFeed::Subscription subscribe_telemetry() { return feed_.subscribe(); }
  // From now on the engine thread publishes, after each tick, the KV blocks
  // each tenant holds (per-tenant KV quotas read them); off by default.
  void track_tenant_blocks() { track_tenant_blocks_.store(true, std::memory_order_relaxed); }
  // The KV blocks `tenant`'s requests held after the last tick (0 unless tracked).
  int64_t tenant_kv_blocks(const std::string& tenant) const;

  // REQUIRES: drain() or stop() returned (the engine thread owns them before).
  int32_t kv_blocks_in_use() const { return kv_.num_blocks_in_use(); }
  const PrefixCache& prefix_cache() const { return kv_.prefix_cache(); }

  // Stops accepting, finishes every request already accepted, then stops.
  void drain();
  // Stops accepting and answers every open request with an error frame.
  void stop();

 private:
  struct Inbound {
    EngineRequest request;
    ResponseSink sink;
    TimePoint submitted;
  };

  Engine(Device& device, const Clock& clock, EngineOptions options);
  void engine_main();
  void join(bool drain);
  // Tells stats_ what the scheduler holds (engine thread).
  void publish_load();
  // Hands every event staged since the last call to its client, the
  // telemetry staged since then to its subscribers, and the KV events
  // staged since then to options_.kv_events.
  void publish_events();
  // Answers pending inspect() calls (engine thread).
  void answer_inspections();
  // Whether an inspect() call waits for an answer.
  bool inspection_pending() const REQUIRES(mu_) { return inspect_asked_ != inspect_answered_; }

  const Clock& clock_;
  const Device& device_;  // stats() reads its expert load (any thread may)
  EngineOptions options_;
  DevPort dev_port_;
  KvEventStager kv_stager_;  // before kv_, which reports to it when KV events are on
  KvEventBatch kv_batch_;    // the batch being handed over, its vector's capacity reused
  KvManager kv_;
  SinkReqPort req_port_;
  EngineStats stats_;
  TelemetryFeed feed_;
  EngineTelemetry telemetry_;  // the scheduler's tel port: stats_, the board, feed_
  StreamPublisher publisher_;  // before scheduler_: its sinks enlist here
  std::unique_ptr<Scheduler> scheduler_;
  RequestLimits limits_;
  std::atomic<uint64_t> next_request_id_{1};

  Mutex mu_;
  CondVar cv_;
  std::vector<Inbound> inbox_ GUARDED_BY(mu_);
  bool accepting_ GUARDED_BY(mu_) = true;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool drain_on_stop_ GUARDED_BY(mu_) = true;
  // The streams of the requests in flight, for cancel().
  std::unordered_map<uint64_t, std::weak_ptr<ResponseStream>> live_ GUARDED_BY(mu_);
  uint64_t inspect_asked_ GUARDED_BY(mu_) = 0;
  uint64_t inspect_answered_ GUARDED_BY(mu_) = 0;
  bool engine_exited_ GUARDED_BY(mu_) = false;
  EngineView inspected_ GUARDED_BY(mu_);
  CondVar inspect_cv_;
  std::vector<SeqProgress> progress_;  // engine thread's scratch
  std::atomic<bool> track_tenant_blocks_{false};
  std::unordered_map<std::string, int64_t> tenant_blocks_scratch_;  // engine thread's
  mutable Mutex tenant_mu_;
  std::unordered_map<std::string, int64_t> tenant_blocks_ GUARDED_BY(tenant_mu_);
  std::vector<RequestId> ended_;       // engine thread's scratch
  std::thread thread_;
};

}  // namespace met
