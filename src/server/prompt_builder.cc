// PromptBuilder. Tested by tests/server/prompt_builder_test.cc.
#include "server/prompt_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "chat/output/format_detection.h"
#include "chat/output/format_markers.h"
#include "chat/reasoning_field.h"
#include "chat/tool_call_arguments.h"
#include "server/harmony_controls.h"
#include "server/output_controls.h"

namespace met {
namespace {

// Token ids a request names (logit_bias, allowed_token_ids) must exist.
std::optional<ApiError> check_vocab_ids(const SamplingParams& s, size_t vocab_size) {
  for (const LogitBias& b : s.logit_bias) {
    if (static_cast<size_t>(b.token) >= vocab_size) {
      return invalid_request("logit_bias", fmt::format("'logit_bias' names token {}, outside the vocabulary of {}",
                                                       b.token, vocab_size));
    }
  }
  for (TokenId t : s.allowed_token_ids.value_or(std::vector<TokenId>{})) {
    if (static_cast<size_t>(t) >= vocab_size) {
      return invalid_request("allowed_token_ids", fmt::format("'allowed_token_ids' holds {}, outside the "
                                                              "vocabulary of {}",
                                                              t, vocab_size));
    }
  }
  return std::nullopt;
}

// bad_words as vLLM bans them: each word's tokens as written and with a
// leading space (the form it takes after another word); a DRY breaker acts
// through every token its text encodes to.
void tokenize_sampling_text(const Tokenizer& tokenizer, const SamplingText& text, SamplingParams& s) {
  for (const std::string& word : text.bad_words) {
    for (const std::string& form : {word, " " + word}) {
      std::vector<TokenId> ids = tokenizer.encode(form, EncodeOptions{.add_special = false});
      if (!ids.empty() && std::find(s.bad_words.begin(), s.bad_words.end(), ids) == s.bad_words.end()) {
        s.bad_words.push_back(std::move(ids));
      }
    }
  }
  for (const std::string& breaker : text.dry_sequence_breakers) {
    for (TokenId t : tokenizer.encode(breaker, EncodeOptions{.add_special = false})) {
      s.dry_sequence_breakers.push_back(t);
    }
  }
}

std::vector<std::string> control_token_texts(const Vocab& vocab) {
  std::vector<std::string> out;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const TokenData& t = vocab.token(static_cast<TokenId>(i));
    if (t.kind == TokenKind::kControl || t.kind == TokenKind::kUserDefined) out.push_back(t.text);
  }
  return out;
}

}  // namespace

PromptBuilder::PromptBuilder(const Tokenizer& tokenizer, std::optional<ChatTemplate> chat_template,
                             RequestLimits limits, std::string no_template_reason, SamplingDefaults sampling)
    : tokenizer_(tokenizer),
      chat_template_(std::move(chat_template)),
      limits_(limits),
      bos_text_(tokenizer.vocab().text_or_empty(tokenizer.vocab().special().bos)),
      eos_text_(tokenizer.vocab().text_or_empty(tokenizer.vocab().special().eos)),
      no_template_reason_(std::move(no_template_reason)),
      sampling_defaults_(sampling) {
  if (chat_template_) {
    chat_format_ = detect_chat_format(chat_template_->source(), control_token_texts(tokenizer.vocab()));
    object_arguments_ = template_wants_object_arguments(*chat_template_);
    reasoning_as_thinking_ = template_reads_thinking(*chat_template_);
  }
}

ApiResult<std::string> PromptBuilder::chat_text(const OpenAiRequest& request, bool add_generation_prompt) const {
  if (!chat_template_) {
    std::string why = no_template_reason_.empty() ? "" : fmt::format(" ({})", no_template_reason_);
    return invalid_request("messages", fmt::format("this model has no usable chat template{}; use /v1/completions "
                                                   "or start met serve with --chat-template FILE",
                                                   why));
  }
  nlohmann::ordered_json context;
  // chat_template_kwargs first, so the request's own fields win.
  for (const auto& [key, value] : request.agent.chat_template_kwargs.items()) context[key] = value;
  // History tool calls' arguments in the form this template reads.
  context["messages"] = with_arguments_as(request.messages, object_arguments_);
  if (reasoning_as_thinking_) context["messages"] = with_reasoning_as_thinking(context["messages"]);
  if (!request.agent.tools.empty()) context["tools"] = request.agent.tools;
  if (request.agent.reasoning_effort) context["reasoning_effort"] = *request.agent.reasoning_effort;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = bos_text_;
  context["eos_token"] = eos_text_;
  Result<std::string> text = chat_template_->render(context);
  if (!text.ok()) {
    return invalid_request("messages",
                           fmt::format("the chat template refused the messages: {}", text.status().message()));
  }
  if (add_generation_prompt) *text += harmony_prompt_suffix(chat_format_, tokenizer_, *text, request.agent);
  return std::move(*text);
}

std::vector<TokenId> PromptBuilder::chat_ids(const std::string& text, bool add_special) const {
  std::vector<TokenId> ids = tokenizer_.encode(text, EncodeOptions{.add_special = add_special, .parse_special = true});
  // A template that writes the BOS itself must not get a second one.
  const std::optional<TokenId> bos = tokenizer_.vocab().special().bos;
  if (bos && ids.size() >= 2 && ids[0] == *bos && ids[1] == *bos) ids.erase(ids.begin());
  return ids;
}

ApiResult<std::vector<EngineRequest>> PromptBuilder::build(OpenAiRequest request) const {
  std::vector<EngineRequest> out;
  if (request.endpoint == Endpoint::kChatCompletions) {
    ApiResult<EngineRequest> r = build_one(request, nullptr);
    if (auto* e = std::get_if<ApiError>(&r)) return *e;
    out.push_back(std::move(std::get<EngineRequest>(r)));
    return out;
  }
  for (const CompletionPrompt& p : request.prompts) {
    ApiResult<EngineRequest> r = build_one(request, &p);
    if (auto* e = std::get_if<ApiError>(&r)) return *e;
    out.push_back(std::move(std::get<EngineRequest>(r)));
  }
  return out;
}

ApiResult<EngineRequest> PromptBuilder::build_one(const OpenAiRequest& request, const CompletionPrompt* prompt) const {
  EngineRequest r = request.engine;
  apply_sampling_defaults(sampling_defaults_, request.sampling_given, r.sampling);
  if (auto e = check_vocab_ids(r.sampling, tokenizer_.vocab().size())) return *e;
  tokenize_sampling_text(tokenizer_, request.sampling_text, r.sampling);
  if (request.prediction) r.prediction = tokenizer_.encode(*request.prediction, EncodeOptions{.add_special = false});
  std::string prompt_text;
  if (request.endpoint == Endpoint::kChatCompletions) {
    ApiResult<std::string> text = chat_text(request);
    if (auto* e = std::get_if<ApiError>(&text)) return *e;
    prompt_text = std::move(std::get<std::string>(text));
    r.prompt = chat_ids(prompt_text);
    r.max_tokens = request.max_tokens.value_or(std::max(limits_.max_seq_len, 1));
  } else {
    if (const auto* ids = std::get_if<std::vector<TokenId>>(prompt)) {
      r.prompt = *ids;
    } else {
      r.prompt = tokenizer_.encode(std::get<std::string>(*prompt), EncodeOptions{.add_special = true});
    }
    r.max_tokens = request.max_tokens.value_or(kDefaultCompletionMaxTokens);
  }
  if (r.prompt.empty()) {
    return invalid_request(request.endpoint == Endpoint::kChatCompletions ? "messages" : "prompt",
                           "the prompt is empty and the model adds no BOS token");
  }
  if (auto e = add_output_controls(request, prompt_text, r)) return *e;
  return r;
}

std::optional<ApiError> PromptBuilder::add_output_controls(const OpenAiRequest& request,
                                                           std::string_view prompt_text, EngineRequest& r) const {
  std::variant<std::shared_ptr<const Grammar>, ApiError> grammar = build_output_grammar(request.agent);
  if (auto* e = std::get_if<ApiError>(&grammar)) return *e;
  r.grammar = std::move(std::get<std::shared_ptr<const Grammar>>(grammar));
  r.grammar_field = output_grammar_field(request.agent);
  if (request.endpoint != Endpoint::kChatCompletions) return std::nullopt;
  r.thinking = chat_format_.family == ChatFamily::kGptOss
                   ? harmony_thinking_control(chat_format_, tokenizer_, prompt_text, request.agent)
                   : thinking_control(chat_format_, tokenizer_, prompt_text, request.agent.thinking_budget);
  if (request.agent.thinking_budget && !r.thinking) {
    return invalid_request("thinking_budget", "this model has no think markers that are single tokens");
  }
  if (r.thinking) {
    r.thinking->spontaneous_budget = request.agent.spontaneous_thinking_budget;
    r.thinking->watchdog = request.agent.think_watchdog;
  }
  if (r.grammar == nullptr) {
    auto strict = strict_tool_grammar(request.agent, chat_format_, tokenizer_);
    if (auto* e = std::get_if<ApiError>(&strict)) return *e;
    r.triggered_grammar = std::move(std::get<std::optional<EngineRequest::TriggeredGrammar>>(strict));
  }
  // tool_choice "none" with tools given: the model cannot open a call.
  if (!request.agent.tools.empty() && request.agent.tool_choice == ToolChoice::kNone) {
    if (std::optional<TokenId> start = marker_token(tokenizer_, format_markers(chat_format_).tool_call_start)) {
      r.sampling.logit_bias.push_back(LogitBias{.token = *start, .bias = -100.0f});
    }
  }
  return std::nullopt;
}

}  // namespace met
