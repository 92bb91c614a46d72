// MessageBuilder: see message_builder.h.
// Tested by tests/chat/output_parser_test.cc.
#include "chat/output/message_builder.h"

#include <string>

#include "core/check.h"

namespace met {

MessageBuilder::MessageBuilder(bool trim_content, uint64_t id_seed)
    : reasoning_(/*trims=*/true, /*starts_at_boundary=*/true),
      content_(trim_content, /*starts_at_boundary=*/false),
      ids_(id_seed) {}

void MessageBuilder::add_reasoning(std::string_view text, std::vector<ParseEvent>& events) {
  std::string decided = reasoning_.take(text);
  if (decided.empty()) return;
  message_.reasoning_content += decided;
  events.push_back(ReasoningDelta{std::move(decided)});
}

void MessageBuilder::add_content(std::string_view text, std::vector<ParseEvent>& events) {
  std::string decided = content_.take(text);
  if (decided.empty()) return;
  message_.content += decided;
  message_.ended_with_tool_call = false;
  events.push_back(ContentDelta{std::move(decided)});
}

void MessageBuilder::add_call(const ParsedCall& call, std::vector<ParseEvent>& events) {
  const size_t index = begin_call(call.name, events);
  for (const std::string& piece : call.argument_pieces) add_arguments(index, piece, events);
}

size_t MessageBuilder::begin_call(std::string_view name, std::vector<ParseEvent>& events) {
  const size_t index = message_.tool_calls.size();
  message_.tool_calls.push_back(ToolCall{ids_.next(), std::string(name), ""});
  events.push_back(ToolCallBegin{index, message_.tool_calls.back().id, std::string(name)});
  message_.ended_with_tool_call = true;
  content_.boundary();
  return index;
}

void MessageBuilder::add_arguments(size_t index, std::string_view text, std::vector<ParseEvent>& events) {
  MET_CHECK(index < message_.tool_calls.size(), "arguments for call {} before it began", index);
  if (text.empty()) return;
  message_.tool_calls[index].arguments += text;
  events.push_back(ToolCallArgumentsDelta{index, std::string(text)});
}

void MessageBuilder::reasoning_boundary() {
  reasoning_.boundary();
  content_.boundary();
}

void MessageBuilder::content_boundary() { content_.boundary(); }

ParsedMessage MessageBuilder::finish(std::vector<ParseEvent>& events) {
  (void)reasoning_.finish(/*keep_trailing=*/false);
  std::string tail = content_.finish(/*keep_trailing=*/true);
  if (!tail.empty()) {
    message_.content += tail;
    message_.ended_with_tool_call = false;
    events.push_back(ContentDelta{std::move(tail)});
  }
  return message_;
}

}  // namespace met
