// EmbeddingsApi. Tested by tests/server/embeddings_api_test.cc and
// tests/server/serve_embeddings_test.cc.
#include "server/embeddings_api.h"

#include <fmt/format.h>

#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <cmath>
#include <cstring>

#include "request/request_limits.h"
#include "server/operator_api.h"
#include "server/request_bridge.h"

namespace met {
namespace {

using RequestJson = nlohmann::json;

// One input's token ids: a string tokenized, or an array of ids checked.
ApiResult<std::vector<TokenId>> input_tokens(const RequestJson& v, const std::string& where,
                                             const Tokenizer& tokenizer) {
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    if (text.empty()) return invalid_request("input", fmt::format("{} is an empty string", where));
    return tokenizer.encode(text, EncodeOptions{.add_special = true, .parse_special = false});
  }
  if (!v.is_array() || v.empty()) {
    return invalid_request("input", fmt::format("{} must be a non-empty string or array of token ids", where));
  }
  std::vector<TokenId> ids;
  const auto vocab = static_cast<int64_t>(tokenizer.vocab().size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || v[i].get<int64_t>() >= vocab) {
      return invalid_request("input", fmt::format("{}, token {} is not an id in [0, {})", where, i, vocab));
    }
    ids.push_back(static_cast<TokenId>(v[i].get<int64_t>()));
  }
  return ids;
}

// "input": one string or id array, or an array of them.
ApiResult<std::vector<std::vector<TokenId>>> parse_inputs(const RequestJson& obj, const Tokenizer& tokenizer) {
  const auto it = obj.find("input");
  if (it == obj.end() || it->is_null()) return invalid_request("input", "'input' is required");
  const RequestJson& in = *it;
  const bool many = in.is_array() && !in.empty() && (in[0].is_string() || in[0].is_array());
  std::vector<std::vector<TokenId>> inputs;
  if (!many) {
    ApiResult<std::vector<TokenId>> one = input_tokens(in, "'input'", tokenizer);
    if (auto* e = std::get_if<ApiError>(&one)) return *e;
    inputs.push_back(std::move(std::get<std::vector<TokenId>>(one)));
    return inputs;
  }
  if (in.size() > kMaxEmbeddingInputs) {
    return invalid_request("input", fmt::format("'input' has {} items; at most {}", in.size(), kMaxEmbeddingInputs));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    ApiResult<std::vector<TokenId>> one = input_tokens(in[i], fmt::format("input {}", i), tokenizer);
    if (auto* e = std::get_if<ApiError>(&one)) return *e;
    inputs.push_back(std::move(std::get<std::vector<TokenId>>(one)));
  }
  return inputs;
}

ApiResult<bool> parse_options(const RequestJson& obj, int32_t hidden_size, EmbeddingsRequest& r) {
  if (const auto it = obj.find("model"); it != obj.end() && !it->is_null()) {
    if (!it->is_string()) return invalid_request("model", "'model' must be a string");
    r.model = it->get<std::string>();
  }
  if (const auto it = obj.find("encoding_format"); it != obj.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "float" && *it != "base64")) {
      return invalid_request("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
    }
    r.base64 = *it == "base64";
  }
  if (const auto it = obj.find("dimensions"); it != obj.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > hidden_size) {
      return invalid_request("dimensions",
                             fmt::format("'dimensions' must be an integer from 1 to the model's {}", hidden_size));
    }
    r.dimensions = static_cast<int32_t>(it->get<int64_t>());
  }
  if (const auto it = obj.find("user"); it != obj.end() && !it->is_null() && !it->is_string()) {
    return invalid_request("user", "'user' must be a string");
  }
  return true;
}

// The vector's float32 bytes (little-endian, as x86 holds them) in base64.
std::string base64_floats(std::span<const float> v) {
  using namespace boost::archive::iterators;
  using Encoder = base64_from_binary<transform_width<const char*, 6, 8>>;
  const auto* bytes = reinterpret_cast<const char*>(v.data());
  const size_t n = v.size() * sizeof(float);
  std::string out(Encoder(bytes), Encoder(bytes + n));
  out.append((3 - n % 3) % 3, '=');
  return out;
}

}  // namespace

ApiResult<EmbeddingsRequest> parse_embeddings_request(std::string_view body, const Tokenizer& tokenizer,
                                                     int32_t hidden_size) {
  const RequestJson obj = RequestJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) return invalid_request(std::nullopt, "the body is not valid JSON (or not UTF-8)");
  if (!obj.is_object()) return invalid_request(std::nullopt, "the body must be a JSON object");
  EmbeddingsRequest r;
  ApiResult<bool> options = parse_options(obj, hidden_size, r);
  if (auto* e = std::get_if<ApiError>(&options)) return *e;
  ApiResult<std::vector<std::vector<TokenId>>> inputs = parse_inputs(obj, tokenizer);
  if (auto* e = std::get_if<ApiError>(&inputs)) return *e;
  r.inputs = std::move(std::get<std::vector<std::vector<TokenId>>>(inputs));
  return r;
}

std::vector<float> finish_embedding(std::span<const float> v, std::optional<int32_t> dimensions) {
  const size_t n = dimensions.has_value() ? std::min(v.size(), static_cast<size_t>(*dimensions)) : v.size();
  std::vector<float> out(v.begin(), v.begin() + static_cast<ptrdiff_t>(n));
  double sum = 0.0;
  for (float x : out) sum += static_cast<double>(x) * x;
  if (sum > 0.0) {
    const auto scale = static_cast<float>(1.0 / std::sqrt(sum));
    for (float& x : out) x *= scale;
  }
  return out;
}

nlohmann::ordered_json embeddings_body(const EmbeddingsRequest& r, std::span<const std::vector<float>> vectors,
                                       int32_t prompt_tokens, std::string_view model) {
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    nlohmann::ordered_json item;
    item["object"] = "embedding";
    item["index"] = i;
    if (r.base64) {
      item["embedding"] = base64_floats(vectors[i]);
    } else {
      item["embedding"] = vectors[i];
    }
    data.push_back(std::move(item));
  }
  nlohmann::ordered_json body;
  body["object"] = "list";
  body["data"] = std::move(data);
  body["model"] = model;
  body["usage"] = {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}};
  return body;
}

}  // namespace met

namespace met {
namespace {

// Writes the whole body once every input's vector came (no streaming form).
class EmbeddingsEncoder final : public ResponseEncoder {
 public:
  EmbeddingsEncoder(const EmbeddingsRequest& r, std::string model) : r_(r), model_(std::move(model)) {}
  std::string start() override { return ""; }
  std::string encode(size_t /*index*/, const StreamEvent& /*event*/) override { return ""; }
  std::string fail(const ApiError& /*error*/) override { return ""; }
  std::string body(std::span<const ChoiceOutput> choices) override {
    std::vector<std::vector<float>> vectors;
    int32_t prompt_tokens = 0;
    for (const ChoiceOutput& c : choices) {
      vectors.push_back(finish_embedding(c.finish->embedding, r_.dimensions));
      prompt_tokens += c.finish->usage.prompt_tokens;
    }
    return dump_json(embeddings_body(r_, vectors, prompt_tokens, model_));
  }

 private:
  const EmbeddingsRequest& r_;
  std::string model_;
};

// Submits one engine request per input; on a refusal, cancels those taken
// and names the input.
ApiResult<std::vector<RequestHandle>> submit_inputs(Engine& engine, const EmbeddingsRequest& r, Pooling pooling,
                                                   std::optional<Duration> timeout, const std::string& tenant) {
  std::vector<RequestHandle> handles;
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    EngineRequest er;
    er.prompt = r.inputs[i];
    er.max_tokens = 0;
    er.embed = pooling;
    er.timeout = timeout;
    er.tenant = tenant;
    Result<RequestHandle> h = engine.submit(std::move(er));
    if (!h.ok()) {
      for (RequestHandle& taken : handles) taken.cancel();
      const bool caller = h.status().code() == StatusCode::kInvalidArgument;
      const std::string msg = fmt::format("input {}: {}", i, h.status().message());
      return caller ? invalid_request("input", msg) : http_error(503, msg);
    }
    handles.push_back(std::move(*h));
  }
  return handles;
}

}  // namespace

awaitable<bool> serve_embeddings(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                                 const ExtraHeaders& headers) {
  const ServedModel& m = *s.model();
  const TimePoint arrived = m.clock.now();
  const bool keep = req.keep_alive();
  auto fail = [&](const ApiError& e, bool keep_alive) {
    return write_error(stream, req.version(), e, keep_alive, headers, ErrorStyle::kOpenAi);
  };
  InFlightSlot slot(s);
  if (const std::optional<ApiError> e = slot.refusal()) co_return co_await fail(*e, keep && e->status != 503);
  const EmbeddingInfo info = m.engine.embedding_info();
  const Pooling pooling = s.options.pooling.value_or(info.pooling);
  if (pooling == Pooling::kNone) {
    co_return co_await fail(invalid_request(std::nullopt, "this model's pooling is 'none' (a vector per token); "
                                                          "start met serve with --pooling mean, cls or last"),
                            keep);
  }
  ApiResult<EmbeddingsRequest> parsed = parse_embeddings_request(req.body(), m.prompts.tokenizer(), info.hidden_size);
  if (auto* e = std::get_if<ApiError>(&parsed)) co_return co_await fail(*e, keep);
  const EmbeddingsRequest& r = std::get<EmbeddingsRequest>(parsed);
  const std::string tenant = request_tenant(s.options.api_keys, req, "");
  const auto num_inputs = static_cast<int32_t>(r.inputs.size());
  if (std::optional<ApiError> e = s.tenant_gate.admit(tenant, num_inputs, m.engine.tenant_kv_blocks(tenant))) {
    const ExtraHeaders retry = with_header(headers, "Retry-After", std::to_string(kQuotaRetryAfterSeconds));
    co_return co_await write_error(stream, req.version(), *e, keep, retry, ErrorStyle::kOpenAi);
  }
  const TenantTicket ticket(&s.tenant_gate, tenant, num_inputs);
  ApiResult<std::vector<RequestHandle>> handles =
      submit_inputs(m.engine, r, pooling, s.options.request_timeout, tenant);
  if (auto* e = std::get_if<ApiError>(&handles)) co_return co_await fail(*e, keep);
  std::vector<RequestTimer> timers;
  for (size_t i = 0; i < r.inputs.size(); ++i) timers.emplace_back(s.metrics, m.clock, arrived);
  EmbeddingsEncoder encoder(r, s.options.model_name);
  const FollowOptions follow{.streaming = false,
                             .logprobs = false,
                             .prompt_logprobs = false,
                             .write_timeout = 2 * s.options.slow_client_timeout,
                             .headers = headers,
                             .error_style = ErrorStyle::kOpenAi};
  const bool more = co_await follow_request(stream, req, std::move(std::get<std::vector<RequestHandle>>(handles)),
                                            encoder, follow, timers);
  co_return more && !s.stopping.load();
}

}  // namespace met
