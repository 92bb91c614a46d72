// The operator's routes. Tested by tests/server/operator_api_test.cc and
// tests/server/serve_operator_test.cc.
#include "server/operator_api.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <string>
#include <vector>

#include "server/server_state.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

// How often a telemetry stream looks for new records, and after how long
// without any it writes a comment (which also finds a client that left).
constexpr auto kTelemetryPoll = std::chrono::milliseconds(100);
constexpr auto kTelemetryKeepAlive = std::chrono::seconds(15);
constexpr size_t kTelemetryBatch = 4096;  // records written at most per poll

Json optional_ms(const std::optional<int64_t>& ms) { return ms.has_value() ? Json(*ms) : Json(nullptr); }

Json request_json(const RequestView& r) {
  Json timeline = Json::array();
  for (const TimelineEntry& t : r.timeline) {
    Json e{{"event", t.event}, {"ms", t.unix_ms}};
    if (t.event == "admitted") e["cached_tokens"] = t.cached_tokens;
    if (t.event == "finished") e["reason"] = t.detail;
    if (t.event == "failed") e["error"] = t.detail;
    timeline.push_back(std::move(e));
  }
  Json j{{"id", std::to_string(r.id.value())},
         {"tenant", r.tenant},
         {"adapter", r.adapter},
         {"state", request_state_name(r.state)},
         {"prompt_tokens", r.prompt_tokens},
         {"cached_tokens", r.cached_tokens},
         {"output_tokens", r.output_tokens},
         {"preemptions", r.preemptions},
         {"kv_blocks", r.kv_blocks},
         {"queued_ms", r.queued_ms},
         {"admitted_ms", optional_ms(r.admitted_ms)},
         {"first_token_ms", optional_ms(r.first_token_ms)},
         {"finished_ms", optional_ms(r.finished_ms)},
         {"finish_reason", r.state == RequestState::kFinished ? Json(r.finish_reason) : Json(nullptr)}};
  if (r.state == RequestState::kFailed) j["error"] = r.error;
  j["timeline"] = std::move(timeline);
  return j;
}

Json tenant_json(const TenantView& t) {
  return Json{{"tenant", t.tenant},
              {"requests", t.requests},
              {"running", t.running},
              {"prompt_tokens", t.prompt_tokens},
              {"output_tokens", t.output_tokens},
              {"cache_query_tokens", t.cache_query_tokens},
              {"cache_hit_tokens", t.cache_hit_tokens},
              {"kv_blocks", t.kv_blocks}};
}

Json step_json(const StepTelemetry& t) {
  return Json{{"rows", t.rows},
              {"prefill_tokens", t.prefill_tokens},
              {"decode_tokens", t.decode_tokens},
              {"kv_blocks_in_use", t.kv_blocks_in_use},
              {"device_busy_us", t.device_busy_us},
              {"host_unhidden_us", t.host_unhidden_us},
              {"preemptions", t.preemptions},
              {"spills", t.spills},
              {"spill_bytes", t.spill_bytes},
              {"spill_ms", t.spill_ms},
              {"restores", t.restores},
              {"restore_bytes", t.restore_bytes},
              {"restore_ms", t.restore_ms}};
}

Json request_event_json(const RequestTelemetry& r) {
  Json j{{"event", r.event},
         {"id", std::to_string(r.id.value())},
         {"tenant", r.tenant},
         {"adapter", r.adapter},
         {"prompt_tokens", r.prompt_tokens},
         {"cached_tokens", r.cached_tokens},
         {"output_tokens", r.output_tokens}};
  if (r.event == "finished") {
    j["finish_reason"] = r.finish_reason;
    if (!r.guard.empty()) j["guard"] = r.guard;
  }
  if (r.event == "failed") j["error"] = r.error;
  return j;
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The SSE bytes of `records` (and of a loss, first).
std::string sse_bytes(const std::vector<TelemetryRecord>& records, uint64_t lost) {
  std::string out;
  if (lost > 0) out += fmt::format("data: {}\n\n", Json{{"type", "dropped"}, {"count", lost}}.dump());
  for (const TelemetryRecord& r : records) out += fmt::format("data: {}\n\n", telemetry_json(r).dump());
  return out;
}

}  // namespace

std::string request_tenant(const ApiKeys& keys, const HttpRequest& req, std::string_view cache_salt) {
  const auto auth = req[http::field::authorization];
  const auto x_api_key = req["x-api-key"];
  std::string tenant =
      keys.tenant_of(std::string_view(auth.data(), auth.size()), std::string_view(x_api_key.data(), x_api_key.size()));
  if (!tenant.empty() || cache_salt.empty()) return tenant;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: a stable digest, not a secret one
  for (const char c : cache_salt) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return fmt::format("salt-{:08x}", static_cast<uint32_t>(h >> 32));
}

std::optional<uint64_t> cancel_target(std::string_view target) {
  constexpr std::string_view kPrefix = "/v1/requests/";
  constexpr std::string_view kSuffix = "/cancel";
  if (!target.starts_with(kPrefix) || !target.ends_with(kSuffix)) return std::nullopt;
  const std::string_view id = target.substr(kPrefix.size(), target.size() - kPrefix.size() - kSuffix.size());
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size()) return std::nullopt;
  return v;
}

Json engine_view_json(const EngineView& view, const EngineStatsSnapshot& stats, int64_t uptime_ms) {
  Json requests = Json::array();
  for (const RequestView& r : view.requests) requests.push_back(request_json(r));
  Json tenants = Json::array();
  for (const TenantView& t : view.tenants) tenants.push_back(tenant_json(t));
  Json engine{{"running", stats.num_running},
              {"waiting", stats.num_waiting},
              {"swapped", stats.num_swapped},
              {"kv_blocks_in_use", stats.blocks_in_use},
              {"kv_blocks_total", stats.blocks_total},
              {"prompt_tokens", stats.prefill_tokens},
              {"output_tokens", stats.decode_tokens},
              {"cache_query_tokens", stats.cache_query_tokens},
              {"cache_hit_tokens", stats.cache_hit_tokens},
              {"steps", stats.steps},
              {"device_busy_ms", static_cast<double>(stats.device_busy_ns) / 1e6},
              {"preemptions", stats.preemptions_swap + stats.preemptions_recompute},
              {"requests_finished", stats.requests_finished},
              {"requests_failed", stats.requests_failed},
              {"uptime_ms", uptime_ms}};
  return Json{{"object", "engine.requests"},
              {"now_ms", view.now_ms},
              {"engine", std::move(engine)},
              {"requests", std::move(requests)},
              {"tenants", std::move(tenants)}};
}

Json telemetry_json(const TelemetryRecord& record) {
  Json j{{"seq", record.seq}, {"ms", record.unix_ms}};
  if (const auto* step = std::get_if<StepTelemetry>(&record.what)) {
    j["type"] = "step";
    j.update(step_json(*step));
  } else {
    j["type"] = "request";
    j.update(request_event_json(std::get<RequestTelemetry>(record.what)));
  }
  return j;
}

awaitable<bool> serve_requests(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                               const ExtraHeaders& headers) {
  Engine& engine = s.model()->engine;
  Result<EngineView> view = engine.inspect();
  if (!view.ok()) {
    co_return co_await write_error(stream, req.version(), http_error(503, view.status().message()), req.keep_alive(),
                                   headers);
  }
  const int64_t uptime_ms = wall_ms() - s.created * 1000;
  std::string body = engine_view_json(*view, engine.stats(), uptime_ms).dump();
  co_return co_await write_body(stream, req.version(), http::status::ok, std::move(body), kJson, req.keep_alive(),
                                headers);
}

awaitable<bool> serve_cancel(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req, uint64_t id,
                             const ExtraHeaders& headers) {
  const std::string reason = fmt::format("cancelled by an operator (POST /v1/requests/{}/cancel)", id);
  if (!s.model()->engine.cancel(RequestId(id), reason)) {
    const ApiError e = http_error(404, fmt::format("no request {} is in flight", id), std::string("request_not_found"));
    co_return co_await write_error(stream, req.version(), e, req.keep_alive(), headers);
  }
  std::string body = Json{{"id", std::to_string(id)}, {"cancelled", true}}.dump();
  co_return co_await write_body(stream, req.version(), http::status::ok, std::move(body), kJson, req.keep_alive(),
                                headers);
}

awaitable<bool> serve_telemetry(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                                const ExtraHeaders& headers) {
  TelemetryFeed::Subscription sub = s.model()->engine.subscribe_telemetry();
  const bool chunked = req.version() >= 11;
  const auto write_timeout = 2 * s.options.slow_client_timeout;
  if (!co_await write_sse_header(stream, req, headers)) co_return false;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  std::vector<TelemetryRecord> records;
  auto quiet_since = std::chrono::steady_clock::now();
  while (!s.stopping.load()) {
    records.clear();
    const uint64_t lost = sub.read(records, kTelemetryBatch);
    std::string bytes = sse_bytes(records, lost);
    const auto now = std::chrono::steady_clock::now();
    if (bytes.empty() && now - quiet_since >= kTelemetryKeepAlive) bytes = ": keep-alive\n\n";
    if (!bytes.empty()) {
      quiet_since = now;
      if (!co_await write_chunk(stream, bytes, chunked, write_timeout)) co_return false;
    }
    if (peer_state(stream.socket()) == Peer::kClosed) co_return false;
    if (records.size() == kTelemetryBatch) continue;  // more are waiting
    timer.expires_after(kTelemetryPoll);
    co_await timer.async_wait(kTuple);
  }
  if (chunked) (void)co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
  co_return false;  // the server is stopping: close the connection
}

}  // namespace met
