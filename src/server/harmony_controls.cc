// Harmony controls. Tested by tests/server/harmony_controls_test.cc.
#include "server/harmony_controls.h"

#include <fmt/format.h>

#include <vector>

#include "chat/output/format_detection.h"
#include "core/check.h"
#include "server/output_controls.h"

namespace met {
namespace {

constexpr std::string_view kGenerationPrompt = "<|start|>assistant";

// A grammar or a forced tool call holds the answer.
bool holds_answer(const AgentFields& agent) {
  return agent.tool_choice == ToolChoice::kRequired || agent.tool_choice == ToolChoice::kNamed ||
         agent.constraint != OutputConstraint::kNone;
}

std::vector<TokenId> markup_ids(const Tokenizer& tokenizer, std::string_view text) {
  return tokenizer.encode(text, EncodeOptions{.add_special = false, .parse_special = true});
}

// Harmony's markers are single tokens of the vocab (met can force them).
bool has_markers(const ChatFormat& format, const Tokenizer& tokenizer) {
  for (std::string_view m : {std::string_view("<|start|>"), std::string_view("<|channel|>"),
                             std::string_view("<|message|>"), std::string_view(format.think_end)}) {
    if (!marker_token(tokenizer, m)) return false;
  }
  return true;
}

}  // namespace

std::string harmony_prompt_suffix(const ChatFormat& format, const Tokenizer& tokenizer, std::string_view prompt_text,
                                  const AgentFields& agent) {
  const bool controls = agent.thinking_budget.has_value() || holds_answer(agent);
  if (format.family != ChatFamily::kGptOss || !controls || !prompt_text.ends_with(kGenerationPrompt)) return "";
  return has_markers(format, tokenizer) ? format.think_start : "";
}

std::string harmony_answer_header(const AgentFields& agent) {
  switch (agent.tool_choice) {
    case ToolChoice::kNamed:
      return fmt::format("<|start|>assistant<|channel|>commentary to=functions.{} <|constrain|>json<|message|>",
                         agent.tool_choice_name);
    case ToolChoice::kRequired: return "<|start|>assistant<|channel|>commentary<|message|>";
    case ToolChoice::kNone:
    case ToolChoice::kAuto: return "<|start|>assistant<|channel|>final<|message|>";
  }
  return "";
}

std::optional<ThinkingConfig> harmony_thinking_control(const ChatFormat& format, const Tokenizer& tokenizer,
                                                       std::string_view prompt_text, const AgentFields& agent) {
  MET_DCHECK(format.family == ChatFamily::kGptOss, "harmony_thinking_control for another format");
  if (!has_markers(format, tokenizer)) return std::nullopt;
  ThinkingConfig c;
  c.think_start = *marker_token(tokenizer, "<|channel|>");
  c.think_end = *marker_token(tokenizer, format.think_end);
  c.start_sequence = markup_ids(tokenizer, format.think_start);
  c.end_sequence = markup_ids(tokenizer, format.think_end + harmony_answer_header(agent));
  c.end_sequence_after_model_end = holds_answer(agent);
  c.starts_inside = generation_starts_in_thinking(prompt_text, format);
  c.budget = agent.thinking_budget;
  return c;
}

}  // namespace met
