// Helpers for the output-parser tests: feed one generation to a parser in
// every way the brief names (whole, every two-way byte split, one byte at a
// time, random UTF-8-safe splits) and check that all agree, that events
// concatenate to the message, that arguments are JSON objects and that
// content holds no markup; then compare the message with what is expected.
// Threading: test thread. Used by tests/chat/*_family_test.cc and
// output_parser_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/output/chat_format.h"
#include "chat/output/output_parser.h"
#include "chat/output/parsed_message.h"

namespace met::testing {

// Adjacent deltas of the same kind (and call index) merged into one event.
std::vector<ParseEvent> merge_events(const std::vector<ParseEvent>& events);

struct SplitCheck {
  ParserOptions options;
  // False for malformed generations, whose markup is kept as content.
  bool content_is_clean = true;
};

// A check for a generation the prompt opened in thinking.
inline SplitCheck starts_in_thinking() {
  SplitCheck check;
  check.options.starts_in_thinking = true;
  return check;
}

// The message from feeding `text` whole, after checking every split agrees.
ParsedMessage parse_every_way(const ChatFormat& format, std::string_view text, const SplitCheck& check = {});

struct ExpectedCall {
  std::string name;
  std::string arguments;  // JSON, compared as parsed values
};

void expect_message(const ParsedMessage& message, std::string_view reasoning, std::string_view content,
                    const std::vector<ExpectedCall>& calls, bool ended_with_tool_call);

}  // namespace met::testing
