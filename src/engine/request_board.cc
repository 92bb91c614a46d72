// RequestBoard. Tested by tests/engine/request_board_test.cc.
#include "engine/request_board.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace met {
namespace {

RequestState state_of(SeqPhase p) {
  switch (p) {
    case SeqPhase::kWaiting: return RequestState::kWaiting;
    case SeqPhase::kPreempted: return RequestState::kPreempted;
    case SeqPhase::kPrefill: return RequestState::kPrefill;
    case SeqPhase::kRunning: return RequestState::kRunning;
    case SeqPhase::kSwapped: return RequestState::kSwapped;
  }
  return RequestState::kWaiting;
}

// What an event does to the request's own record.
void apply(RequestView& v, const RequestEvent& e, int64_t unix_ms) {
  v.output_tokens = std::max(v.output_tokens, e.output_tokens);  // a pre-seq error frame carries none
  v.kv_blocks = e.kv_blocks;
  switch (e.kind) {
    case RequestEventKind::kQueued: v.state = RequestState::kWaiting; break;
    case RequestEventKind::kAdmitted:
      v.state = RequestState::kPrefill;
      v.admitted_ms = unix_ms;
      v.cached_tokens = e.cached_tokens;
      break;
    case RequestEventKind::kFirstToken:
      v.state = RequestState::kRunning;
      v.first_token_ms = unix_ms;
      break;
    case RequestEventKind::kPreempted:
      v.state = RequestState::kPreempted;
      ++v.preemptions;
      break;
    case RequestEventKind::kSwapped:
      v.state = RequestState::kSwapped;
      ++v.preemptions;
      break;
    case RequestEventKind::kResumed:
      v.state = v.state == RequestState::kSwapped ? RequestState::kRunning : RequestState::kPrefill;
      break;
    case RequestEventKind::kFinished:
      v.state = RequestState::kFinished;
      v.finished_ms = unix_ms;
      v.finish_reason = e.finish_reason;
      v.kv_blocks = 0;
      break;
    case RequestEventKind::kFailed:
      v.state = RequestState::kFailed;
      v.finished_ms = unix_ms;
      v.error = e.error;
      v.kv_blocks = 0;
      break;
  }
  TimelineEntry t{request_event_name(e.kind), unix_ms, 0, {}};
  if (e.kind == RequestEventKind::kAdmitted) t.cached_tokens = e.cached_tokens;
  if (e.kind == RequestEventKind::kFinished) t.detail = e.finish_reason;
  if (e.kind == RequestEventKind::kFailed) t.detail = e.error;
  v.timeline.push_back(std::move(t));
}

bool is_terminal(RequestEventKind k) { return k == RequestEventKind::kFinished || k == RequestEventKind::kFailed; }

}  // namespace

TenantView& RequestBoard::tenant(std::string_view name) {
  auto it = tenants_.find(std::string(name));
  if (it != tenants_.end()) return it->second;
  const std::string key(tenants_.size() < max_tenants_ ? name : kOtherTenant);
  TenantView& t = tenants_[key];
  t.tenant = key;
  return t;
}

void RequestBoard::end(RequestView&& v) {
  recent_.push_back(std::move(v));
  while (recent_.size() > num_recent_) recent_.pop_front();
}

void RequestBoard::on_event(const RequestEvent& e, int64_t unix_ms) {
  auto it = in_flight_.find(e.id.value());
  if (it == in_flight_.end()) {
    if (e.kind != RequestEventKind::kQueued && !is_terminal(e.kind)) return;  // not one of ours
    RequestView v;
    v.id = e.id;
    v.tenant = e.tenant;
    v.adapter = e.adapter;
    v.prompt_tokens = e.prompt_tokens;
    v.queued_ms = unix_ms;
    if (e.kind == RequestEventKind::kQueued) ++tenant(e.tenant).requests;
    it = in_flight_.emplace(e.id.value(), std::move(v)).first;
  }
  RequestView& v = it->second;
  apply(v, e, unix_ms);
  if (e.kind == RequestEventKind::kAdmitted) {
    TenantView& t = tenant(v.tenant);
    t.cache_query_tokens += e.prompt_tokens;
    t.cache_hit_tokens += e.cached_tokens;
  }
  if (!is_terminal(e.kind)) return;
  TenantView& t = tenant(v.tenant);
  t.prompt_tokens += v.prompt_tokens;
  t.output_tokens += v.output_tokens;
  end(std::move(v));
  in_flight_.erase(it);
}

void RequestBoard::tenant_blocks(std::span<const SeqProgress> live,
                                 std::unordered_map<std::string, int64_t>& out) const {
  if (out.size() > 4 * max_tenants_) out.clear();
  for (auto& [name, blocks] : out) blocks = 0;
  for (const SeqProgress& p : live) {
    const auto it = in_flight_.find(p.id.value());
    if (it != in_flight_.end()) out[it->second.tenant] += p.kv_blocks;
  }
}

EngineView RequestBoard::view(std::span<const SeqProgress> live, int64_t now_ms) const {
  EngineView out;
  out.now_ms = now_ms;
  std::unordered_map<std::string, TenantView> tenants = tenants_;
  for (const SeqProgress& p : live) {
    const auto it = in_flight_.find(p.id.value());
    if (it == in_flight_.end()) continue;
    RequestView v = it->second;
    v.state = state_of(p.phase);
    v.output_tokens = p.output_tokens;
    v.kv_blocks = p.kv_blocks;
    auto t = tenants.find(v.tenant);
    if (t == tenants.end()) t = tenants.find(std::string(kOtherTenant));
    if (t != tenants.end()) {
      ++t->second.running;
      t->second.kv_blocks += v.kv_blocks;
    }
    out.requests.push_back(std::move(v));
  }
  std::sort(out.requests.begin(), out.requests.end(),
            [](const RequestView& a, const RequestView& b) { return a.id.value() < b.id.value(); });
  out.requests.insert(out.requests.end(), recent_.begin(), recent_.end());
  for (auto& [name, t] : tenants) out.tenants.push_back(std::move(t));
  std::sort(out.tenants.begin(), out.tenants.end(), [](const TenantView& a, const TenantView& b) {
    return a.requests != b.requests ? a.requests > b.requests : a.tenant < b.tenant;
  });
  return out;
}

const char* request_state_name(RequestState s) {
  switch (s) {
    case RequestState::kWaiting: return "waiting";
    case RequestState::kPrefill: return "prefill";
    case RequestState::kRunning: return "running";
    case RequestState::kSwapped: return "swapped";
    case RequestState::kPreempted: return "preempted";
    case RequestState::kFinished: return "finished";
    case RequestState::kFailed: return "failed";
  }
  return "unknown";
}

}  // namespace met
