// Canned answers of GET /v1/requests for the top/ tests, in the server's
// contract (docs/api.md): an engine with three requests of two tenants.
// Threading: constants. Never linked into apps/.
#pragma once

namespace met::top::testing {

// now_ms 1764851234567; request 17 running (acme), 18 waiting (no tenant),
// 9 finished (beta); an unknown field at every level.
inline constexpr const char* kRequestsJson = R"({"object":"engine.requests","now_ms":1764851234567,
 "future_field":{"x":1},
 "engine":{"running":1,"waiting":1,"swapped":0,"kv_blocks_in_use":120,"kv_blocks_total":2048,
   "prompt_tokens":12345,"output_tokens":6789,"cache_query_tokens":1000,"cache_hit_tokens":500,
   "steps":4242,"device_busy_ms":12345.6,"uptime_ms":99999,"new_counter":7},
 "requests":[
  {"id":"17","tenant":"acme","adapter":"","state":"running",
   "prompt_tokens":120,"cached_tokens":64,"output_tokens":33,"preemptions":1,"kv_blocks":10,
   "queued_ms":1764851230000,"admitted_ms":1764851230010,"first_token_ms":1764851230100,"finished_ms":null,
   "finish_reason":null,"shiny":true,
   "timeline":[{"event":"queued","ms":1764851230000},{"event":"admitted","ms":1764851230010,"cached_tokens":64},
     {"event":"first_token","ms":1764851230100},{"event":"preempted","ms":1764851231000,"how":"swap"},
     {"event":"resumed","ms":1764851232000}]},
  {"id":"18","tenant":"","adapter":"","state":"waiting",
   "prompt_tokens":40,"cached_tokens":0,"output_tokens":0,"preemptions":0,"kv_blocks":0,
   "queued_ms":1764851234000,"admitted_ms":null,"first_token_ms":null,"finished_ms":null,"finish_reason":null,
   "timeline":[{"event":"queued","ms":1764851234000}]},
  {"id":"9","tenant":"beta","adapter":"lora-a","state":"finished",
   "prompt_tokens":300,"cached_tokens":256,"output_tokens":100,"preemptions":0,"kv_blocks":0,
   "queued_ms":1764851220000,"admitted_ms":1764851220005,"first_token_ms":1764851220050,
   "finished_ms":1764851222050,"finish_reason":"stop",
   "timeline":[{"event":"queued","ms":1764851220000},{"event":"finished","ms":1764851222050,"reason":"stop"}]}],
 "tenants":[{"tenant":"acme","requests":10,"running":1,"prompt_tokens":500,"output_tokens":900,
   "cache_query_tokens":400,"cache_hit_tokens":200,"kv_blocks":30},
  {"tenant":"beta","requests":1,"running":0,"prompt_tokens":300,"output_tokens":100,
   "cache_query_tokens":300,"cache_hit_tokens":256,"kv_blocks":0}]})";

}  // namespace met::top::testing
