// The operator's routes (issue 22): GET /v1/requests (every request in
// flight and the last ones that ended, the engine's load and counters, the
// per-tenant totals: Engine::inspect as JSON), POST /v1/requests/{id}/cancel
// (ends one request with an error frame, as a disconnect would), and
// GET /v1/telemetry (SSE: each settled step and each request's lifecycle
// event as it happens, from the engine's TelemetryFeed). The router lets them
// in with --admin-key's key when one is set, else with an API key.
// Invariants: a telemetry stream ends when its client leaves, when a write
// is not taken within the slow-client timeout, or when the server stops; a
// client that falls behind the feed's ring is told how many records it lost.
// Threading: the connection's strand. Tested by tests/server/operator_api_test.cc
// and through `met serve` by tests/server/serve_operator_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "server/api_keys.h"
#include "server/http_io.h"

namespace met {

struct ServerState;

inline constexpr std::string_view kRequestsPath = "/v1/requests";
inline constexpr std::string_view kTelemetryPath = "/v1/telemetry";

// Who a request is accounted to: its API key's tenant (--api-key-file's
// "KEY TENANT"), else "salt-" and a digest of its cache_salt (never the salt
// itself, which is a secret of the client's), else "".
std::string request_tenant(const ApiKeys& keys, const HttpRequest& req, std::string_view cache_salt);

// The id of "/v1/requests/{id}/cancel"; nullopt for any other path.
std::optional<uint64_t> cancel_target(std::string_view target);

// GET /v1/requests's body (docs/operator-api.md names every field).
nlohmann::ordered_json engine_view_json(const EngineView& view, const EngineStatsSnapshot& stats,
                                        int64_t uptime_ms);
// One telemetry record as the stream's JSON object.
nlohmann::ordered_json telemetry_json(const TelemetryRecord& record);

awaitable<bool> serve_requests(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                               const ExtraHeaders& headers);
awaitable<bool> serve_cancel(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req, uint64_t id,
                             const ExtraHeaders& headers);
awaitable<bool> serve_telemetry(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                                const ExtraHeaders& headers);

}  // namespace met
