// Generation. Tested through `met serve` by tests/server/http_server_test.cc.
#include "server/generation.h"

#include <fmt/format.h>

#include <algorithm>

#include "request/request_limits.h"
#include "server/operator_api.h"
#include "server/request_bridge.h"
#include "server/chat_shaper.h"

namespace met {
namespace {

// A prompt too long to serve, as OpenAI answers it: 400 with code
// "context_length_exceeded" and the front's `param`.
std::optional<ApiError> context_error(std::optional<std::string> param, const std::vector<EngineRequest>& prompts,
                                      const RequestLimits& limits) {
  for (const EngineRequest& er : prompts) {
    if (!prompt_exceeds_context(static_cast<int64_t>(er.prompt.size()), limits)) continue;
    ApiError e = invalid_request(param, validate_request(er, limits).message());
    e.code = "context_length_exceeded";
    return e;
  }
  return std::nullopt;
}

ApiError submit_error(const Status& s) {
  const bool caller = s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kOutOfRange;
  return caller ? invalid_request(std::nullopt, s.message()) : http_error(503, s.message());
}

// Choice p * n + i is prompt p's i-th, sampled with seed + i; the n choices
// of a prompt share it (its blocks are computed once: the scheduler's
// in-batch prefix sharing).
Result<std::vector<RequestHandle>> submit_choices(Engine& engine, std::vector<EngineRequest> prompts, int32_t n) {
  std::vector<RequestHandle> handles;
  for (EngineRequest& r : prompts) {
    for (int32_t i = 0; i < n; ++i) {
      EngineRequest choice = i + 1 < n ? r : std::move(r);
      choice.sampling.seed += static_cast<uint64_t>(i);
      Result<RequestHandle> h = engine.submit(std::move(choice));
      if (!h.ok()) {
        for (RequestHandle& taken : handles) taken.cancel();
        return h.status();
      }
      handles.push_back(std::move(*h));
    }
  }
  return handles;
}

// How a chat choice's text becomes a message; nullopt: it is all content.
std::optional<ChatShape> chat_shape(Endpoint endpoint, const ChatFormat& format, const EngineRequest& r,
                                    const AgentFields& agent, uint64_t unique) {
  if (endpoint != Endpoint::kChatCompletions) return std::nullopt;
  ChatShape shape;
  shape.format = format;
  shape.starts_in_thinking = r.thinking.has_value() && r.thinking->starts_inside;
  shape.parse_tool_calls = !agent.tools.empty() && agent.tool_choice == ToolChoice::kAuto;
  if (agent.tool_choice == ToolChoice::kNamed) shape.forced = ForcedTools::kNamed;
  if (agent.tool_choice == ToolChoice::kRequired) shape.forced = ForcedTools::kRequired;
  shape.forced_name = agent.tool_choice_name;
  shape.one_call = !agent.parallel_tool_calls;
  for (const auto& tool : agent.tools) {
    const auto fn = tool.find("function");
    if (fn == tool.end() || !fn->is_object()) continue;
    const auto name = fn->find("name");
    if (name != fn->end() && name->is_string()) shape.tool_names.push_back(name->get<std::string>());
  }
  shape.id_seed = unique;
  const bool plain = format.family == ChatFamily::kGeneric && format.think_start.empty() &&
                     shape.forced == ForcedTools::kNone;
  if (plain) return std::nullopt;
  return shape;
}

}  // namespace

std::optional<Duration> effective_timeout(std::optional<Duration> requested, std::optional<Duration> fallback) {
  if (!requested) return fallback;
  if (!fallback) return requested;
  return std::min(*requested, *fallback);
}

awaitable<bool> generate(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req, ApiFront& front,
                         const ExtraHeaders& headers) {
  const ServedModel& m = *s.model();
  const TimePoint arrived = m.clock.now();
  const bool keep = req.keep_alive();
  const ErrorStyle style = front.error_style();
  auto fail = [&](const ApiError& e, bool keep_alive) {
    return write_error(stream, req.version(), e, keep_alive, headers, style);
  };
  InFlightSlot slot(s);
  if (const std::optional<ApiError> e = slot.refusal()) co_return co_await fail(*e, keep && e->status != 503);
  ApiResult<OpenAiRequest> parsed = front.parse(req.body());
  if (auto* e = std::get_if<ApiError>(&parsed)) co_return co_await fail(*e, keep);
  OpenAiRequest& r = std::get<OpenAiRequest>(parsed);
  const Endpoint endpoint = r.endpoint;
  const uint64_t unique = (static_cast<uint64_t>(s.created) << 24) + s.next_response++;
  const FollowOptions follow{.streaming = r.stream,
                             .logprobs = r.engine.logprobs.has_value(),
                             .prompt_logprobs = r.engine.prompt_logprobs.has_value(),
                             .write_timeout = 2 * s.options.slow_client_timeout,
                             .headers = headers,
                             .error_style = style};
  const int32_t n = r.n;
  const bool has_seed = r.has_seed;
  const AgentFields agent = r.agent;
  // vLLM's convention: `model` naming a loaded LoRA adapter runs it.
  const std::optional<AdapterRegistry::Entry> adapter = m.lora.adapter_for_model(r.model);
  // With adapters served, a name that is neither the model nor an adapter
  // (a typo, an unloaded adapter) is refused rather than run on the base.
  if (!adapter && m.lora.max_loras > 0 && !r.model.empty() && r.model != s.options.model_name) {
    co_return co_await fail(http_error(404, fmt::format("The model '{}' does not exist.", r.model), "model_not_found"),
                            keep);
  }
  ApiResult<std::vector<EngineRequest>> built = m.prompts.build(std::move(r));
  if (auto* e = std::get_if<ApiError>(&built)) co_return co_await fail(*e, keep);
  std::vector<EngineRequest>& prompts = std::get<std::vector<EngineRequest>>(built);
  if (std::optional<ApiError> e = context_error(front.prompt_param(endpoint), prompts, m.engine.limits())) {
    co_return co_await fail(*e, keep);
  }
  // Every prompt of a request has its cache_salt, so one tenant.
  const std::string tenant = request_tenant(s.options.api_keys, req, prompts[0].cache_salt);
  const auto num_engine_requests = static_cast<int32_t>(prompts.size()) * n;
  if (std::optional<ApiError> e = s.tenant_gate.admit(tenant, num_engine_requests, m.engine.tenant_kv_blocks(tenant))) {
    const ExtraHeaders retry = with_header(headers, "Retry-After", std::to_string(kQuotaRetryAfterSeconds));
    co_return co_await write_error(stream, req.version(), *e, keep, retry, style);
  }
  const TenantTicket ticket(&s.tenant_gate, tenant, num_engine_requests);
  for (EngineRequest& er : prompts) {
    er.timeout = effective_timeout(er.timeout, s.options.request_timeout);
    er.tenant = tenant;
    // Without a seed each request draws its own stream.
    if (!has_seed) er.sampling.seed = unique * 0x9E3779B97F4A7C15ull;
    if (adapter.has_value()) {
      er.adapter = adapter->adapter;
      er.adapter_id = adapter->id;
    }
  }
  ResponseMeta meta{.endpoint = endpoint,
                    .id = front.response_id(unique),
                    .created = static_cast<int64_t>(std::time(nullptr)),
                    .model = adapter.has_value() ? adapter->name : s.options.model_name,
                    .system_fingerprint = s.options.system_fingerprint,
                    .tokenizer = &m.prompts.tokenizer(),
                    .shape = chat_shape(endpoint, m.prompts.chat_format(), prompts[0], agent, unique),
                    .choices_per_prompt = static_cast<size_t>(n),
                    .num_choices = prompts.size() * static_cast<size_t>(n),
                    .num_prompt_tokens = prompts[0].prompt.size()};
  // The chat output parsers see the markers even where they are control tokens.
  for (EngineRequest& er : prompts) er.render_special_tokens = meta.shape.has_value();
  Result<std::vector<RequestHandle>> handles = submit_choices(m.engine, std::move(prompts), n);
  if (!handles.ok()) co_return co_await fail(submit_error(handles.status()), keep);
  std::vector<RequestTimer> timers;
  for (size_t i = 0; i < handles->size(); ++i) {
    timers.emplace_back(s.metrics, m.clock, arrived);
    if (adapter.has_value()) timers.back().set_adapter(adapter->name);
  }
  const std::unique_ptr<ResponseEncoder> encoder = front.encoder(std::move(meta), follow.streaming);
  const bool more = co_await follow_request(stream, req, std::move(*handles), *encoder, follow, timers);
  co_return more && !s.stopping.load();
}

}  // namespace met
