// Router. Tested through `met serve` by tests/server/http_server_test.cc and
// tests/server/server_endpoints_test.cc.
#include "server/router.h"

#include <fmt/format.h>

#include "core/fault_flag.h"
#include "server/chat_page.h"
#include "server/embeddings_api.h"
#include "server/generation.h"
#include "server/health.h"
#include "server/messages_front.h"
#include "server/openai_front.h"
#include "server/operator_api.h"
#include "server/responses_front.h"

namespace met {
namespace {

constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

awaitable<bool> health(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req, const ExtraHeaders& cors) {
  const ServedModel* m = s.model();
  HealthInputs in;
  in.loading = m == nullptr;
  in.stall_timeout = s.options.stall_timeout;
  if (is_faulted()) in.fault = fault_reason();
  if (m != nullptr) in.stats = m->engine.stats();
  const HealthVerdict v = decide_health(in);
  co_return co_await write_body(stream, req.version(), static_cast<http::status>(health_http_status(v.state)),
                                dump_json(health_body(v)), kJson, req.keep_alive(), cors);
}

awaitable<bool> json_result(beast::tcp_stream& stream, const HttpRequest& req,
                            const ApiResult<nlohmann::ordered_json>& r, const ExtraHeaders& cors,
                            ErrorStyle style = ErrorStyle::kOpenAi) {
  if (auto* e = std::get_if<ApiError>(&r)) {
    co_return co_await write_error(stream, req.version(), *e, req.keep_alive(), cors, style);
  }
  co_return co_await write_body(stream, req.version(), http::status::ok,
                                dump_json(std::get<nlohmann::ordered_json>(r)), kJson, req.keep_alive(), cors);
}

std::string_view header_value(const HttpRequest& req, http::field f) {
  const auto v = req[f];
  return {v.data(), v.size()};
}

std::string_view header_value(const HttpRequest& req, std::string_view name) {
  const auto v = req[name];
  return {v.data(), v.size()};
}

// OpenAI-compatible servers commonly answer the API's routes without the
// /v1 prefix too (clients configured with a bare base URL send them so).
std::string_view with_v1_prefix(std::string_view target) {
  for (std::string_view route :
       {"/v1/chat/completions", "/v1/completions", "/v1/models", "/v1/responses", "/v1/embeddings"}) {
    if (target == route.substr(3)) return route;
  }
  return target;
}

// Paths that need no API key: probes and the chat page (whose API calls carry the key).
bool open_path(std::string_view target) {
  return target == "/health" || target == "/metrics" || is_chat_page_path(target);
}

// The operator's paths (operator_api.h): --admin-key's key opens them when set.
bool operator_path(std::string_view target) {
  return target == kRequestsPath || target == kTelemetryPath || cancel_target(target).has_value();
}

// The verb each known path takes; nullopt for an unknown path.
std::optional<http::verb> verb_of(std::string_view target) {
  if (target == kRequestsPath || target == kTelemetryPath) return http::verb::get;
  if (cancel_target(target)) return http::verb::post;
  if (target == kResponsesPath) return http::verb::post;
  if (stored_response_id(target)) return http::verb::get;
  if (target == "/health" || target == "/metrics" || target == "/v1/models" || is_chat_page_path(target)) {
    return http::verb::get;
  }
  if (target == "/v1/completions" || target == "/v1/chat/completions" || target == "/tokenize" ||
      target == "/detokenize" || target == "/v1/messages" || target == "/v1/messages/count_tokens" ||
      target == "/v1/load_lora_adapter" || target == "/v1/unload_lora_adapter" || target == "/v1/embeddings") {
    return http::verb::post;
  }
  return std::nullopt;
}

// The answer for a known path with the right method, the model loaded.
awaitable<bool> dispatch(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                         std::string_view target, const ExtraHeaders& cors) {
  const ServedModel& m = *s.model();
  const bool keep = req.keep_alive();
  if (target == "/metrics") {
    // The tenants' totals come from the engine thread; a scrape that finds it
    // busy for longer than this goes without them.
    const Result<EngineView> view = m.engine.inspect(std::chrono::seconds(2));
    std::span<const TenantView> tenants;
    if (view.ok()) tenants = view->tenants;
    std::string body = s.metrics.render(m.engine.stats(), tenants);
    co_return co_await write_body(stream, req.version(), http::status::ok, std::move(body), kPrometheusText, keep,
                                  cors);
  }
  if (target == "/v1/models") {
    co_return co_await write_body(stream, req.version(), http::status::ok,
                                  dump_json(m.lora.models(s.options.model_name, s.created)), kJson, keep, cors);
  }
  if (target == "/v1/load_lora_adapter" || target == "/v1/unload_lora_adapter") {
    const ApiResult<std::string> r =
        target == "/v1/load_lora_adapter" ? m.lora.load(req.body()) : m.lora.unload(req.body());
    if (const auto* e = std::get_if<ApiError>(&r)) {
      co_return co_await write_error(stream, req.version(), *e, keep, cors, ErrorStyle::kOpenAi);
    }
    co_return co_await write_body(stream, req.version(), http::status::ok, std::get<std::string>(r),
                                  "text/plain; charset=utf-8", keep, cors);
  }
  if (target == "/v1/embeddings") co_return co_await serve_embeddings(s, stream, req, cors);
  if (target == kRequestsPath) co_return co_await serve_requests(s, stream, req, cors);
  if (target == kTelemetryPath) co_return co_await serve_telemetry(s, stream, req, cors);
  if (const std::optional<uint64_t> id = cancel_target(target)) {
    co_return co_await serve_cancel(s, stream, req, *id, cors);
  }
  if (target == "/tokenize") co_return co_await json_result(stream, req, m.tokenize.tokenize(req.body()), cors);
  if (target == "/detokenize") co_return co_await json_result(stream, req, m.tokenize.detokenize(req.body()), cors);
  if (target == "/v1/messages/count_tokens") {
    co_return co_await json_result(stream, req, count_message_tokens(m.prompts, req.body()), cors,
                                   ErrorStyle::kAnthropic);
  }
  if (target == "/v1/messages") {
    MessagesFront messages;
    co_return co_await generate(s, stream, req, messages, cors);
  }
  if (target == kResponsesPath) {
    ResponsesFront responses(s.responses);
    co_return co_await generate(s, stream, req, responses, cors);
  }
  if (const std::optional<std::string_view> id = stored_response_id(target)) {
    co_return co_await json_result(stream, req, stored_response(s.responses, *id), cors);
  }
  OpenAiFront front(target == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChatCompletions);
  co_return co_await generate(s, stream, req, front, cors);
}

}  // namespace

awaitable<bool> route(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req) {
  std::string_view target(req.target().data(), req.target().size());
  target = with_v1_prefix(target.substr(0, target.find('?')));
  const bool keep = req.keep_alive();
  // A browser's cross-origin request: its preflight is answered before any
  // key is asked for, and every answer says which origin may read it.
  const std::string_view origin = header_value(req, http::field::origin);
  const ExtraHeaders cors = s.options.cors.response_headers(origin);
  if (s.options.cors.is_preflight(std::string_view(req.method_string()), origin,
                                  header_value(req, http::field::access_control_request_method))) {
    co_return co_await write_body(stream, req.version(), http::status::no_content, "", "text/plain", keep,
                                  s.options.cors.preflight_headers(origin));
  }
  // Anthropic's Messages routes answer errors in Anthropic's shape.
  const ErrorStyle style = target.starts_with("/v1/messages") ? ErrorStyle::kAnthropic : ErrorStyle::kOpenAi;
  // With --admin-key, the operator's paths take that key and no other.
  const ApiKeys& keys =
      operator_path(target) && s.options.admin_keys.required() ? s.options.admin_keys : s.options.api_keys;
  const bool authorized = keys.authorizes(header_value(req, http::field::authorization)) ||
                          keys.authorizes_key(header_value(req, "x-api-key"));
  if (!open_path(target) && !authorized) {
    const ApiError e = http_error(401,
                                  "a valid API key is required: send the header 'Authorization: Bearer <key>' "
                                  "or 'x-api-key: <key>' with a key met serve was given",
                                  "invalid_api_key");
    co_return co_await write_error(stream, req.version(), e, keep, with_header(cors, "WWW-Authenticate", "Bearer"),
                                   style);
  }
  const std::optional<http::verb> verb = verb_of(target);
  if (!verb) {
    co_return co_await write_error(stream, req.version(), http_error(404, fmt::format("no route for {}", target)),
                                   keep, cors, style);
  }
  if (req.method() != *verb) {
    const ApiError e =
        http_error(405, fmt::format("{} is not allowed on {}", std::string_view(req.method_string()), target));
    co_return co_await write_error(stream, req.version(), e, keep,
                                   with_header(cors, "Allow", *verb == http::verb::get ? "GET" : "POST"), style);
  }
  if (target == "/health") co_return co_await health(s, stream, req, cors);
  if (is_chat_page_path(target)) {
    co_return co_await write_body(stream, req.version(), http::status::ok, std::string(chat_page_html()),
                                  kChatPageContentType, keep, chat_page_headers(cors));
  }
  if (s.model() == nullptr) {
    co_return co_await write_error(stream, req.version(), http_error(503, "the model is still loading"), keep, cors,
                                   style);
  }
  co_return co_await dispatch(s, stream, req, target, cors);
}

}  // namespace met
