// Output controls: what a chat or completion request's issue-9 fields ask of
// the engine, for the model's chat format:
//   - the grammar its output must follow: response_format (json_object,
//     json_schema), llama.cpp's `grammar`/`json_schema`, or, for
//     tool_choice "required" or a named function, vLLM's forced tool calls
//     (the same for every model family, no tool-call markup): a named
//     function's output is its arguments object, whose schema is the tool's
//     parameters; "required" is a JSON array of at least one {"name",
//     "parameters"} call, and at most one with parallel_tool_calls false
//     (tool_calls are made from it by the response);
//   - the thinking control (think markers as token ids, whether the prompt
//     left generation inside thinking, thinking_budget);
//   - tool_choice "none": the family's tool-call start token banned.
// A grammar that does not compile is a 400 with the compiler's reason.
// Threading: pure functions of their inputs. Tested by
// tests/server/output_controls_test.cc.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <variant>

#include "chat/output/chat_format.h"
#include "grammar/grammar.h"
#include "request/engine_request.h"
#include "request/thinking_config.h"
#include "server/agent_fields.h"
#include "server/api_error.h"
#include "tokenizer/tokenizer.h"

namespace met {

// The compiled grammar the request asks for (nullptr: none).
std::variant<std::shared_ptr<const Grammar>, ApiError> build_output_grammar(const AgentFields& agent);
// The request field that grammar comes from (EngineRequest::grammar_field).
const char* output_grammar_field(const AgentFields& agent);

// The thinking control for a prompt rendered as `prompt_text`; nullopt when
// the format has no think markers that are single tokens of the vocab.
std::optional<ThinkingConfig> thinking_control(const ChatFormat& format, const Tokenizer& tokenizer,
                                               std::string_view prompt_text, std::optional<int32_t> budget);

// tool_choice "auto" with a `strict` tool, for the Hermes/Qwen format: once
// the model opens a call (<tool_call>), its body {"name", "arguments"} must
// name a tool and, for a strict one, follow its parameters schema, up to
// </tool_call>; then the text runs free again. nullopt when nothing is strict,
// the format is another, or <tool_call> is not one token.
std::variant<std::optional<EngineRequest::TriggeredGrammar>, ApiError> strict_tool_grammar(
    const AgentFields& agent, const ChatFormat& format, const Tokenizer& tokenizer);

// The single token a marker encodes to, if it is one.
std::optional<TokenId> marker_token(const Tokenizer& tokenizer, std::string_view marker);

}  // namespace met
