// HarmonyParser: see harmony_parser.h.
// Tested by tests/chat/gpt_oss_family_test.cc.
#include "chat/output/harmony_parser.h"

#include <optional>

#include "chat/output/marker_match.h"
#include "chat/output/tool_body_json.h"

namespace met {
namespace {

const std::string kMessage = "<|message|>";
const std::string kBodyEnds[] = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};

// The word after `key` in a header ("analysis" after "<|channel|>"), up to
// whitespace or markup.
std::string header_word(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + key.size());
  const size_t end = std::min(rest.find_first_of(" \t\n<"), rest.size());
  return std::string(rest.substr(0, end));
}

}  // namespace

HarmonyParser::HarmonyParser(const ParserOptions& options)
    : parse_tool_calls_(options.parse_tool_calls),
      stream_tool_calls_(options.stream_tool_calls),
      builder_(/*trim_content=*/true, options.id_seed) {
  if (options.starts_in_thinking) {
    in_header_ = false;
    body_kind_ = Body::kReasoning;
  }
}

void HarmonyParser::feed(std::string_view delta, std::vector<ParseEvent>& events) {
  pending_ += delta;
  drain(/*at_end=*/false, events);
}

ParsedMessage HarmonyParser::finish(std::vector<ParseEvent>& events) {
  drain(/*at_end=*/true, events);
  if (in_header_) {
    header_ += pending_;
    if (!trim_space(header_).starts_with("<|")) builder_.add_content(header_, events);
  } else {
    close_body(events);
  }
  pending_.clear();
  return builder_.finish(events);
}

void HarmonyParser::drain(bool at_end, std::vector<ParseEvent>& events) {
  while (in_header_ ? step_header(at_end, events) : step_body(at_end, events)) {
  }
}

bool HarmonyParser::step_header(bool /*at_end*/, std::vector<ParseEvent>& /*events*/) {
  const size_t at = pending_.find(kMessage);
  if (at == std::string::npos) return false;
  header_ += pending_.substr(0, at);
  pending_.erase(0, at + kMessage.size());
  const std::string channel = header_word(header_, "<|channel|>");
  const std::string recipient = header_word(header_, "to=");
  in_header_ = false;
  if (!recipient.empty() && parse_tool_calls_) {
    body_kind_ = Body::kCall;
    call_name_ = recipient.starts_with("functions.") ? recipient.substr(10) : recipient;
    call_body_.clear();
  } else {
    body_kind_ = channel == "analysis" ? Body::kReasoning : Body::kContent;
    if (body_kind_ == Body::kReasoning) builder_.reasoning_boundary();
  }
  return true;
}

bool HarmonyParser::step_body(bool at_end, std::vector<ParseEvent>& events) {
  const std::optional<MarkerMatch> match = find_marker(pending_, kBodyEnds);
  const size_t decided = !match || (match->partial && at_end) ? pending_.size() : match->pos;
  emit_body_text(std::string_view(pending_).substr(0, decided), events);
  pending_.erase(0, decided);
  if (!match || match->partial) return false;
  const std::string& end = kBodyEnds[match->marker];
  // <|start|> opens the next message's header; the others end this one.
  pending_.erase(0, end == "<|start|>" ? 0 : end.size());
  close_body(events);
  in_header_ = true;
  header_.clear();
  return true;
}

void HarmonyParser::emit_body_text(std::string_view text, std::vector<ParseEvent>& events) {
  switch (body_kind_) {
    case Body::kReasoning: builder_.add_reasoning(text, events); return;
    case Body::kContent: builder_.add_content(text, events); return;
    case Body::kCall:
      call_body_ += text;
      if (stream_tool_calls_) stream_.update(preview_named_arguments(call_name_, call_body_), builder_, events);
      return;
  }
}

void HarmonyParser::close_body(std::vector<ParseEvent>& events) {
  switch (body_kind_) {
    case Body::kReasoning: builder_.reasoning_boundary(); break;
    case Body::kContent: builder_.content_boundary(); break;
    case Body::kCall: {
      Result<std::vector<ParsedCall>> calls = parse_named_arguments(call_name_, call_body_);
      const std::vector<ParsedCall>* parsed = calls.ok() ? &*calls : nullptr;
      bool kept = parsed != nullptr;
      if (stream_.began()) {
        kept = stream_.finish(parsed, builder_, events);
      } else if (parsed != nullptr) {
        for (const ParsedCall& call : *parsed) builder_.add_call(call, events);
      }
      if (!kept) builder_.add_content(header_ + kMessage + call_body_, events);
      call_body_.clear();
      break;
    }
  }
  body_kind_ = Body::kContent;
}

}  // namespace met
