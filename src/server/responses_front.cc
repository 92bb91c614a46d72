// ResponsesFront. Tested through `met serve` by
// tests/server/serve_responses_test.cc.
#include "server/responses_front.h"

#include <fmt/format.h>

#include <utility>

#include "server/responses_encoder.h"
#include "server/responses_request.h"

namespace met {

ApiResult<OpenAiRequest> ResponsesFront::parse(std::string_view body) {
  auto previous = [this](const std::string& id) -> std::optional<nlohmann::ordered_json> {
    std::optional<StoredResponse> r = store_.get(id);
    if (!r) return std::nullopt;
    return std::move(r->conversation);
  };
  auto item = [this](const std::string& id) { return store_.find_item(id); };
  ApiResult<ResponsesRequest> r = parse_responses_request(body, previous, item);
  if (auto* e = std::get_if<ApiError>(&r)) return std::move(*e);
  ResponsesRequest& ok = std::get<ResponsesRequest>(r);
  echo_ = std::move(ok.echo);
  conversation_ = std::move(ok.conversation);
  store_response_ = ok.store;
  reasoning_summary_ = ok.reasoning_summary;
  return std::move(ok.chat);
}

std::string ResponsesFront::response_id(uint64_t unique) const { return make_responses_id(unique); }

std::unique_ptr<ResponseEncoder> ResponsesFront::encoder(ResponseMeta meta, bool streaming) {
  (void)streaming;
  ResponseDone on_done;
  if (store_response_) {
    on_done = [&store = store_, conversation = std::move(conversation_)](const nlohmann::ordered_json& response) {
      StoredResponse entry{response, conversation};
      for (const auto& item : response["output"]) entry.conversation.push_back(item);
      store.put(response["id"].get<std::string>(), std::move(entry));
    };
  }
  return std::make_unique<ResponsesEncoder>(std::move(meta), std::move(echo_), reasoning_summary_,
                                            std::move(on_done));
}

std::optional<std::string_view> stored_response_id(std::string_view target) {
  const std::string prefix = std::string(kResponsesPath) + "/";
  if (target.size() <= prefix.size() || target.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view id = target.substr(prefix.size());
  if (id.find('/') != std::string_view::npos) return std::nullopt;
  return id;
}

ApiResult<nlohmann::ordered_json> stored_response(const ResponseStore& store, std::string_view id) {
  std::optional<StoredResponse> r = store.get(std::string(id));
  if (!r) return http_error(404, fmt::format("Response with id '{}' not found.", id));
  return std::move(r->response);
}

}  // namespace met
