// ResponsesFront: the ApiFront of POST /v1/responses (OpenAI's Responses
// API): the body translated by parse_responses_request (previous_response_id
// looked up in the server's ResponseStore), ids "resp_…", and the response
// written by ResponsesEncoder, which puts a completed or incomplete response
// into the store (unless `store` is false) with its conversation: the
// earlier items, this input, this output. Also GET /v1/responses/{id}.
// Threading: one front per HTTP request, on its strand; the store is shared
// (thread-safe). Tested through `met serve` by
// tests/server/serve_responses_test.cc and the OpenAI Node client test
// (tests/server/openai_client/responses.mjs).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/api_front.h"
#include "server/response_store.h"

namespace met {

inline constexpr std::string_view kResponsesPath = "/v1/responses";

class ResponsesFront final : public ApiFront {
 public:
  explicit ResponsesFront(ResponseStore& store) : store_(store) {}

  ApiResult<OpenAiRequest> parse(std::string_view body) override;
  std::string response_id(uint64_t unique) const override;
  std::optional<std::string> prompt_param(Endpoint) const override { return "input"; }
  std::unique_ptr<ResponseEncoder> encoder(ResponseMeta meta, bool streaming) override;

 private:
  ResponseStore& store_;
  nlohmann::ordered_json echo_;
  nlohmann::ordered_json conversation_;
  bool store_response_ = true;
  bool reasoning_summary_ = false;
};

// The id in a GET /v1/responses/{id} path; nullopt for another path.
std::optional<std::string_view> stored_response_id(std::string_view target);
// The stored response `id`, or a 404 saying it is not found.
ApiResult<nlohmann::ordered_json> stored_response(const ResponseStore& store, std::string_view id);

}  // namespace met
