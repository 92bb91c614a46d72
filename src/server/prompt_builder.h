// PromptBuilder: turns a parsed OpenAiRequest into an EngineRequest: the
// completion prompt tokenized (BOS as the vocab says) or taken as ids, or the
// chat messages rendered with the model's chat template
// (add_generation_prompt, bos_token, eos_token, tools, reasoning_effort and
// chat_template_kwargs' keys; history tool calls' arguments and turns'
// reasoning as the template reads them, chat/tool_call_arguments.h and
// chat/reasoning_field.h; for harmony, the analysis header when the request
// controls the reasoning, server/harmony_controls.h) and tokenized with special tokens parsed;
// max_tokens defaults to 16 for completions and to the context for chat (the
// engine caps the output at the context); sampler fields left out take the
// SamplingDefaults (temperature 1 unless the model file recommends another); the output controls
// (grammar, thinking, tool bans: output_controls.h) for the model's format.
// Invariants: a built request's prompt is non-empty.
// Threading: build() is const and may run on many threads at once.
// Tested by tests/server/prompt_builder_test.cc.
#pragma once

#include <optional>
#include <string>

#include "chat/chat_template.h"
#include "chat/output/chat_format.h"
#include "request/engine_request.h"
#include "request/request_limits.h"
#include "server/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace met {

class PromptBuilder {
 public:
  // Borrows `tokenizer`; `chat_template` nullopt: chat requests get a 400
  // that adds `no_template_reason` when given (e.g. the GGUF's template did
  // not parse).
  // `sampling`: what requests that leave sampler fields out get.
  PromptBuilder(const Tokenizer& tokenizer, std::optional<ChatTemplate> chat_template, RequestLimits limits,
                std::string no_template_reason = "", SamplingDefaults sampling = {});

  bool has_chat_template() const { return chat_template_.has_value(); }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // How the model writes reasoning and tool calls (from its template and
  // vocab; generic without a template).
  const ChatFormat& chat_format() const { return chat_format_; }
  const SamplingDefaults& sampling_defaults() const { return sampling_defaults_; }
  // One EngineRequest per prompt (a completion may batch several; chat has
  // one), in order.
  ApiResult<std::vector<EngineRequest>> build(OpenAiRequest request) const;

  // A chat request's messages rendered with the template (tools, kwargs and
  // all, and harmony's analysis header when the request controls reasoning,
  // as build() renders them), and that text's ids: special tokens parsed, a
  // BOS added (`add_special`) unless the template wrote one. Also what POST
  // /tokenize counts.
  ApiResult<std::string> chat_text(const OpenAiRequest& request, bool add_generation_prompt = true) const;
  std::vector<TokenId> chat_ids(const std::string& text, bool add_special = true) const;

 private:
  ApiResult<EngineRequest> build_one(const OpenAiRequest& request, const CompletionPrompt* prompt) const;
  // Grammar, thinking control and tool bans (output_controls.h).
  std::optional<ApiError> add_output_controls(const OpenAiRequest& request, std::string_view prompt_text,
                                              EngineRequest& r) const;

  const Tokenizer& tokenizer_;
  std::optional<ChatTemplate> chat_template_;
  RequestLimits limits_;
  std::string bos_text_;
  std::string eos_text_;
  std::string no_template_reason_;
  SamplingDefaults sampling_defaults_;
  ChatFormat chat_format_;
  bool object_arguments_ = false;  // the template reads tool-call arguments as a mapping
  bool reasoning_as_thinking_ = false;  // the template reads a turn's reasoning from `thinking`
};

}  // namespace met
