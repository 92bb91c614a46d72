// ResponsesRequest translation. Tested by tests/server/responses_request_test.cc.
#include "server/responses_request.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "tokenizer/utf8.h"

namespace met {
namespace {

using namespace json_fields;

constexpr size_t kMaxMetadataKeys = 16;

// met's own chat fields a Responses request may carry too.
constexpr const char* kPassedThrough[] = {
    "seed",  "stop",         "top_k",           "min_p",          "frequency_penalty", "presence_penalty",
    "repetition_penalty",    "logit_bias",      "thinking_budget", "timeout",          "ignore_eos",
    "min_tokens",            "cache_salt",      "chat_template_kwargs"};

// A part list's or a string's text; `what` names it in errors.
MaybeError responses_text(const Json& content, const std::string& what, std::string& out) {
  if (content.is_null()) return std::nullopt;
  if (content.is_string()) {
    out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) {
    return invalid_request(what, fmt::format("'{}' must be a string or an array of parts", what));
  }
  for (size_t j = 0; j < content.size(); ++j) {
    const Json& part = content[j];
    const Json* type = part.is_object() ? field(part, "type") : nullptr;
    const Json* text = part.is_object() ? field(part, "text") : nullptr;
    const std::string t = type != nullptr && type->is_string() ? type->get<std::string>() : "";
    if (t == "refusal") continue;
    if ((t != "input_text" && t != "output_text" && t != "text") || text == nullptr || !text->is_string()) {
      return invalid_request(fmt::format("{}[{}]", what, j),
                             fmt::format("'{}[{}]' must be a text part ({{\"type\": \"input_text\", \"text\": "
                                         "string}}); only text is supported{}",
                                         what, j, t.empty() ? "" : fmt::format(", not '{}'", t)));
    }
    if (!out.empty()) out += "\n";
    out += text->get<std::string>();
  }
  return std::nullopt;
}

MaybeError item_string(const Json& item, const char* name, const std::string& at, std::string& out) {
  const Json* v = field(item, name);
  if (v == nullptr || !v->is_string()) {
    return invalid_request(at + "." + name, fmt::format("'{}.{}' must be a string", at, name));
  }
  out = v->get<std::string>();
  return std::nullopt;
}

// Builds chat messages, one assistant message per assistant turn (its
// reasoning, text and calls).
class ChatTurns {
 public:
  Json& assistant() {
    if (!open_) open_ = Json{{"role", "assistant"}, {"content", ""}};
    return *open_;
  }
  bool assistant_has_output() const {
    return open_ && (!(*open_)["content"].get<std::string>().empty() || open_->contains("tool_calls"));
  }
  void close() {
    if (open_) messages_.push_back(std::move(*open_));
    open_.reset();
  }
  void push(Json message) {
    close();
    messages_.push_back(std::move(message));
  }
  Json take() {
    close();
    return std::move(messages_);
  }
  std::map<std::string, std::string> call_names;  // call_id -> function name

 private:
  Json messages_ = Json::array();
  std::optional<Json> open_;
};

MaybeError add_message_item(const Json& item, const std::string& at, ChatTurns& turns) {
  std::string role;
  MET_API_RETURN_IF_ERROR(item_string(item, "role", at, role));
  if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
    return invalid_request(at + ".role", fmt::format("'{}.role' must be \"user\", \"assistant\", \"system\" or "
                                                     "\"developer\", got \"{}\"", at, role));
  }
  std::string text;
  if (const auto c = item.find("content"); c != item.end()) {
    MET_API_RETURN_IF_ERROR(responses_text(*c, at + ".content", text));
  }
  if (role != "assistant") {
    turns.push(Json{{"role", role == "developer" ? "system" : role}, {"content", std::move(text)}});
    return std::nullopt;
  }
  if (turns.assistant_has_output()) turns.close();
  turns.assistant()["content"] = std::move(text);
  return std::nullopt;
}

MaybeError add_function_call(const Json& item, const std::string& at, ChatTurns& turns) {
  std::string call_id, name, arguments;
  MET_API_RETURN_IF_ERROR(item_string(item, "call_id", at, call_id));
  MET_API_RETURN_IF_ERROR(item_string(item, "name", at, name));
  MET_API_RETURN_IF_ERROR(item_string(item, "arguments", at, arguments));
  Json& turn = turns.assistant();
  if (!turn.contains("tool_calls")) turn["tool_calls"] = Json::array();
  turn["tool_calls"].push_back(
      Json{{"id", call_id}, {"type", "function"}, {"function", Json{{"name", name}, {"arguments", arguments}}}});
  turns.call_names[call_id] = name;
  return std::nullopt;
}

MaybeError add_function_output(const Json& item, const std::string& at, ChatTurns& turns) {
  std::string call_id, output;
  MET_API_RETURN_IF_ERROR(item_string(item, "call_id", at, call_id));
  const auto o = item.find("output");
  if (o == item.end()) return invalid_request(at + ".output", fmt::format("'{}.output' is required", at));
  MET_API_RETURN_IF_ERROR(responses_text(*o, at + ".output", output));
  Json message{{"role", "tool"}, {"tool_call_id", call_id}, {"content", std::move(output)}};
  if (const auto n = turns.call_names.find(call_id); n != turns.call_names.end()) message["name"] = n->second;
  turns.push(std::move(message));
  return std::nullopt;
}

// A reasoning item: its reasoning_text parts (else its summary) become the
// next assistant turn's reasoning.
MaybeError add_reasoning(const Json& item, const std::string& at, ChatTurns& turns) {
  std::string text;
  for (const char* list : {"content", "summary"}) {
    const Json* parts = field(item, list);
    if (parts == nullptr) continue;
    if (!parts->is_array()) return wrong_type((at + "." + list).c_str(), "an array", *parts);
    for (const Json& p : *parts) {
      const Json* t = p.is_object() ? field(p, "text") : nullptr;
      if (t != nullptr && t->is_string()) text += t->get<std::string>();
    }
    if (!text.empty()) break;
  }
  if (turns.assistant_has_output()) turns.close();
  Json& turn = turns.assistant();
  turn["reasoning_content"] = turn.value("reasoning_content", std::string()) + text;
  return std::nullopt;
}

MaybeError add_item(const Json& item, const std::string& at, ChatTurns& turns) {
  if (!item.is_object()) return invalid_request(at, fmt::format("'{}' must be an object", at));
  const Json* type = field(item, "type");
  if (type != nullptr && !type->is_string()) return wrong_type((at + ".type").c_str(), "a string", *type);
  const std::string t = type != nullptr ? type->get<std::string>() : "message";
  if (t == "message") return add_message_item(item, at, turns);
  if (t == "function_call") return add_function_call(item, at, turns);
  if (t == "function_call_output") return add_function_output(item, at, turns);
  if (t == "reasoning") return add_reasoning(item, at, turns);
  return invalid_request(at + ".type", fmt::format("'{}.type' \"{}\" is not supported; input items are message, "
                                                   "function_call, function_call_output and reasoning",
                                                   at, t));
}

// The conversation: the previous response's items, then `input`'s.
// An input item, an item_reference resolved into the item it names.
MaybeError resolve_input_item(const Json& item, size_t i, const ItemLookup& lookup, Json& conversation) {
  const Json* type = item.is_object() ? field(item, "type") : nullptr;
  if (type == nullptr || *type != "item_reference") {
    conversation.push_back(item);
    return std::nullopt;
  }
  const std::string at = fmt::format("input[{}].id", i);
  const Json* id = field(item, "id");
  if (id == nullptr || !id->is_string()) return invalid_request(at, fmt::format("'{}' must be a string", at));
  std::optional<Json> found = lookup ? lookup(id->get<std::string>()) : std::nullopt;
  if (!found) return invalid_request(at, fmt::format("Item with id '{}' not found.", id->get<std::string>()));
  conversation.push_back(std::move(*found));
  return std::nullopt;
}

MaybeError read_input(const Json& obj, const PreviousConversation& previous, const ItemLookup& lookup,
                      Json& conversation, size_t& first_input) {
  conversation = Json::array();
  std::string previous_id;
  MET_API_RETURN_IF_ERROR(read_string(obj, "previous_response_id", previous_id));
  if (!previous_id.empty()) {
    std::optional<Json> earlier = previous ? previous(previous_id) : std::nullopt;
    if (!earlier) {
      return invalid_request("previous_response_id",
                             fmt::format("Previous response with id '{}' not found.", previous_id));
    }
    conversation = std::move(*earlier);
  }
  first_input = conversation.size();
  const Json* input = field(obj, "input");
  if (input == nullptr) return invalid_request("input", "'input' is required");
  if (input->is_string()) {
    conversation.push_back(Json{{"type", "message"}, {"role", "user"}, {"content", input->get<std::string>()}});
  } else if (input->is_array()) {
    for (size_t i = 0; i < input->size(); ++i) {
      MET_API_RETURN_IF_ERROR(resolve_input_item((*input)[i], i, lookup, conversation));
    }
  } else {
    return wrong_type("input", "a string or an array of items", *input);
  }
  return std::nullopt;
}

MaybeError translate_tools(const Json& obj, Json& chat) {
  const Json* tools = field(obj, "tools");
  if (tools == nullptr) return std::nullopt;
  if (!tools->is_array()) return wrong_type("tools", "an array", *tools);
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const std::string at = fmt::format("tools[{}]", i);
    const Json* type = tool.is_object() ? field(tool, "type") : nullptr;
    if (type == nullptr || *type != "function") {
      const std::string got = type != nullptr && type->is_string() ? type->get<std::string>() : "";
      return invalid_request(at + ".type", fmt::format("'{}.type' must be \"function\"{}; met serves function "
                                                       "tools only",
                                                       at, got.empty() ? "" : fmt::format(", not \"{}\"", got)));
    }
    Json fn = Json::object();
    for (const char* key : {"name", "description", "parameters", "strict"}) {
      if (const Json* v = field(tool, key)) fn[key] = *v;
    }
    out.push_back(Json{{"type", "function"}, {"function", std::move(fn)}});
  }
  chat["tools"] = std::move(out);
  return std::nullopt;
}

MaybeError translate_tool_choice(const Json& obj, Json& chat) {
  const Json* tc = field(obj, "tool_choice");
  if (tc == nullptr || tc->is_string()) {
    if (tc != nullptr) chat["tool_choice"] = *tc;
    return std::nullopt;
  }
  const Json* type = tc->is_object() ? field(*tc, "type") : nullptr;
  const Json* name = tc->is_object() ? field(*tc, "name") : nullptr;
  if (type == nullptr || *type != "function" || name == nullptr || !name->is_string()) {
    return invalid_request("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                          "{\"type\": \"function\", \"name\": string}");
  }
  chat["tool_choice"] = Json{{"type", "function"}, {"function", Json{{"name", *name}}}};
  return std::nullopt;
}

// text.format -> response_format.
MaybeError translate_text(const Json& obj, Json& chat, Json& echo_text) {
  echo_text = Json{{"format", Json{{"type", "text"}}}};
  const Json* text = field(obj, "text");
  if (text == nullptr) return std::nullopt;
  if (!text->is_object()) return wrong_type("text", "an object", *text);
  const Json* format = field(*text, "format");
  if (format == nullptr) return std::nullopt;
  const Json* type = format->is_object() ? field(*format, "type") : nullptr;
  const std::string t = type != nullptr && type->is_string() ? type->get<std::string>() : "";
  if (t != "text" && t != "json_object" && t != "json_schema") {
    return invalid_request("text.format.type",
                           "'text.format.type' must be \"text\", \"json_object\" or \"json_schema\"");
  }
  echo_text["format"] = *format;
  if (t == "json_object") chat["response_format"] = Json{{"type", "json_object"}};
  if (t != "json_schema") return std::nullopt;
  Json schema = Json::object();
  for (const char* key : {"name", "description", "schema", "strict"}) {
    if (const Json* v = field(*format, key)) schema[key] = *v;
  }
  chat["response_format"] = Json{{"type", "json_schema"}, {"json_schema", std::move(schema)}};
  return std::nullopt;
}

// reasoning {effort, summary} -> reasoning_effort / enable_thinking.
MaybeError translate_reasoning(const Json& obj, Json& chat, Json& echo_reasoning, bool& summary) {
  echo_reasoning = Json{{"effort", nullptr}, {"summary", nullptr}};
  const Json* r = field(obj, "reasoning");
  if (r == nullptr) return std::nullopt;
  if (!r->is_object()) return wrong_type("reasoning", "an object", *r);
  if (const Json* effort = field(*r, "effort")) {
    if (!effort->is_string()) return wrong_type("reasoning.effort", "a string", *effort);
    echo_reasoning["effort"] = *effort;
    if (*effort == "none") {
      Json& kwargs = chat["chat_template_kwargs"];
      if (kwargs.is_null()) kwargs = Json::object();
      if (kwargs.is_object()) kwargs["enable_thinking"] = false;  // else chat's check refuses it
    } else {
      chat["reasoning_effort"] = *effort;
    }
  }
  const Json* s = field(*r, "summary");
  if (s == nullptr) s = field(*r, "generate_summary");
  if (s != nullptr) {
    if (!s->is_string() || (*s != "auto" && *s != "concise" && *s != "detailed")) {
      return invalid_request("reasoning.summary",
                             "'reasoning.summary' must be \"auto\", \"concise\" or \"detailed\"");
    }
    echo_reasoning["summary"] = *s;
    summary = true;
  }
  return std::nullopt;
}

// Fields of the Responses API alone: checked, echoed, not passed on.
MaybeError read_responses_own(const Json& obj, ResponsesRequest& r) {
  MET_API_RETURN_IF_ERROR(read_bool(obj, "store", r.store));
  bool background = false;
  MET_API_RETURN_IF_ERROR(read_bool(obj, "background", background));
  if (background) return invalid_request("background", "'background' responses are not supported");
  Json metadata = Json::object();
  if (const Json* m = field(obj, "metadata")) {
    if (!m->is_object() || m->size() > kMaxMetadataKeys) {
      return invalid_request("metadata", "'metadata' must be an object of at most 16 string values");
    }
    for (const auto& [key, value] : m->items()) {
      if (!value.is_string()) return invalid_request("metadata", fmt::format("'metadata.{}' must be a string", key));
    }
    metadata = *m;
  }
  std::string truncation = "disabled";
  MET_API_RETURN_IF_ERROR(read_string(obj, "truncation", truncation));
  if (truncation != "disabled" && truncation != "auto") {
    return invalid_request("truncation", "'truncation' must be \"auto\" or \"disabled\"");
  }
  bool parallel = true;
  MET_API_RETURN_IF_ERROR(read_bool(obj, "parallel_tool_calls", parallel));
  r.echo["metadata"] = std::move(metadata);
  r.echo["parallel_tool_calls"] = parallel;
  r.echo["store"] = r.store;
  r.echo["truncation"] = truncation;
  return std::nullopt;
}

// The chat request's param for the Responses field it came from.
std::string responses_param(const std::string& chat_param) {
  auto starts = [&](std::string_view p) { return chat_param.rfind(p, 0) == 0; };
  if (starts("messages")) return "input";
  if (chat_param == "max_tokens") return "max_output_tokens";
  if (chat_param == "reasoning_effort") return "reasoning.effort";
  if (chat_param == "response_format.json_schema.schema") return "text.format.schema";
  if (chat_param == "response_format.json_schema.strict") return "text.format.strict";
  if (starts("response_format")) return "text.format";
  if (starts("tools[")) {
    const size_t fn = chat_param.find(".function");
    if (fn != std::string::npos) return chat_param.substr(0, fn) + chat_param.substr(fn + 9);
  }
  return chat_param;
}

Json echo_or_null(const Json& obj, const char* name) {
  const Json* v = field(obj, name);
  return v != nullptr ? *v : Json(nullptr);
}

// Builds the chat body and the echo from `obj`.
MaybeError translate_responses(const Json& obj, const PreviousConversation& previous, const ItemLookup& lookup,
                               ResponsesRequest& r, Json& chat) {
  MET_API_RETURN_IF_ERROR(read_responses_own(obj, r));
  size_t first_input = 0;
  MET_API_RETURN_IF_ERROR(read_input(obj, previous, lookup, r.conversation, first_input));
  std::string instructions;
  MET_API_RETURN_IF_ERROR(read_string(obj, "instructions", instructions));
  ApiResult<Json> messages = items_to_messages(r.conversation, first_input);
  if (auto* e = std::get_if<ApiError>(&messages)) return *e;
  Json& list = std::get<Json>(messages);
  if (!instructions.empty()) list.insert(list.begin(), Json{{"role", "system"}, {"content", instructions}});
  if (list.empty()) return invalid_request("input", "'input' must hold at least one item");
  for (const char* key : kPassedThrough) {
    if (const Json* v = field(obj, key)) chat[key] = *v;
  }
  for (const char* key : {"model", "temperature", "top_p", "stream", "user", "parallel_tool_calls"}) {
    if (const Json* v = field(obj, key)) chat[key] = *v;
  }
  if (const Json* v = field(obj, "max_output_tokens")) chat["max_tokens"] = *v;
  chat["messages"] = std::move(list);
  MET_API_RETURN_IF_ERROR(translate_tools(obj, chat));
  MET_API_RETURN_IF_ERROR(translate_tool_choice(obj, chat));
  Json echo_text, echo_reasoning;
  MET_API_RETURN_IF_ERROR(translate_text(obj, chat, echo_text));
  MET_API_RETURN_IF_ERROR(translate_reasoning(obj, chat, echo_reasoning, r.reasoning_summary));
  Json echo;
  echo["instructions"] = instructions.empty() ? Json(nullptr) : Json(instructions);
  echo["max_output_tokens"] = echo_or_null(obj, "max_output_tokens");
  echo["metadata"] = r.echo["metadata"];
  echo["parallel_tool_calls"] = r.echo["parallel_tool_calls"];
  echo["previous_response_id"] = echo_or_null(obj, "previous_response_id");
  echo["reasoning"] = std::move(echo_reasoning);
  echo["store"] = r.store;
  echo["temperature"] = echo_or_null(obj, "temperature");
  echo["text"] = std::move(echo_text);
  echo["tool_choice"] = field(obj, "tool_choice") != nullptr ? *field(obj, "tool_choice") : Json("auto");
  echo["tools"] = field(obj, "tools") != nullptr ? *field(obj, "tools") : Json::array();
  echo["top_p"] = echo_or_null(obj, "top_p");
  echo["truncation"] = r.echo["truncation"];
  echo["user"] = echo_or_null(obj, "user");
  r.echo = std::move(echo);
  return std::nullopt;
}

}  // namespace

ApiResult<Json> items_to_messages(const Json& items, size_t first_input) {
  ChatTurns turns;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string at = i >= first_input ? fmt::format("input[{}]", i - first_input)
                                            : fmt::format("previous_response_id (item {})", i);
    MET_API_RETURN_IF_ERROR(add_item(items[i], at, turns));
  }
  return turns.take();
}

ApiResult<ResponsesRequest> parse_responses_request(std::string_view body, const PreviousConversation& previous,
                                                    const ItemLookup& item) {
  if (!is_valid_utf8(body)) return invalid_request(std::nullopt, "the request body is not valid UTF-8");
  Json obj;
  try {
    obj = Json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    return invalid_request(std::nullopt, fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!obj.is_object()) return invalid_request(std::nullopt, "the request body must be a JSON object");
  ResponsesRequest r;
  Json chat = Json::object();
  MET_API_RETURN_IF_ERROR(translate_responses(obj, previous, item, r, chat));
  ApiResult<OpenAiRequest> parsed = parse_openai_request(Endpoint::kChatCompletions, dump_json(chat));
  if (auto* e = std::get_if<ApiError>(&parsed)) {
    if (e->param) e->param = responses_param(*e->param);
    return *e;
  }
  r.chat = std::move(std::get<OpenAiRequest>(parsed));
  return r;
}

}  // namespace met
