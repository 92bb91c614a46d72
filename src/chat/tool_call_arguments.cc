// Tool-call arguments in a chat's history. Tested by
// tests/chat/tool_call_arguments_test.cc.
#include "chat/tool_call_arguments.h"

#include <optional>
#include <string>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kProbeArgs = R"({"met_probe_arg": "met_probe_value"})";

// The probe conversation: a user turn, then an assistant call with `arguments`.
std::optional<std::string> render_probe(const ChatTemplate& t, const Json& arguments) {
  Json call{{"id", "call_probe"}, {"type", "function"},
            {"function", Json{{"name", "met_probe_tool"}, {"arguments", arguments}}}};
  Json messages = Json::array({Json{{"role", "user"}, {"content", "Hi"}},
                               Json{{"role", "assistant"}, {"content", ""}, {"tool_calls", Json::array({call})}}});
  Json tool{{"type", "function"},
            {"function", Json{{"name", "met_probe_tool"}, {"description", "probe"},
                              {"parameters", Json{{"type", "object"}, {"properties", Json::object()}}}}}};
  Json context{{"messages", std::move(messages)}, {"tools", Json::array({tool})}, {"add_generation_prompt", false},
               {"bos_token", ""}, {"eos_token", ""}};
  Result<std::string> out = t.render(context);
  if (!out.ok()) return std::nullopt;
  return std::move(*out);
}

}  // namespace

bool template_wants_object_arguments(const ChatTemplate& t) {
  const std::optional<std::string> as_string = render_probe(t, kProbeArgs);
  if (as_string && as_string->find(R"({"met_probe_arg":)") != std::string::npos) return false;
  const std::optional<std::string> as_object = render_probe(t, Json::parse(kProbeArgs));
  return as_object && as_object->find("met_probe_arg") != std::string::npos;
}

Json with_arguments_as(const Json& messages, bool objects) {
  Json out = messages;
  if (!out.is_array()) return out;
  for (Json& m : out) {
    if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (Json& call : m["tool_calls"]) {
      if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
      Json& fn = call["function"];
      if (!fn.contains("arguments")) continue;
      Json& args = fn["arguments"];
      if (objects && args.is_string()) {
        Json parsed = Json::parse(args.get<std::string>(), nullptr, /*allow_exceptions=*/false);
        if (parsed.is_object()) args = std::move(parsed);
      } else if (!objects && args.is_object()) {
        args = args.dump();
      }
    }
  }
  return out;
}

}  // namespace met
