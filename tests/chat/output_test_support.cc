// Output-parser test helpers: see output_test_support.h.
#include "output_test_support.h"

#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/output/format_markers.h"

namespace met::testing {
namespace {

struct Run {
  ParsedMessage message;
  std::vector<ParseEvent> events;  // merged
};

Run run_pieces(const ChatFormat& format, const ParserOptions& options, const std::vector<std::string_view>& pieces) {
  std::unique_ptr<OutputParser> parser = make_output_parser(format, options);
  std::vector<ParseEvent> events;
  for (std::string_view piece : pieces) parser->feed(piece, events);
  ParsedMessage message = parser->finish(events);
  return Run{std::move(message), merge_events(events)};
}

// The message the events spell out.
ParsedMessage message_from_events(const std::vector<ParseEvent>& events) {
  ParsedMessage out;
  for (const ParseEvent& event : events) {
    if (const auto* r = std::get_if<ReasoningDelta>(&event)) out.reasoning_content += r->text;
    if (const auto* c = std::get_if<ContentDelta>(&event)) out.content += c->text;
    if (const auto* b = std::get_if<ToolCallBegin>(&event)) {
      EXPECT_EQ(b->index, out.tool_calls.size()) << "call indexes count up from 0";
      out.tool_calls.push_back(ToolCall{b->id, b->name, ""});
    }
    if (const auto* a = std::get_if<ToolCallArgumentsDelta>(&event)) {
      EXPECT_LT(a->index, out.tool_calls.size()) << "arguments before their ToolCallBegin";
      if (a->index < out.tool_calls.size()) out.tool_calls[a->index].arguments += a->text;
    }
  }
  return out;
}

// Checks one run's own invariants; returns false after the first failure.
bool check_run(const ChatFormat& format, const Run& run, const SplitCheck& check, const std::string& how) {
  ParsedMessage spelled = message_from_events(run.events);
  spelled.ended_with_tool_call = run.message.ended_with_tool_call;
  EXPECT_EQ(spelled, run.message) << how << ": events do not concatenate to the message";
  for (const ToolCall& call : run.message.tool_calls) {
    const auto args = nlohmann::json::parse(call.arguments, nullptr, false);
    EXPECT_TRUE(!args.is_discarded() && args.is_object()) << how << ": arguments not a JSON object: " << call.arguments;
    EXPECT_TRUE(call.id.starts_with("call_")) << call.id;
  }
  if (check.content_is_clean) {
    FormatMarkers markers = format_markers(format);
    markers.special_strings.push_back(markers.tool_call_start);
    for (const std::string& marker : markers.special_strings) {
      if (marker.empty()) continue;
      EXPECT_EQ(run.message.content.find(marker), std::string::npos) << how << ": content has markup " << marker;
      EXPECT_EQ(run.message.reasoning_content.find(marker), std::string::npos) << how << ": reasoning has markup " << marker;
    }
  }
  return !::testing::Test::HasFailure();
}

bool same_as_whole(const Run& whole, const Run& run, const std::string& how) {
  EXPECT_EQ(run.message, whole.message) << how << ": message differs from feeding it whole";
  EXPECT_EQ(run.events, whole.events) << how << ": events differ from feeding it whole";
  return run.message == whole.message && run.events == whole.events;
}

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::vector<std::string_view> random_utf8_pieces(std::string_view text, std::mt19937& rng) {
  std::vector<std::string_view> pieces;
  std::uniform_int_distribution<size_t> length(1, 12);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = std::min(text.size(), pos + length(rng));
    while (end < text.size() && is_utf8_continuation(text[end])) ++end;
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return pieces;
}

}  // namespace

std::vector<ParseEvent> merge_events(const std::vector<ParseEvent>& events) {
  std::vector<ParseEvent> merged;
  for (const ParseEvent& event : events) {
    if (!merged.empty() && merged.back().index() == event.index()) {
      if (auto* r = std::get_if<ReasoningDelta>(&merged.back())) {
        r->text += std::get<ReasoningDelta>(event).text;
        continue;
      }
      if (auto* c = std::get_if<ContentDelta>(&merged.back())) {
        c->text += std::get<ContentDelta>(event).text;
        continue;
      }
      auto* a = std::get_if<ToolCallArgumentsDelta>(&merged.back());
      if (a != nullptr && a->index == std::get<ToolCallArgumentsDelta>(event).index) {
        a->text += std::get<ToolCallArgumentsDelta>(event).text;
        continue;
      }
    }
    merged.push_back(event);
  }
  return merged;
}

ParsedMessage parse_every_way(const ChatFormat& format, std::string_view text, const SplitCheck& check) {
  const Run whole = run_pieces(format, check.options, {text});
  if (!check_run(format, whole, check, "whole")) return whole.message;
  for (size_t cut = 1; cut < text.size(); ++cut) {
    const Run run = run_pieces(format, check.options, {text.substr(0, cut), text.substr(cut)});
    const std::string how = "split at byte " + std::to_string(cut);
    if (!check_run(format, run, check, how) || !same_as_whole(whole, run, how)) return whole.message;
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  const Run by_byte = run_pieces(format, check.options, bytes);
  if (!check_run(format, by_byte, check, "byte by byte") || !same_as_whole(whole, by_byte, "byte by byte")) {
    return whole.message;
  }
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 20; ++trial) {
    const Run run = run_pieces(format, check.options, random_utf8_pieces(text, rng));
    const std::string how = "random split, trial " + std::to_string(trial);
    if (!check_run(format, run, check, how) || !same_as_whole(whole, run, how)) break;
  }
  return whole.message;
}

void expect_message(const ParsedMessage& message, std::string_view reasoning, std::string_view content,
                    const std::vector<ExpectedCall>& calls, bool ended_with_tool_call) {
  EXPECT_EQ(message.reasoning_content, reasoning);
  EXPECT_EQ(message.content, content);
  EXPECT_EQ(message.ended_with_tool_call, ended_with_tool_call);
  ASSERT_EQ(message.tool_calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(message.tool_calls[i].name, calls[i].name) << "call " << i;
    EXPECT_EQ(nlohmann::json::parse(message.tool_calls[i].arguments, nullptr, false),
              nlohmann::json::parse(calls[i].arguments))
        << "call " << i << ": " << message.tool_calls[i].arguments;
  }
}

}  // namespace met::testing
