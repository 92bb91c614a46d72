// FormatMarkers: a chat format's markers as plain strings, for the scheduler
// to map to token ids: think_end to force when a thinking budget runs out,
// tool_call_start to ban for tool_choice "none", and every special string the
// format's output uses (for make-model's vocabulary).
// Invariants: empty strings mean "none"; special_strings has no duplicates
// and holds every non-empty marker above that is one special token (not
// plain text such as Command R's "Action:").
// Threading: plain values, any thread. Tested by tests/chat/format_markers_test.cc.
#pragma once

#include <string>
#include <vector>

#include "chat/output/chat_format.h"

namespace met {

struct FormatMarkers {
  std::string think_start;
  std::string think_end;
  // What opens the tool calls of a turn (one marker); empty when the family
  // has no single opening marker (Llama's bare JSON, harmony's recipients).
  std::string tool_call_start;
  // What closes a call or the turn's calls; empty when the body delimits itself.
  std::string tool_call_end;
  std::vector<std::string> special_strings;
};

FormatMarkers format_markers(const ChatFormat& format);

}  // namespace met
