// OpenAiFront: the ApiFront of OpenAI's POST /v1/completions and
// /v1/chat/completions: the body parsed by parse_openai_request, ids
// "cmpl-…"/"chatcmpl-…", and the response written by SseEncoder (streamed,
// with stream_options.include_usage) or completion_body.
// Threading: one per HTTP request, on its strand. Tested through
// `met serve` by tests/server/http_server_test.cc and the OpenAI Node client
// test (tests/server/openai_client).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/api_front.h"

namespace met {

class OpenAiFront final : public ApiFront {
 public:
  explicit OpenAiFront(Endpoint endpoint) : endpoint_(endpoint) {}

  ApiResult<OpenAiRequest> parse(std::string_view body) override;
  std::string response_id(uint64_t unique) const override { return make_response_id(endpoint_, unique); }
  std::unique_ptr<ResponseEncoder> encoder(ResponseMeta meta, bool streaming) override;

 private:
  Endpoint endpoint_;
  bool include_usage_ = false;
  bool logprobs_ = false;
  bool prompt_logprobs_ = false;
};

}  // namespace met
