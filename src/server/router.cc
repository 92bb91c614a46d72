// Router. Tested through `met serve` by tests/server/http_server_test.cc and
// tests/server/server_endpoints_test.cc.
#include "server/router.h"

#include <fmt/format.h>

#include "core/fault_flag.h"
#include "server/generation.h"
#include "server/health.h"
#include "server/openai_response.h"

namespace met {
namespace {

constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

awaitable<bool> health(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req) {
  const ServedModel* m = s.model();
  HealthInputs in;
  in.loading = m == nullptr;
  in.stall_timeout = s.options.stall_timeout;
  if (is_faulted()) in.fault = fault_reason();
  if (m != nullptr) in.stats = m->engine.stats();
  const HealthVerdict v = decide_health(in);
  co_return co_await write_body(stream, req.version(), static_cast<http::status>(health_http_status(v.state)),
                                dump_json(health_body(v)), kJson, req.keep_alive());
}

awaitable<bool> json_result(beast::tcp_stream& stream, const HttpRequest& req,
                            const ApiResult<nlohmann::ordered_json>& r) {
  if (auto* e = std::get_if<ApiError>(&r)) co_return co_await write_error(stream, req.version(), *e, req.keep_alive());
  co_return co_await write_body(stream, req.version(), http::status::ok,
                                dump_json(std::get<nlohmann::ordered_json>(r)), kJson, req.keep_alive());
}

// OpenAI-compatible servers commonly answer the API's routes without the
// /v1 prefix too (clients configured with a bare base URL send them so).
std::string_view with_v1_prefix(std::string_view target) {
  for (std::string_view route : {"/v1/chat/completions", "/v1/completions", "/v1/models"}) {
    if (target == route.substr(3)) return route;
  }
  return target;
}

bool open_path(std::string_view target) { return target == "/health" || target == "/metrics"; }

// The verb each known path takes; nullopt for an unknown path.
std::optional<http::verb> verb_of(std::string_view target) {
  if (target == "/health" || target == "/metrics" || target == "/v1/models") return http::verb::get;
  if (target == "/v1/completions" || target == "/v1/chat/completions" || target == "/tokenize" ||
      target == "/detokenize") {
    return http::verb::post;
  }
  return std::nullopt;
}

// The answer for a known path with the right method, the model loaded.
awaitable<bool> dispatch(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                         std::string_view target) {
  const ServedModel& m = *s.model();
  const bool keep = req.keep_alive();
  if (target == "/metrics") {
    co_return co_await write_body(stream, req.version(), http::status::ok, s.metrics.render(m.engine.stats()),
                                  kPrometheusText, keep);
  }
  if (target == "/v1/models") {
    co_return co_await write_body(stream, req.version(), http::status::ok,
                                  dump_json(models_body(s.options.model_name, s.created)), kJson, keep);
  }
  if (target == "/tokenize") co_return co_await json_result(stream, req, m.tokenize.tokenize(req.body()));
  if (target == "/detokenize") co_return co_await json_result(stream, req, m.tokenize.detokenize(req.body()));
  co_return co_await generate(s, stream, req,
                              target == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChatCompletions);
}

}  // namespace

awaitable<bool> route(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req) {
  std::string_view target(req.target().data(), req.target().size());
  target = with_v1_prefix(target.substr(0, target.find('?')));
  const bool keep = req.keep_alive();
  const std::string_view authorization(req[http::field::authorization].data(),
                                       req[http::field::authorization].size());
  if (!open_path(target) && !s.options.api_keys.authorizes(authorization)) {
    const ApiError e = http_error(401,
                                  "a valid API key is required: send the header "
                                  "'Authorization: Bearer <key>' with a key met serve was given",
                                  "invalid_api_key");
    ExtraHeaders headers;
    headers.emplace_back("WWW-Authenticate", "Bearer");
    co_return co_await write_error(stream, req.version(), e, keep, headers);
  }
  const std::optional<http::verb> verb = verb_of(target);
  if (!verb) {
    co_return co_await write_error(stream, req.version(), http_error(404, fmt::format("no route for {}", target)),
                                   keep);
  }
  if (req.method() != *verb) {
    const ApiError e =
        http_error(405, fmt::format("{} is not allowed on {}", std::string_view(req.method_string()), target));
    ExtraHeaders headers;
    headers.emplace_back("Allow", *verb == http::verb::get ? "GET" : "POST");
    co_return co_await write_error(stream, req.version(), e, keep, headers);
  }
  if (target == "/health") co_return co_await health(s, stream, req);
  if (s.model() == nullptr) {
    co_return co_await write_error(stream, req.version(), http_error(503, "the model is still loading"), keep);
  }
  co_return co_await dispatch(s, stream, req, target);
}

}  // namespace met
