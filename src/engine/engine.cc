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
  SchedIo io{e->dev_port_, e->kv_, e->req_port_, e->telemetry_, e->clock_};
  MET_ASSIGN_OR_RETURN(e->scheduler_, Scheduler::create(io, spill, tokenizer, e->options_.scheduler));
  e->limits_ = e->scheduler_->limits();
  e->stats_.set_blocks_total(e->kv_.num_blocks());
  e->stats_.set_state_slots_total(e->kv_.num_state_slots());
  e->stats_.set_state_snapshots_total(e->kv_.num_state_snapshot_slots());
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
      telemetry_(clock, stats_, feed_),
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
    live_.emplace(id.value(), stream);
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

Result<EngineView> Engine::inspect(Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(mu_);
  if (engine_exited_) return internal_error("the engine has stopped");
  const uint64_t ticket = ++inspect_asked_;
  cv_.notify_all();
  while (inspect_answered_ < ticket) {
    if (engine_exited_) return internal_error("the engine has stopped");
    if (!inspect_cv_.wait_until(mu_, deadline)) {
      if (inspect_answered_ >= ticket) break;
      return internal_error("the engine did not answer within {} ms (a step is running long)",
                         std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
    }
  }
  return inspected_;
}

bool Engine::cancel(RequestId id, std::string reason) {
  MutexLock lock(mu_);
  const auto it = live_.find(id.value());
  if (it == live_.end()) return false;
  const std::shared_ptr<ResponseStream> stream = it->second.lock();
  if (stream == nullptr || stream->cancelled()) return false;
  stream->cancel(std::move(reason));
  cv_.notify_all();  // the engine may be waiting for room: it should retire this now
  return true;
}

void Engine::answer_inspections() {
  {
    MutexLock lock(mu_);
    if (!inspection_pending()) return;
  }
  progress_.clear();
  scheduler_->describe(progress_);
  EngineView view = telemetry_.board().view(progress_, telemetry_.unix_ms(clock_.now()));
  MutexLock lock(mu_);
  inspected_ = std::move(view);
  inspect_answered_ = inspect_asked_;
  inspect_cv_.notify_all();
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
  stats_.publish_load(scheduler_->counts(), !scheduler_->idle(),
                      PoolUse{.blocks = kv_.num_blocks_in_use(),
                              .state_slots = kv_.num_state_slots_in_use(),
                              .state_snapshots = kv_.num_state_snapshots()});
  if (!track_tenant_blocks_.load(std::memory_order_relaxed)) return;
  progress_.clear();
  scheduler_->describe(progress_);
  telemetry_.board().tenant_blocks(progress_, tenant_blocks_scratch_);
  MutexLock lock(tenant_mu_);
  tenant_blocks_.swap(tenant_blocks_scratch_);
}

int64_t Engine::tenant_kv_blocks(const std::string& tenant) const {
  MutexLock lock(tenant_mu_);
  const auto it = tenant_blocks_.find(tenant);
  return it == tenant_blocks_.end() ? 0 : it->second;
}

void Engine::publish_events() {
  const int32_t num_cut = publisher_.publish(clock_.now());
  if (num_cut > 0) stats_.slow_clients_cut(num_cut);
  if (options_.kv_events != nullptr && kv_stager_.take(kv_batch_)) {
    options_.kv_events->publish(std::move(kv_batch_));
    kv_batch_ = KvEventBatch{};
  }
  feed_.flush();
  telemetry_.take_ended(ended_);
  if (ended_.empty()) return;
  MutexLock lock(mu_);
  for (RequestId id : ended_) live_.erase(id.value());
  ended_.clear();
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
      if (inbox_.empty() && !stopping_ && scheduler_->idle() && !inspection_pending()) {
        telemetry_.note_idle();
        while (inbox_.empty() && !stopping_ && !inspection_pending()) cv_.wait(mu_);
      }
      batch.swap(inbox_);
      stopping = stopping_;
      drain = drain_on_stop_;
    }
    for (Inbound& in : batch) {
      if (is_faulted()) {
        in.sink.error(fmt::format("the server is faulted: {}", fault_reason()));
        MutexLock lock(mu_);
        live_.erase(in.sink.id().value());
        continue;
      }
      scheduler_->enqueue(std::move(in.request), std::move(in.sink), in.submitted);
    }
    batch.clear();
    publish_events();
    publish_load();
    answer_inspections();
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
      if (!inbox_.empty()) continue;
      engine_exited_ = true;
      inspect_cv_.notify_all();
      return;
    }
    const bool ticked = scheduler_->tick();
    publish_events();
    publish_load();
    answer_inspections();
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
