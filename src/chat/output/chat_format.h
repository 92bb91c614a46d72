// ChatFamily and ChatFormat: which markup a model's output uses for reasoning
// and tool calls. ChatFamily names the tool-call syntax; ChatFormat adds the
// think markers, which vary within a family (Qwen2.5 and Qwen3 share Hermes
// tool calls; only Qwen3 thinks).
// Invariants: think_start and think_end are both empty or both set.
// Threading: plain values, any thread. Tested by tests/chat/format_detection_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace met {

enum class ChatFamily : uint8_t {
  kGeneric,         // no tool-call syntax: everything outside thinking is content
  kHermes,          // Hermes, Qwen2.5, Qwen3: <tool_call>{"name", "arguments"}</tool_call>
  kQwen3Coder,      // <tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>
  kSeedOss,         // the same inside <seed:tool_call>…</seed:tool_call>
  kLlama3,          // {"name", "parameters"} at the start of the message, optional <|python_tag|>
  kMistral,         // [TOOL_CALLS][{…}] and [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}
  kDeepSeekR1,      // <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>
  kDeepSeekV31,     // <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>
  kDeepSeekV32,     // <｜DSML｜invoke name="NAME"><｜DSML｜parameter name="K" string="…">V…
  kMiniMaxM2,       // <minimax:tool_call><invoke name="NAME"><parameter name="K">V…
  kGptOss,          // harmony channels: analysis, commentary to=functions.NAME, final
  kFunctionaryV31,  // <function=NAME>{…}</function>, <|python_tag|>code
  kFunctionaryV32,  // >>>NAME\n{…}, >>>all\ntext
  kCommandR,        // Action: ```json [{"tool_name", "parameters"}] ```
  kCommandR7B,      // <|START_ACTION|>[{"tool_name", "parameters"}]<|END_ACTION|>
  kKimiK2,          // <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>
  kGlm45,           // <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>
  kApriel,          // <tool_calls>[{"name", "arguments"}]</tool_calls>
};

std::string_view chat_family_name(ChatFamily family);

struct ChatFormat {
  ChatFamily family = ChatFamily::kGeneric;
  std::string think_start;  // e.g. "<think>"; empty when the model does not think
  std::string think_end;    // e.g. "</think>"
  bool operator==(const ChatFormat&) const = default;
};

}  // namespace met
