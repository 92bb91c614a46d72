// parse_snapshot (snapshot.h): nlohmann::json, read leniently field by field.
// Threading: pure. Tested by tests/top/snapshot_test.cc.
#include "top/snapshot.h"

#include <nlohmann/json.hpp>

namespace met::top {
namespace {

using nlohmann::json;

int64_t int_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_number()) return 0;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

double double_field(const json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string string_field(const json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<int64_t> time_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return int_field(j, name);
}

EngineCounters parse_engine(const json& e) {
  EngineCounters c;
  c.running = int_field(e, "running");
  c.waiting = int_field(e, "waiting");
  c.swapped = int_field(e, "swapped");
  c.kv_blocks_in_use = int_field(e, "kv_blocks_in_use");
  c.kv_blocks_total = int_field(e, "kv_blocks_total");
  c.prompt_tokens = int_field(e, "prompt_tokens");
  c.output_tokens = int_field(e, "output_tokens");
  c.cache_query_tokens = int_field(e, "cache_query_tokens");
  c.cache_hit_tokens = int_field(e, "cache_hit_tokens");
  c.steps = int_field(e, "steps");
  c.device_busy_ms = double_field(e, "device_busy_ms");
  c.uptime_ms = int_field(e, "uptime_ms");
  return c;
}

// What an event carries besides its name and time, as one short phrase.
std::string event_detail(const json& ev) {
  std::string detail;
  for (const auto& [key, value] : ev.items()) {
    if (key == "event" || key == "ms") continue;
    if (!detail.empty()) detail += ", ";
    if (key == "cached_tokens" || key == "tokens") detail += key + " ";
    detail += value.is_string() ? value.get<std::string>() : value.dump();
  }
  return detail;
}

RequestRow parse_request(const json& r) {
  RequestRow row;
  const auto id = r.find("id");
  if (id != r.end()) row.id = id->is_string() ? id->get<std::string>() : id->dump();
  row.tenant = string_field(r, "tenant");
  row.adapter = string_field(r, "adapter");
  row.state = string_field(r, "state");
  row.prompt_tokens = int_field(r, "prompt_tokens");
  row.cached_tokens = int_field(r, "cached_tokens");
  row.output_tokens = int_field(r, "output_tokens");
  row.preemptions = int_field(r, "preemptions");
  row.kv_blocks = int_field(r, "kv_blocks");
  row.queued_ms = time_field(r, "queued_ms");
  row.admitted_ms = time_field(r, "admitted_ms");
  row.first_token_ms = time_field(r, "first_token_ms");
  row.finished_ms = time_field(r, "finished_ms");
  row.finish_reason = string_field(r, "finish_reason");
  if (row.finish_reason.empty()) row.finish_reason = string_field(r, "error");
  const auto tl = r.find("timeline");
  if (tl != r.end() && tl->is_array()) {
    for (const json& ev : *tl) {
      if (!ev.is_object()) continue;
      row.timeline.push_back({string_field(ev, "event"), int_field(ev, "ms"), event_detail(ev)});
    }
  }
  return row;
}

TenantRow parse_tenant(const json& t) {
  TenantRow row;
  row.tenant = string_field(t, "tenant");
  row.requests = int_field(t, "requests");
  row.running = int_field(t, "running");
  row.prompt_tokens = int_field(t, "prompt_tokens");
  row.output_tokens = int_field(t, "output_tokens");
  row.cache_query_tokens = int_field(t, "cache_query_tokens");
  row.cache_hit_tokens = int_field(t, "cache_hit_tokens");
  row.kv_blocks = int_field(t, "kv_blocks");
  return row;
}

}  // namespace

Result<Snapshot> parse_snapshot(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument("the answer of /v1/requests is not JSON");
  if (!j.is_object() || !j.contains("engine") || !j["engine"].is_object()) {
    return invalid_argument("the answer of /v1/requests has no \"engine\" object (is this a met server?)");
  }
  Snapshot s;
  s.now_ms = int_field(j, "now_ms");
  s.engine = parse_engine(j["engine"]);
  const auto requests = j.find("requests");
  if (requests != j.end() && requests->is_array()) {
    for (const json& r : *requests) {
      if (r.is_object()) s.requests.push_back(parse_request(r));
    }
  }
  const auto tenants = j.find("tenants");
  if (tenants != j.end() && tenants->is_array()) {
    for (const json& t : *tenants) {
      if (t.is_object()) s.tenants.push_back(parse_tenant(t));
    }
  }
  return s;
}

}  // namespace met::top
