// MessagesFront: the ApiFront of Anthropic's POST /v1/messages: the body
// translated into the shared chat request (messages_request.h), ids
// "msg_…", Anthropic's error shape, and the response written by
// MessagesEncoder. count_message_tokens answers POST
// /v1/messages/count_tokens with the same translation and prompt building.
// Threading: one front per HTTP request, on its strand. Tested through
// `met serve` by tests/server/serve_messages_test.cc and the Anthropic Node
// client test (tests/server/anthropic_client).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_front.h"
#include "server/prompt_builder.h"

namespace met {

class MessagesFront final : public ApiFront {
 public:
  ApiResult<OpenAiRequest> parse(std::string_view body) override;
  std::string response_id(uint64_t unique) const override;
  ErrorStyle error_style() const override { return ErrorStyle::kAnthropic; }
  std::unique_ptr<ResponseEncoder> encoder(ResponseMeta meta, bool streaming) override;

 private:
  std::vector<std::string> stop_sequences_;
};

// {"input_tokens": N}: the prompt `body` (a Messages body; max_tokens not
// needed) renders to with the model's chat template.
ApiResult<nlohmann::ordered_json> count_message_tokens(const PromptBuilder& prompts, std::string_view body);

}  // namespace met
