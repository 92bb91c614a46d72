// The reasoning of a chat's earlier turns. Tested by
// tests/chat/reasoning_field_test.cc.
#include "chat/reasoning_field.h"

#include <optional>
#include <string>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kProbeThought = "met_probe_thought";

// The probe conversation: a user turn, then an assistant tool call whose
// reasoning is in `field` (a call turn without content, the one turn whose
// analysis gpt-oss's template renders).
std::optional<std::string> render_reasoning_probe(const ChatTemplate& t, const char* field) {
  Json call{{"id", "call_probe"}, {"type", "function"},
            {"function", Json{{"name", "met_probe_tool"}, {"arguments", Json::object()}}}};
  Json assistant{{"role", "assistant"}, {"content", ""}, {field, kProbeThought}, {"tool_calls", Json::array({call})}};
  Json tool{{"type", "function"},
            {"function", Json{{"name", "met_probe_tool"}, {"description", "probe"},
                              {"parameters", Json{{"type", "object"}, {"properties", Json::object()}}}}}};
  Json context{{"messages", Json::array({Json{{"role", "user"}, {"content", "Hi"}}, std::move(assistant)})},
               {"tools", Json::array({tool})}, {"add_generation_prompt", false}, {"bos_token", ""}, {"eos_token", ""}};
  Result<std::string> out = t.render(context);
  if (!out.ok()) return std::nullopt;
  return std::move(*out);
}

bool shows_thought(const std::optional<std::string>& rendered) {
  return rendered && rendered->find(kProbeThought) != std::string::npos;
}

bool non_empty_string(const Json& m, const char* key) {
  const auto it = m.find(key);
  return it != m.end() && it->is_string() && !it->get<std::string>().empty();
}

}  // namespace

bool template_reads_thinking(const ChatTemplate& t) {
  return shows_thought(render_reasoning_probe(t, "thinking")) &&
         !shows_thought(render_reasoning_probe(t, "reasoning_content"));
}

Json with_reasoning_as_thinking(const Json& messages) {
  Json out = messages;
  if (!out.is_array()) return out;
  for (Json& m : out) {
    if (!m.is_object() || m.value("role", "") != "assistant" || m.contains("thinking")) continue;
    if (!non_empty_string(m, "reasoning_content")) continue;
    const auto calls = m.find("tool_calls");
    const bool has_calls = calls != m.end() && calls->is_array() && !calls->empty();
    if (has_calls && non_empty_string(m, "content")) continue;
    m["thinking"] = m["reasoning_content"];
  }
  return out;
}

}  // namespace met
