// PromptBuilder. Tested by tests/server/prompt_builder_test.cc.
#include "server/prompt_builder.h"

#include <fmt/format.h>

#include <utility>

namespace met {
namespace {

std::string token_text(const Vocab& vocab, std::optional<TokenId> id) {
  return id && vocab.contains(*id) ? vocab.token(*id).text : std::string();
}

}  // namespace

PromptBuilder::PromptBuilder(const Tokenizer& tokenizer, std::optional<ChatTemplate> chat_template,
                             RequestLimits limits, std::string no_template_reason)
    : tokenizer_(tokenizer),
      chat_template_(std::move(chat_template)),
      limits_(limits),
      bos_text_(token_text(tokenizer.vocab(), tokenizer.vocab().special().bos)),
      eos_text_(token_text(tokenizer.vocab(), tokenizer.vocab().special().eos)),
      no_template_reason_(std::move(no_template_reason)) {}

ApiResult<std::vector<TokenId>> PromptBuilder::chat_prompt(const OpenAiRequest& request) const {
  if (!chat_template_) {
    std::string why = no_template_reason_.empty() ? "" : fmt::format(" ({})", no_template_reason_);
    return invalid_request("messages", fmt::format("this model has no usable chat template{}; use /v1/completions "
                                                   "or start met serve with --chat-template FILE",
                                                   why));
  }
  nlohmann::ordered_json context;
  context["messages"] = request.messages;
  context["add_generation_prompt"] = true;
  context["bos_token"] = bos_text_;
  context["eos_token"] = eos_text_;
  Result<std::string> text = chat_template_->render(context);
  if (!text.ok()) {
    return invalid_request("messages",
                           fmt::format("the chat template refused the messages: {}", text.status().message()));
  }
  std::vector<TokenId> ids = tokenizer_.encode(*text, EncodeOptions{.add_special = true, .parse_special = true});
  // A template that writes the BOS itself must not get a second one.
  const std::optional<TokenId> bos = tokenizer_.vocab().special().bos;
  if (bos && ids.size() >= 2 && ids[0] == *bos && ids[1] == *bos) ids.erase(ids.begin());
  return ids;
}

ApiResult<EngineRequest> PromptBuilder::build(OpenAiRequest request) const {
  EngineRequest r = std::move(request.engine);
  if (request.endpoint == Endpoint::kChatCompletions) {
    ApiResult<std::vector<TokenId>> ids = chat_prompt(request);
    if (auto* e = std::get_if<ApiError>(&ids)) return *e;
    r.prompt = std::move(std::get<std::vector<TokenId>>(ids));
    r.max_tokens = request.max_tokens.value_or(std::max(limits_.max_seq_len, 1));
  } else {
    if (request.prompt_ids) {
      r.prompt = std::move(*request.prompt_ids);
    } else {
      r.prompt = tokenizer_.encode(request.prompt_text.value_or(""), EncodeOptions{.add_special = true});
    }
    r.max_tokens = request.max_tokens.value_or(kDefaultCompletionMaxTokens);
  }
  if (r.prompt.empty()) {
    return invalid_request(request.endpoint == Endpoint::kChatCompletions ? "messages" : "prompt",
                           "the prompt is empty and the model adds no BOS token");
  }
  return r;
}

}  // namespace met
