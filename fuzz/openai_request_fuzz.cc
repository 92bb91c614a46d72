// openai_request_fuzz: libFuzzer target for parse_openai_request
// (src/server/openai_request.h), the parser every HTTP request body goes
// through. The first byte picks the endpoint; the rest is the body. Checks,
// beyond "no crash, no hang, no sanitizer report": a refusal is a 4xx with a
// non-empty message, and an accepted request has exactly one prompt form.
// Threading: libFuzzer's thread. Built by fuzz/CMakeLists.txt (MET_FUZZ=ON).
#include <cstdint>
#include <string_view>

#include "core/check.h"
#include "server/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const met::Endpoint endpoint = (data[0] & 1) != 0 ? met::Endpoint::kChatCompletions : met::Endpoint::kCompletions;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  auto parsed = met::parse_openai_request(endpoint, body);
  if (const auto* err = std::get_if<met::ApiError>(&parsed)) {
    MET_CHECK(err->status >= 400 && err->status < 500, "status {}", err->status);
    MET_CHECK(!err->message.empty(), "an error without a message");
    return 0;
  }
  const met::OpenAiRequest& r = std::get<met::OpenAiRequest>(parsed);
  const bool completion = !r.prompts.empty() && r.prompts.size() * static_cast<size_t>(r.n) <= 32;
  MET_CHECK(completion != r.messages.is_array(), "{} prompts and {} messages", r.prompts.size(),
            r.messages.is_array() ? "some" : "no");
  return 0;
}
