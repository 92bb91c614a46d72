// format_markers: see format_markers.h. Read off the chat templates in
// ../shared/chat-templates.
// Tested by tests/chat/format_markers_test.cc.
#include "chat/output/format_markers.h"

#include <algorithm>

namespace met {
namespace {

struct ToolMarkers {
  std::string start;
  std::string end;
  std::vector<std::string> others;  // further special strings of the family
};

ToolMarkers tool_markers(ChatFamily family) {
  switch (family) {
    case ChatFamily::kGeneric: return {};
    case ChatFamily::kHermes:
    case ChatFamily::kQwen3Coder:
    case ChatFamily::kGlm45: return {"<tool_call>", "</tool_call>", {}};
    case ChatFamily::kSeedOss: return {"<seed:tool_call>", "</seed:tool_call>", {}};
    case ChatFamily::kLlama3: return {"<|python_tag|>", "", {"<|eom_id|>", "<|eot_id|>"}};
    case ChatFamily::kMistral: return {"[TOOL_CALLS]", "", {"[ARGS]", "[CALL_ID]"}};
    case ChatFamily::kDeepSeekR1:
    case ChatFamily::kDeepSeekV31:
      return {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
              {"<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"}};
    case ChatFamily::kDeepSeekV32: return {"<｜DSML｜function_calls>", "</｜DSML｜function_calls>", {}};
    case ChatFamily::kMiniMaxM2: return {"<minimax:tool_call>", "</minimax:tool_call>", {}};
    case ChatFamily::kGptOss:
      return {"", "<|call|>", {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|constrain|>"}};
    case ChatFamily::kFunctionaryV31: return {"<function=", "</function>", {"<|python_tag|>"}};
    case ChatFamily::kFunctionaryV32: return {">>>", "", {}};
    case ChatFamily::kCommandR: return {"Action:", "", {}};
    case ChatFamily::kCommandR7B:
      return {"<|START_ACTION|>", "<|END_ACTION|>", {"<|START_RESPONSE|>", "<|END_RESPONSE|>"}};
    case ChatFamily::kKimiK2:
      return {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
              {"<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"}};
    case ChatFamily::kApriel: return {"<tool_calls>", "</tool_calls>", {}};
  }
  return {};
}

// Markers that are text a tokenizer would split (or several special tokens
// in a row, like harmony's "<|channel|>analysis<|message|>"), not one token.
bool is_plain_text_marker(const std::string& marker) {
  if (marker.starts_with("<|") && marker.find("<|", 2) != std::string::npos) return true;
  return marker == "Action:" || marker == ">>>" || marker == "<function=" || marker == "</function>";
}

}  // namespace

FormatMarkers format_markers(const ChatFormat& format) {
  ToolMarkers tools = tool_markers(format.family);
  FormatMarkers markers{format.think_start, format.think_end, tools.start, tools.end, {}};
  std::vector<std::string> all = {format.think_start, format.think_end, tools.start, tools.end};
  all.insert(all.end(), tools.others.begin(), tools.others.end());
  for (std::string& marker : all) {
    if (marker.empty() || is_plain_text_marker(marker)) continue;
    if (std::find(markers.special_strings.begin(), markers.special_strings.end(), marker) !=
        markers.special_strings.end()) {
      continue;
    }
    markers.special_strings.push_back(std::move(marker));
  }
  return markers;
}

}  // namespace met
