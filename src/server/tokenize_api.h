// TokenizeApi: POST /tokenize and POST /detokenize in vLLM's shapes.
//   /tokenize   {"prompt": "..."[, "add_special_tokens": true]}
//            or {"messages": [...][, "add_generation_prompt": true][, "add_special_tokens": B]}
//            -> {"count": N, "max_model_len": L, "tokens": [...]}
//   /detokenize {"tokens": [ids]} -> {"prompt": "..."}
// A prompt is tokenized as /v1/completions does; messages are rendered with
// the chat template and tokenized as /v1/chat/completions does (special
// tokens parsed; a BOS added unless the template wrote one), so `count` is
// the prompt_tokens the generation endpoints would report. With
// "add_special_tokens": false no BOS is added. Messages are checked by the
// chat endpoint's own parser. Detokenizing keeps special tokens' text.
// Invariants: every error is a 400 naming its field (an id outside the
// vocabulary names its index and the valid range).
// Threading: const; any number of threads at once.
// Tested by tests/server/tokenize_api_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "chat/chat_template.h"
#include "server/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace met {

class TokenizeApi {
 public:
  // Borrows `tokenizer`. `chat_template` nullopt: messages get a 400.
  TokenizeApi(const Tokenizer& tokenizer, std::optional<ChatTemplate> chat_template, int32_t max_model_len);

  ApiResult<nlohmann::ordered_json> tokenize(std::string_view body) const;
  ApiResult<nlohmann::ordered_json> detokenize(std::string_view body) const;

 private:
  ApiResult<std::vector<TokenId>> tokenize_messages(std::string_view body, const nlohmann::json& obj) const;

  const Tokenizer& tokenizer_;
  std::optional<ChatTemplate> chat_template_;
  int32_t max_model_len_;
};

}  // namespace met
