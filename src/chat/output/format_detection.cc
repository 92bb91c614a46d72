// Format detection: see format_detection.h. Each rule names a string only the
// family's templates write; the order matters where families share markup
// (Qwen3-Coder's <tool_call><function= before Hermes's <tool_call>).
// Tested by tests/chat/format_detection_test.cc.
#include "chat/output/format_detection.h"

#include <algorithm>

namespace met {
namespace {

bool has(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

ChatFamily detect_family(std::string_view t) {
  if (has(t, "<|channel|>") && has(t, "<|message|>")) return ChatFamily::kGptOss;
  if (has(t, "DSML")) return ChatFamily::kDeepSeekV32;
  if (has(t, "tool▁calls▁begin")) {
    return has(t, "```json") ? ChatFamily::kDeepSeekR1 : ChatFamily::kDeepSeekV31;
  }
  if (has(t, "<|tool_calls_section_begin|>")) return ChatFamily::kKimiK2;
  if (has(t, "<arg_key>")) return ChatFamily::kGlm45;
  if (has(t, "<seed:tool_call>")) return ChatFamily::kSeedOss;
  if (has(t, "<minimax:tool_call>")) return ChatFamily::kMiniMaxM2;
  if (has(t, "<tool_calls>")) return ChatFamily::kApriel;
  if (has(t, "<tool_call>")) return has(t, "<function=") ? ChatFamily::kQwen3Coder : ChatFamily::kHermes;
  if (has(t, "[TOOL_CALLS]")) return ChatFamily::kMistral;
  if (has(t, ">>>all")) return ChatFamily::kFunctionaryV32;
  if (has(t, "<function=")) return ChatFamily::kFunctionaryV31;
  if (has(t, "<|START_ACTION|>")) return ChatFamily::kCommandR7B;
  if (has(t, "Action:") && has(t, "tool_name")) return ChatFamily::kCommandR;
  if (has(t, "<|start_header_id|>") && (has(t, "<|python_tag|>") || has(t, "\"parameters\": "))) {
    return ChatFamily::kLlama3;
  }
  return ChatFamily::kGeneric;
}

bool vocab_has(std::span<const std::string> tokens, std::string_view token) {
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

void set_think_markers(std::string_view t, std::span<const std::string> tokens, ChatFormat& format) {
  const auto use = [&format](std::string start, std::string end) {
    format.think_start = std::move(start);
    format.think_end = std::move(end);
  };
  if (format.family == ChatFamily::kGptOss) return use("<|channel|>analysis<|message|>", "<|end|>");
  if (has(t, "<seed:think>")) return use("<seed:think>", "</seed:think>");
  if (has(t, "[THINK]")) return use("[THINK]", "[/THINK]");
  if (has(t, "<|START_THINKING|>")) return use("<|START_THINKING|>", "<|END_THINKING|>");
  if (has(t, "<think>") || has(t, "</think>")) return use("<think>", "</think>");
  if (vocab_has(tokens, "<think>") && vocab_has(tokens, "</think>")) return use("<think>", "</think>");
}

}  // namespace

ChatFormat detect_chat_format(std::string_view template_source, std::span<const std::string> special_tokens) {
  ChatFormat format;
  format.family = detect_family(template_source);
  set_think_markers(template_source, special_tokens, format);
  return format;
}

bool generation_starts_in_thinking(std::string_view prompt_tail, const ChatFormat& format) {
  if (format.think_start.empty()) return false;
  if (format.family == ChatFamily::kGptOss) return prompt_tail.ends_with(format.think_start);
  const size_t start = prompt_tail.rfind(format.think_start);
  if (start == std::string_view::npos) return false;
  const size_t end = prompt_tail.rfind(format.think_end);
  return end == std::string_view::npos || end < start;
}

}  // namespace met
