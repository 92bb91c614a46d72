// TokenizeApi: POST /tokenize and POST /detokenize in vLLM's shapes.
//   /tokenize   {"prompt": "..."[, "add_special_tokens": true]}
//            or {"messages": [...][, "add_generation_prompt": true][, "add_special_tokens": B]}
//            -> {"count": N, "max_model_len": L, "tokens": [...]}
//   /detokenize {"tokens": [ids]} -> {"prompt": "..."}
// A prompt is tokenized as /v1/completions does; messages (with tools and
// chat_template_kwargs) are rendered and tokenized by the same PromptBuilder
// as /v1/chat/completions (special tokens parsed; a BOS added unless the
// template wrote one), so `count` is
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

#include "server/prompt_builder.h"

namespace met {

class TokenizeApi {
 public:
  // Borrows `prompts` (without a chat template, messages get a 400).
  TokenizeApi(const PromptBuilder& prompts, int32_t max_model_len);

  ApiResult<nlohmann::ordered_json> tokenize(std::string_view body) const;
  ApiResult<nlohmann::ordered_json> detokenize(std::string_view body) const;

 private:
  ApiResult<std::vector<TokenId>> tokenize_messages(std::string_view body, const nlohmann::json& obj) const;

  const PromptBuilder& prompts_;
  const Tokenizer& tokenizer_;
  int32_t max_model_len_;
};

}  // namespace met
