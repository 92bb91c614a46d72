// Harmony controls: how met steers gpt-oss's harmony format (ChatFamily::
// kGptOss), whose markers are control tokens a grammar cannot write and whose
// reasoning is a message of its own ("<|channel|>analysis<|message|>…<|end|>"),
// when a request controls the reasoning or the answer: a thinking_budget, a
// forced tool call (tool_choice "required" or named) or a grammar
// (response_format, `grammar`).
//   - The prompt, which the template ends with "<|start|>assistant", gets the
//     analysis header, so the output starts in the reasoning (gpt-oss writes
//     it first anyway) and met can end it.
//   - Ending the reasoning writes "<|end|>" and the answer's header: final
//     ("<|start|>assistant<|channel|>final<|message|>"), a named call in
//     harmony's commentary form ("<|start|>assistant<|channel|>commentary
//     to=functions.NAME <|constrain|>json<|message|>", as gpt-oss writes
//     calls), or, for "required", a commentary message whose body is the
//     calls' JSON array. A budget or the watchdog forces all of it; after the
//     model's own <|end|> met writes the header only when a grammar or a
//     forced call holds the answer (otherwise the model picks its channel).
//   - Other requests keep the template's prompt; the thinking control still
//     counts the reasoning the model opens and closes a looping one.
// Threading: pure functions of their inputs. Tested by
// tests/server/harmony_controls_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chat/output/chat_format.h"
#include "request/thinking_config.h"
#include "server/agent_fields.h"
#include "tokenizer/tokenizer.h"

namespace met {

// What the prompt gets after the template's text: the analysis header, or
// nothing (another format, a request that controls nothing, a prompt that
// does not end with the generation prompt, or markers that are not single
// tokens of the vocab).
std::string harmony_prompt_suffix(const ChatFormat& format, const Tokenizer& tokenizer, std::string_view prompt_text,
                                  const AgentFields& agent);

// The header of the answer after the reasoning (from "<|start|>").
std::string harmony_answer_header(const AgentFields& agent);

// The thinking control of a harmony prompt; nullopt when its markers are not
// single tokens of the vocab. REQUIRES: format.family == ChatFamily::kGptOss.
std::optional<ThinkingConfig> harmony_thinking_control(const ChatFormat& format, const Tokenizer& tokenizer,
                                                       std::string_view prompt_text, const AgentFields& agent);

}  // namespace met
