// MessagesFront. Tested through `met serve` by tests/server/serve_messages_test.cc.
#include "server/messages_front.h"

#include <utility>

#include "server/messages_encoder.h"
#include "server/messages_request.h"

namespace met {

ApiResult<OpenAiRequest> MessagesFront::parse(std::string_view body) {
  ApiResult<OpenAiRequest> r = parse_messages_request(body, MessagesCall::kCreate);
  if (const auto* ok = std::get_if<OpenAiRequest>(&r)) stop_sequences_ = ok->engine.stop_strings;
  return r;
}

std::string MessagesFront::response_id(uint64_t unique) const { return make_message_id(unique); }

std::unique_ptr<ResponseEncoder> MessagesFront::encoder(ResponseMeta meta, bool streaming) {
  (void)streaming;
  return std::make_unique<MessagesEncoder>(std::move(meta), stop_sequences_);
}

ApiResult<nlohmann::ordered_json> count_message_tokens(const PromptBuilder& prompts, std::string_view body) {
  ApiResult<OpenAiRequest> r = parse_messages_request(body, MessagesCall::kCountTokens);
  if (auto* e = std::get_if<ApiError>(&r)) return *e;
  ApiResult<std::vector<EngineRequest>> built = prompts.build(std::move(std::get<OpenAiRequest>(r)));
  if (auto* e = std::get_if<ApiError>(&built)) return to_messages_error(std::move(*e));
  return nlohmann::ordered_json{{"input_tokens", std::get<std::vector<EngineRequest>>(built).front().prompt.size()}};
}

}  // namespace met
