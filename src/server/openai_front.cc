// OpenAiFront. Tested through `met serve` by tests/server/http_server_test.cc.
#include "server/openai_front.h"

#include <utility>

namespace met {
namespace {

class OpenAiEncoder final : public ResponseEncoder {
 public:
  OpenAiEncoder(ResponseMeta meta, bool include_usage, size_t num_choices, bool logprobs, bool prompt_logprobs)
      : meta_(meta), sse_(std::move(meta), include_usage, num_choices, logprobs) {
    if (prompt_logprobs) sse_.send_prompt_logprobs();
  }

  std::string start() override { return sse_.start(); }
  std::string encode(size_t index, const StreamEvent& event) override { return sse_.encode(index, event); }
  std::string fail(const ApiError& error) override { return sse_.fail(error); }
  std::string body(std::span<const ChoiceOutput> choices) override {
    return dump_json(completion_body(meta_, choices));
  }

 private:
  ResponseMeta meta_;
  SseEncoder sse_;
};

}  // namespace

ApiResult<OpenAiRequest> OpenAiFront::parse(std::string_view body) {
  ApiResult<OpenAiRequest> r = parse_openai_request(endpoint_, body);
  if (const auto* ok = std::get_if<OpenAiRequest>(&r)) {
    include_usage_ = ok->include_usage;
    logprobs_ = ok->engine.logprobs.has_value();
    prompt_logprobs_ = ok->engine.prompt_logprobs.has_value();
  }
  return r;
}

std::unique_ptr<ResponseEncoder> OpenAiFront::encoder(ResponseMeta meta, bool streaming) {
  (void)streaming;
  const size_t num_choices = meta.num_choices;
  return std::make_unique<OpenAiEncoder>(std::move(meta), include_usage_, num_choices, logprobs_, prompt_logprobs_);
}

}  // namespace met
