// Engine. Tested by tests/engine/engine_test.cc.
#include "engine/engine.h"

#include <pthread.h>

#include <fmt/format.h>

#include "core/fault_flag.h"
#include "core/log.h"

namespace met {

Result<std::unique_ptr<Engine>> Engine::create(Device& device, const Tokenizer& tokenizer, SpillIo* spill,
                                               const Clock& clock, EngineOptions options) {
  std::unique_ptr<Engine> e(new Engine(device, clock, std::move(options)));
  SchedIo io{e->dev_port_, e->kv_, e->req_port_, e->stats_, e->clock_};
  MET_ASSIGN_OR_RETURN(e->scheduler_, Scheduler::create(io, spill, tokenizer, e->options_.scheduler));
  e->limits_ = e->scheduler_->limits();
  e->stats_.set_blocks_total(e->kv_.num_blocks());
  e->stats_.set_state_slots_total(e->kv_.num_state_slots());
  e->thread_ = std::thread([raw = e.get()] { raw->engine_main(); });
  return e;
}

Engine::Engine(Device& device, const Clock& clock, EngineOptions options)
    : clock_(clock),
      device_(device),
      options_(std::move(options)),
      dev_port_(device),
      kv_(device, options_.state_snapshot_blocks),
      stats_(clock),
      publisher_(options_.streams) {
  if (options_.kv_events != nullptr) {
    kv_.set_event_sink(&kv_stager_);
    kv_stager_.all_blocks_cleared();
  }
}

Engine::~Engine() { stop(); }

Result<RequestHandle> Engine::submit(EngineRequest request) {
  if (is_faulted()) return internal_error("the server is faulted ({}) and accepts no requests", fault_reason());
  MET_RETURN_IF_ERROR(validate_request(request, limits_));
  const RequestId id(next_request_id_.fetch_add(1, std::memory_order_relaxed));
  auto stream = std::make_shared<ResponseStream>();
  {
    MutexLock lock(mu_);
    if (!accepting_) return internal_error("the engine is shutting down and accepts no requests");
    inbox_.push_back(Inbound{std::move(request), ResponseSink(id, stream, &publisher_), clock_.now()});
  }
  cv_.notify_all();
  return RequestHandle(id, std::move(stream));
}

EngineStatsSnapshot Engine::stats() const {
  EngineStatsSnapshot s = stats_.snapshot();
  s.num_experts = device_.info().num_experts;
  device_.read_expert_tokens(s.expert_tokens);
  return s;
}

void Engine::drain() { join(/*drain=*/true); }
void Engine::stop() { join(/*drain=*/false); }

void Engine::join(bool drain) {
  {
    MutexLock lock(mu_);
    accepting_ = false;
    if (!stopping_) drain_on_stop_ = drain;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::publish_load() {
  stats_.publish_load(scheduler_->counts(), !scheduler_->idle(), kv_.num_blocks_in_use(),
                      kv_.num_state_slots_in_use());
}

void Engine::publish_events() {
  const int32_t num_cut = publisher_.publish(clock_.now());
  if (num_cut > 0) stats_.slow_clients_cut(num_cut);
  if (options_.kv_events != nullptr && kv_stager_.take(kv_batch_)) {
    options_.kv_events->publish(std::move(kv_batch_));
    kv_batch_ = KvEventBatch{};
  }
}

void Engine::engine_main() {
  // Named for operators (top -H, gdb) and for the allocation test.
  pthread_setname_np(pthread_self(), "met-engine");
  std::vector<Inbound> batch;
  bool fault_reported = false;
  for (;;) {
    bool stopping = false;
    bool drain = true;
    {
      MutexLock lock(mu_);
      if (inbox_.empty() && !stopping_ && scheduler_->idle()) {
        while (inbox_.empty() && !stopping_) cv_.wait(mu_);
      }
      batch.swap(inbox_);
      stopping = stopping_;
      drain = drain_on_stop_;
    }
    for (Inbound& in : batch) {
      if (is_faulted()) {
        in.sink.error(fmt::format("the server is faulted: {}", fault_reason()));
        continue;
      }
      scheduler_->enqueue(std::move(in.request), std::move(in.sink), in.submitted);
    }
    batch.clear();
    publish_events();
    publish_load();
    const bool faulted = is_faulted();
    if (faulted) {
      scheduler_->fail_all(fmt::format("the server is faulted: {}", fault_reason()));
      {
        MutexLock lock(mu_);
        accepting_ = false;
      }
      if (!fault_reported && options_.on_fault) options_.on_fault();
      fault_reported = true;
    } else if (stopping && !drain) {
      scheduler_->fail_all("the engine stopped before this request finished");
    }
    publish_events();
    if ((faulted || stopping) && scheduler_->idle()) {
      // Done, unless a request slipped into the inbox before it closed.
      MutexLock lock(mu_);
      if (inbox_.empty()) return;
      continue;
    }
    const bool ticked = scheduler_->tick();
    publish_events();
    publish_load();
    if (!ticked && !scheduler_->idle()) {
      // Nothing could run (waiting on a deadline or on room): wait a little.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      MutexLock lock(mu_);
      while (inbox_.empty() && !stopping_) {
        if (!cv_.wait_until(mu_, deadline)) break;
      }
    }
  }
}

}  // namespace met
