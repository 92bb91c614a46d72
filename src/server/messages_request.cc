// Anthropic Messages request translation. Tested by
// tests/server/messages_request_test.cc.
#include "server/messages_request.h"

#include <fmt/format.h>

#include <utility>

#include "tokenizer/utf8.h"

namespace met {
namespace {

using namespace json_fields;

ApiError bad_field(const std::string& param, std::string message) { return invalid_request(param, std::move(message)); }

std::string block_type(const Json& block) {
  const Json* t = block.is_object() ? field(block, "type") : nullptr;
  return t != nullptr && t->is_string() ? t->get<std::string>() : "";
}

// A string, or text blocks joined with newlines (system, tool_result content).
MaybeError text_or_blocks(const Json& v, const std::string& param, std::string& out) {
  if (v.is_string()) {
    out = v.get<std::string>();
    return std::nullopt;
  }
  if (!v.is_array()) return bad_field(param, fmt::format("'{}' must be a string or an array of text blocks", param));
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string type = block_type(v[i]);
    const Json* text = type == "text" ? field(v[i], "text") : nullptr;
    if (text == nullptr || !text->is_string()) {
      const std::string at = fmt::format("{}[{}]", param, i);
      if (type == "image" || type == "document") {
        return bad_field(at, fmt::format("'{}' is an {} block; met serves text models: only text blocks are supported",
                                   at, type));
      }
      return bad_field(at, fmt::format("'{}' must be {{\"type\": \"text\", \"text\": string}}", at));
    }
    if (!out.empty()) out += "\n";
    out += text->get<std::string>();
  }
  return std::nullopt;
}

// A text block's text, appended to `out`.
MaybeError block_text(const Json& block, const std::string& at, std::string& out) {
  const Json* text = field(block, "text");
  if (text == nullptr || !text->is_string()) {
    return bad_field(at + ".text", fmt::format("'{}.text' must be a string", at));
  }
  out += text->get<std::string>();
  return std::nullopt;
}

ApiError unsupported_block(const std::string& at, const std::string& type, const char* role) {
  if (type == "image" || type == "document") {
    return bad_field(at + ".type", fmt::format("'{}' is an {} block; met serves text models, so {} content blocks are "
                                         "text, tool_use and tool_result only",
                                         at, type, role));
  }
  return bad_field(at + ".type", fmt::format("'{}.type' \"{}\" is not a content block met takes in a {} message", at,
                                       type, role));
}

// A tool_result block as an OpenAI tool message.
MaybeError tool_message(const Json& block, const std::string& at, Json& out) {
  const Json* id = field(block, "tool_use_id");
  if (id == nullptr || !id->is_string()) {
    return bad_field(at + ".tool_use_id", fmt::format("'{}.tool_use_id' must be a string", at));
  }
  std::string text;
  if (const Json* content = field(block, "content")) {
    MET_API_RETURN_IF_ERROR(text_or_blocks(*content, at + ".content", text));
  }
  bool is_error = false;
  if (MaybeError e = read_bool(block, "is_error", is_error)) return bad_field(at + ".is_error", e->message);
  if (is_error) text = "Error: " + text;
  out = Json{{"role", "tool"}, {"tool_call_id", *id}, {"content", std::move(text)}};
  return std::nullopt;
}

// A user turn: its tool results as tool messages (first: they answer the
// previous turn's calls), then its text as one user message.
MaybeError user_messages(const Json& content, const std::string& at, Json& out) {
  std::string text;
  bool has_text = false;
  for (size_t j = 0; j < content.size(); ++j) {
    const Json& block = content[j];
    const std::string bat = fmt::format("{}.content[{}]", at, j);
    const std::string type = block_type(block);
    if (type == "tool_result") {
      Json tool;
      MET_API_RETURN_IF_ERROR(tool_message(block, bat, tool));
      out.push_back(std::move(tool));
    } else if (type == "text") {
      if (has_text) text += "\n";
      MET_API_RETURN_IF_ERROR(block_text(block, bat, text));
      has_text = true;
    } else {
      return unsupported_block(bat, type, "user");
    }
  }
  if (has_text) out.push_back(Json{{"role", "user"}, {"content", std::move(text)}});
  return std::nullopt;
}

// A tool_use block as an OpenAI tool call; its arguments stay the input
// object (chat templates iterate them or write them as JSON).
MaybeError tool_call(const Json& block, const std::string& at, Json& out) {
  const Json* id = field(block, "id");
  const Json* name = field(block, "name");
  const Json* input = field(block, "input");
  if (id == nullptr || !id->is_string()) return bad_field(at + ".id", fmt::format("'{}.id' must be a string", at));
  if (name == nullptr || !name->is_string()) {
    return bad_field(at + ".name", fmt::format("'{}.name' must be a string", at));
  }
  if (input != nullptr && !input->is_object()) {
    return bad_field(at + ".input", fmt::format("'{}.input' must be an object", at));
  }
  const Json arguments = input != nullptr ? *input : Json::object();
  out = Json{{"id", *id}, {"type", "function"}, {"function", Json{{"name", *name}, {"arguments", arguments}}}};
  return std::nullopt;
}

// An assistant turn: text as content, thinking as reasoning_content
// (redacted thinking is dropped), tool_use blocks as tool_calls.
MaybeError assistant_message(const Json& content, const std::string& at, Json& out) {
  std::string text, reasoning;
  Json calls = Json::array();
  for (size_t j = 0; j < content.size(); ++j) {
    const Json& block = content[j];
    const std::string bat = fmt::format("{}.content[{}]", at, j);
    const std::string type = block_type(block);
    if (type == "text") {
      MET_API_RETURN_IF_ERROR(block_text(block, bat, text));
    } else if (type == "thinking") {
      const Json* t = field(block, "thinking");
      if (t == nullptr || !t->is_string()) {
        return bad_field(bat + ".thinking", fmt::format("'{}.thinking' must be a string", bat));
      }
      reasoning += t->get<std::string>();
    } else if (type == "tool_use") {
      Json call;
      MET_API_RETURN_IF_ERROR(tool_call(block, bat, call));
      calls.push_back(std::move(call));
    } else if (type != "redacted_thinking") {
      return unsupported_block(bat, type, "assistant");
    }
  }
  Json msg{{"role", "assistant"}, {"content", std::move(text)}};
  if (!reasoning.empty()) msg["reasoning_content"] = std::move(reasoning);
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  out.push_back(std::move(msg));
  return std::nullopt;
}

MaybeError read_one_message(const Json& msg, size_t i, Json& out) {
  const std::string at = fmt::format("messages[{}]", i);
  if (!msg.is_object()) return bad_field(at, fmt::format("'{}' must be an object", at));
  const Json* role = field(msg, "role");
  const std::string r = role != nullptr && role->is_string() ? role->get<std::string>() : "";
  if (r != "user" && r != "assistant" && r != "system") {
    return bad_field(at + ".role", fmt::format("'{}.role' must be \"user\" or \"assistant\"", at));
  }
  const Json* content = field(msg, "content");
  if (content == nullptr || !(content->is_string() || content->is_array())) {
    return bad_field(at + ".content", fmt::format("'{}.content' must be a string or an array of content blocks", at));
  }
  if (content->is_string() || r == "system") {
    std::string text;
    MET_API_RETURN_IF_ERROR(text_or_blocks(*content, at + ".content", text));
    out.push_back(Json{{"role", r}, {"content", std::move(text)}});
    return std::nullopt;
  }
  return r == "user" ? user_messages(*content, at, out) : assistant_message(*content, at, out);
}

MaybeError read_turns(const Json& body, Json& out) {
  if (const Json* system = field(body, "system")) {
    std::string text;
    MET_API_RETURN_IF_ERROR(text_or_blocks(*system, "system", text));
    out.push_back(Json{{"role", "system"}, {"content", std::move(text)}});
  }
  const Json* messages = field(body, "messages");
  if (messages == nullptr) return bad_field("messages", "'messages' is required");
  if (!messages->is_array()) return wrong_type("messages", "an array", *messages);
  if (messages->empty()) return bad_field("messages", "'messages' must hold at least one message");
  for (size_t i = 0; i < messages->size(); ++i) MET_API_RETURN_IF_ERROR(read_one_message((*messages)[i], i, out));
  return std::nullopt;
}

// Custom tools ({name, description, input_schema}) as function tools; the
// name and schema are checked by the chat request's own rules.
MaybeError read_custom_tools(const Json& body, Json& out) {
  const Json* tools = field(body, "tools");
  if (tools == nullptr) return std::nullopt;
  if (!tools->is_array()) return wrong_type("tools", "an array", *tools);
  Json fns = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const std::string at = fmt::format("tools[{}]", i);
    if (!tool.is_object()) return bad_field(at, fmt::format("'{}' must be an object", at));
    const std::string type = block_type(tool);
    if (field(tool, "type") != nullptr && type != "custom") {
      return bad_field(at + ".type",
                       fmt::format("'{}.type' is \"{}\": met runs custom tools only (no server tools)", at, type));
    }
    Json fn{{"name", tool.contains("name") ? tool["name"] : Json()}};
    if (const Json* d = field(tool, "description")) fn["description"] = *d;
    const Json* schema = field(tool, "input_schema");
    if (schema == nullptr) return bad_field(at + ".input_schema", fmt::format("'{}.input_schema' is required", at));
    fn["parameters"] = *schema;
    fns.push_back(Json{{"type", "function"}, {"function", std::move(fn)}});
  }
  out["tools"] = std::move(fns);
  return std::nullopt;
}

MaybeError read_anthropic_tool_choice(const Json& body, Json& out) {
  const Json* tc = field(body, "tool_choice");
  if (tc == nullptr) return std::nullopt;
  const std::string type = tc->is_object() ? block_type(*tc) : "";
  if (type == "auto" || type == "none") out["tool_choice"] = type;
  if (type == "any") out["tool_choice"] = "required";
  if (type == "tool") {
    const Json* name = field(*tc, "name");
    if (name == nullptr || !name->is_string()) {
      return bad_field("tool_choice.name", "'tool_choice.name' must name a tool when 'tool_choice.type' is \"tool\"");
    }
    out["tool_choice"] = Json{{"type", "function"}, {"function", Json{{"name", *name}}}};
  }
  if (!out.contains("tool_choice")) {
    return bad_field("tool_choice.type", "'tool_choice' must be {\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}");
  }
  bool one_call = false;
  if (MaybeError e = read_bool(*tc, "disable_parallel_tool_use", one_call)) {
    return bad_field("tool_choice.disable_parallel_tool_use", e->message);
  }
  if (one_call) out["parallel_tool_calls"] = false;
  return std::nullopt;
}

// thinking: "enabled" (with budget_tokens) and "adaptive" turn the
// template's thinking on, "disabled" off; absent, the template decides.
MaybeError read_thinking(const Json& body, Json& out) {
  const Json* th = field(body, "thinking");
  if (th == nullptr) return std::nullopt;
  const std::string type = th->is_object() ? block_type(*th) : "";
  if (type != "enabled" && type != "disabled" && type != "adaptive") {
    return bad_field("thinking.type", "'thinking' must be {\"type\": \"enabled\", \"budget_tokens\": N}, "
                                "{\"type\": \"adaptive\"} or {\"type\": \"disabled\"}");
  }
  out["chat_template_kwargs"] = Json{{"enable_thinking", type != "disabled"}};
  if (type != "enabled") return std::nullopt;
  const Json* budget = field(*th, "budget_tokens");
  if (budget == nullptr) {
    return bad_field("thinking.budget_tokens", "'thinking.budget_tokens' is required when enabled");
  }
  out["thinking_budget"] = *budget;
  return std::nullopt;
}

// Fields that keep their name and meaning; their rules are the chat endpoint's.
void copy_shared_fields(const Json& body, Json& out) {
  for (const char* name : {"model", "temperature", "top_p", "top_k", "stream"}) {
    if (const Json* v = field(body, name)) out[name] = *v;
  }
}

MaybeError read_stop_sequences(const Json& body, Json& out) {
  const Json* stops = field(body, "stop_sequences");
  if (stops == nullptr) return std::nullopt;
  if (!stops->is_array()) return wrong_type("stop_sequences", "an array of strings", *stops);
  out["stop"] = *stops;  // its elements and count: the chat request's rules for 'stop'
  return std::nullopt;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// The Anthropic name of a field of the translated body.
std::string messages_param(const std::string& p) {
  if (p == "stop") return "stop_sequences";
  if (p == "thinking_budget") return "thinking.budget_tokens";
  if (p == "chat_template_kwargs") return "thinking";
  if (p == "parallel_tool_calls") return "tool_choice.disable_parallel_tool_use";
  if (p.starts_with("tools[")) {
    std::string out = replace_all(p, ".function.parameters", ".input_schema");
    return replace_all(std::move(out), ".function.", ".");
  }
  if (p.starts_with("messages[")) return "messages";  // a system prompt and tool results move the indexes
  return p;
}

}  // namespace

ApiResult<Json> translate_messages_body(const Json& body, MessagesCall call) {
  Json out = Json::object();
  Json messages = Json::array();
  MET_API_RETURN_IF_ERROR(read_turns(body, messages));
  out["messages"] = std::move(messages);
  if (call == MessagesCall::kCreate) {
    const Json* max_tokens = field(body, "max_tokens");
    if (max_tokens == nullptr) return bad_field("max_tokens", "'max_tokens' is required");
    out["max_tokens"] = *max_tokens;
  }
  if (const Json* metadata = field(body, "metadata"); metadata != nullptr && !metadata->is_object()) {
    return wrong_type("metadata", "an object", *metadata);
  }
  copy_shared_fields(body, out);
  MET_API_RETURN_IF_ERROR(read_stop_sequences(body, out));
  MET_API_RETURN_IF_ERROR(read_custom_tools(body, out));
  MET_API_RETURN_IF_ERROR(read_anthropic_tool_choice(body, out));
  MET_API_RETURN_IF_ERROR(read_thinking(body, out));
  return out;
}

ApiError to_messages_error(ApiError e) {
  if (!e.param) return e;
  const std::string anthropic = messages_param(*e.param);
  if (anthropic == *e.param) return e;
  e.message = replace_all(std::move(e.message), fmt::format("'{}'", *e.param), fmt::format("'{}'", anthropic));
  if (e.message.find(anthropic) == std::string::npos) e.message = fmt::format("{}: {}", anthropic, e.message);
  e.param = anthropic;
  return e;
}

ApiResult<OpenAiRequest> parse_messages_request(std::string_view body, MessagesCall call) {
  if (!is_valid_utf8(body)) return invalid_request(std::nullopt, "the request body is not valid UTF-8");
  const Json obj = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) return invalid_request(std::nullopt, "the request body is not valid JSON");
  if (!obj.is_object()) return invalid_request(std::nullopt, "the request body must be a JSON object");
  ApiResult<Json> chat = translate_messages_body(obj, call);
  if (auto* e = std::get_if<ApiError>(&chat)) return *e;
  ApiResult<OpenAiRequest> r = parse_openai_request(Endpoint::kChatCompletions, std::get<Json>(chat).dump());
  if (auto* e = std::get_if<ApiError>(&r)) return to_messages_error(std::move(*e));
  return r;
}

}  // namespace met
