// tool_syntax_for: each family's tool-call markup, read off the chat templates
// in ../shared/chat-templates (see chat_format.h for one line per family).
// Tested by tests/chat/json_families_test.cc and xml_families_test.cc.
#include "chat/output/tool_syntax.h"

#include "chat/output/json_span.h"
#include "chat/output/tool_body_json.h"
#include "chat/output/tool_body_xml.h"

namespace met {
namespace {

const CallKeys kNameArguments{};
const CallKeys kToolNameParameters{{"tool_name", "name"}, {"parameters", "arguments"}, false};
const CallKeys kLlamaKeys{{"name"}, {"parameters", "arguments"}, true};

// A body that is one JSON object or array, complete when its brackets close.
std::optional<size_t> json_body_end(std::string_view body, bool at_end) {
  const JsonSpan span = json_span(body);
  switch (span.kind) {
    case JsonSpanKind::kComplete: return span.end;
    case JsonSpanKind::kNotJson: return span.end + 1;  // malformed: close now, keep as content
    case JsonSpanKind::kIncomplete: break;
  }
  return at_end ? std::optional<size_t>(body.size()) : std::nullopt;
}

// "NAME\n{…}" (Functionary v3.2) or "NAME[ARGS]{…}" (Mistral): JSON after `separator`.
BodyEnd json_after(std::string separator) {
  return [separator](std::string_view body, bool at_end) -> std::optional<size_t> {
    const size_t at = body.find(separator);
    if (at == std::string_view::npos) return at_end ? std::optional<size_t>(body.size()) : std::nullopt;
    std::optional<size_t> end = json_body_end(body.substr(at + separator.size()), at_end);
    if (!end) return std::nullopt;
    return at + separator.size() + *end;
  };
}

Result<std::vector<ParsedCall>> split_named(std::string_view body, std::string_view separator) {
  const size_t at = body.find(separator);
  if (at == std::string_view::npos) return invalid_argument("tool call: no '{}' after the name", separator);
  return parse_named_arguments(body.substr(0, at), body.substr(at + separator.size()));
}

// Streams "NAME<separator>{…" once the separator has come.
BodyPreview split_named_preview(std::string separator) {
  return [separator](std::string_view body) -> std::optional<CallPreview> {
    const size_t at = body.find(separator);
    if (at == std::string_view::npos) return std::nullopt;
    return preview_named_arguments(body.substr(0, at), body.substr(at + separator.size()));
  };
}

CallSyntax marked(std::string begin, std::string end, BodyParser parse, BodyPreview preview = nullptr) {
  return CallSyntax{std::move(begin), std::move(end), std::move(parse), nullptr, std::move(preview)};
}

ToolSyntax mistral() {
  CallSyntax call{"[TOOL_CALLS]", "", nullptr, nullptr, nullptr};
  call.parse = [](std::string_view body) -> Result<std::vector<ParsedCall>> {
    if (trim_space(body).starts_with('[')) return parse_call_list(body, kNameArguments);
    const size_t args = body.find("[ARGS]");
    if (args == std::string_view::npos) return invalid_argument("tool call: no [ARGS]");
    std::string_view name = body.substr(0, args);
    name = name.substr(0, name.find("[CALL_ID]"));
    return parse_named_arguments(name, body.substr(args + 6));
  };
  call.preview = [](std::string_view body) -> std::optional<CallPreview> {
    const size_t args = body.find("[ARGS]");
    if (args == std::string_view::npos || trim_space(body).starts_with('[')) return std::nullopt;
    std::string_view name = body.substr(0, args);
    return preview_named_arguments(name.substr(0, name.find("[CALL_ID]")), body.substr(args + 6));
  };
  call.find_end = [args_end = json_after("[ARGS]")](std::string_view body, bool at_end) {
    const size_t first = skip_json_space(body, 0);
    if (first < body.size() && body[first] == '[') return json_body_end(body, at_end);
    return args_end(body, at_end);
  };
  return ToolSyntax{{std::move(call)}, {}, std::nullopt, ""};
}

ToolSyntax llama3() {
  const auto parse = [](std::string_view body) { return parse_call_object(body, kLlamaKeys); };
  return ToolSyntax{{CallSyntax{"<|python_tag|>", "", parse, json_body_end, nullptr}}, {}, 0, ""};
}

ToolSyntax functionary_v31() {
  CallSyntax function = marked(
      "<function=", "</function>", [](std::string_view body) { return split_named(body, ">"); },
      split_named_preview(">"));
  CallSyntax python{"<|python_tag|>", "", nullptr, nullptr, nullptr};
  python.parse = [](std::string_view body) -> Result<std::vector<ParsedCall>> {
    nlohmann::ordered_json args = {{"code", std::string(body)}};
    return std::vector<ParsedCall>{
        ParsedCall{"python", {args.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)}}};
  };
  python.find_end = [](std::string_view body, bool at_end) {
    return at_end ? std::optional<size_t>(body.size()) : std::nullopt;
  };
  return ToolSyntax{{std::move(function), std::move(python)}, {}, std::nullopt, ""};
}

ToolSyntax command_r() {
  CallSyntax call{"Action:", "", nullptr, nullptr, nullptr};
  call.parse = [](std::string_view body) { return parse_call_list(strip_code_fence(body), kToolNameParameters); };
  call.find_end = [](std::string_view body, bool at_end) -> std::optional<size_t> {
    std::string_view rest = trim_space(body);
    const size_t offset = static_cast<size_t>(rest.data() - body.data());
    constexpr std::string_view kFence = "```json";
    if (!at_end && rest.size() < kFence.size() && kFence.starts_with(rest)) return std::nullopt;
    size_t json_from = rest.starts_with("```json") ? 7 : rest.starts_with("```") ? 3 : 0;
    const JsonSpan span = json_span(rest, json_from);
    if (span.kind == JsonSpanKind::kNotJson) return offset + span.end + 1;
    if (span.kind == JsonSpanKind::kIncomplete) return at_end ? std::optional<size_t>(body.size()) : std::nullopt;
    if (json_from == 0) return offset + span.end;
    const size_t fence = skip_json_space(rest, span.end);
    if (rest.compare(fence, 3, "```") == 0) return offset + fence + 3;
    if (fence + 3 > rest.size() && !at_end) return std::nullopt;  // the fence may still come
    return offset + span.end;
  };
  return ToolSyntax{{std::move(call)}, {}, std::nullopt, ""};
}

ToolSyntax named_json(std::string begin, std::string end, std::string separator,
                      std::vector<std::string> dropped) {
  CallSyntax call = marked(
      std::move(begin), std::move(end), [separator](std::string_view body) { return split_named(body, separator); },
      split_named_preview(separator));
  return ToolSyntax{{std::move(call)}, std::move(dropped), std::nullopt, ""};
}

ToolSyntax single(CallSyntax call, std::vector<std::string> dropped = {}) {
  return ToolSyntax{{std::move(call)}, std::move(dropped), std::nullopt, ""};
}

ToolSyntax deepseek_r1() {
  CallSyntax call = marked("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", [](std::string_view body) {
    constexpr std::string_view kSep = "<｜tool▁sep｜>";
    const size_t sep = body.find(kSep);
    if (sep == std::string_view::npos) return Result<std::vector<ParsedCall>>(invalid_argument("tool call: no {}", kSep));
    std::string_view rest = body.substr(sep + kSep.size());
    const size_t newline = std::min(rest.find('\n'), rest.size());
    return parse_named_arguments(rest.substr(0, newline), strip_code_fence(rest.substr(newline)));
  });
  call.preview = [](std::string_view body) -> std::optional<CallPreview> {
    constexpr std::string_view kSep = "<｜tool▁sep｜>";
    const size_t sep = body.find(kSep);
    if (sep == std::string_view::npos) return std::nullopt;
    std::string_view rest = body.substr(sep + kSep.size());
    const size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    std::string_view args = trim_space(rest.substr(newline));
    if (args.starts_with("```")) args.remove_prefix(args.starts_with("```json") ? 7 : 3);
    return preview_named_arguments(rest.substr(0, newline), args);
  };
  return single(std::move(call), {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"});
}

// "functions.NAME:INDEX" → "NAME".
std::string_view kimi_name(std::string_view id) {
  id = trim_space(id);
  if (id.starts_with("functions.")) id.remove_prefix(10);
  return id.substr(0, id.rfind(':'));
}

ToolSyntax kimi_k2() {
  CallSyntax call = marked("<|tool_call_begin|>", "<|tool_call_end|>", [](std::string_view body) {
    constexpr std::string_view kArguments = "<|tool_call_argument_begin|>";
    const size_t at = body.find(kArguments);
    if (at == std::string_view::npos) return Result<std::vector<ParsedCall>>(invalid_argument("tool call: no arguments"));
    return parse_named_arguments(kimi_name(body.substr(0, at)), body.substr(at + kArguments.size()));
  });
  call.preview = [](std::string_view body) -> std::optional<CallPreview> {
    constexpr std::string_view kArguments = "<|tool_call_argument_begin|>";
    const size_t at = body.find(kArguments);
    if (at == std::string_view::npos) return std::nullopt;
    return preview_named_arguments(kimi_name(body.substr(0, at)), body.substr(at + kArguments.size()));
  };
  return single(std::move(call), {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"});
}

// ">>>NAME\n{…}" calls and ">>>all\ntext" content; the prompt ends with ">>>".
// Any line of text looks like "NAME\n", so a call streams only once its
// arguments have begun.
ToolSyntax functionary_v32() {
  CallSyntax call{">>>", "", [](std::string_view body) { return split_named(body, "\n"); }, json_after("\n"),
                  [named = split_named_preview("\n")](std::string_view body) -> std::optional<CallPreview> {
                    std::optional<CallPreview> p = named(body);
                    if (p && p->arguments_prefix.empty()) return std::nullopt;
                    return p;
                  }};
  return ToolSyntax{{std::move(call)}, {">>>all\n"}, std::nullopt, ">>>"};
}

}  // namespace

ToolSyntax tool_syntax_for(ChatFamily family) {
  const auto call_object = [](std::string_view body) { return parse_call_object(body, kNameArguments); };
  switch (family) {
    case ChatFamily::kGeneric: return ToolSyntax{};
    case ChatFamily::kHermes: return single(marked("<tool_call>", "</tool_call>", call_object));
    case ChatFamily::kQwen3Coder:
      return single(marked("<tool_call>", "</tool_call>", parse_function_tags, preview_function_tags));
    case ChatFamily::kSeedOss:
      return single(marked("<seed:tool_call>", "</seed:tool_call>", parse_function_tags, preview_function_tags));
    case ChatFamily::kGlm45:
      return single(marked("<tool_call>", "</tool_call>", parse_arg_key_values, preview_arg_key_values));
    case ChatFamily::kLlama3: return llama3();
    case ChatFamily::kMistral: return mistral();
    case ChatFamily::kDeepSeekR1: return deepseek_r1();
    case ChatFamily::kDeepSeekV31:
      return named_json("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
                        {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"});
    case ChatFamily::kDeepSeekV32:
      return single(marked("<｜DSML｜invoke name=\"", "</｜DSML｜invoke>",
                           [](std::string_view body) { return parse_invoke(body, "｜DSML｜"); },
                           [](std::string_view body) { return preview_invoke(body, "｜DSML｜"); }),
                    {"<｜DSML｜function_calls>", "</｜DSML｜function_calls>"});
    case ChatFamily::kMiniMaxM2:
      return single(marked("<invoke name=\"", "</invoke>", [](std::string_view body) { return parse_invoke(body, ""); },
                           [](std::string_view body) { return preview_invoke(body, ""); }),
                    {"<minimax:tool_call>", "</minimax:tool_call>"});
    case ChatFamily::kKimiK2: return kimi_k2();
    case ChatFamily::kGptOss: return ToolSyntax{};  // HarmonyParser reads channels itself
    case ChatFamily::kFunctionaryV31: return functionary_v31();
    case ChatFamily::kFunctionaryV32: return functionary_v32();
    case ChatFamily::kCommandR: return command_r();
    case ChatFamily::kCommandR7B:
      return single(marked("<|START_ACTION|>", "<|END_ACTION|>",
                           [](std::string_view body) { return parse_call_list(body, kToolNameParameters); }),
                    {"<|START_RESPONSE|>", "<|END_RESPONSE|>"});
    case ChatFamily::kApriel:
      return single(marked("<tool_calls>", "</tool_calls>",
                           [](std::string_view body) { return parse_call_list(body, kNameArguments); }));
  }
  return ToolSyntax{};
}

}  // namespace met
