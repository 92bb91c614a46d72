// MarkedOutputParser: see marked_output_parser.h.
// Tested by tests/chat/output_parser_test.cc and the family tests.
#include "chat/output/marked_output_parser.h"

#include <algorithm>
#include <utility>

#include "chat/output/json_span.h"
#include "chat/output/marker_match.h"
#include "core/check.h"

namespace met {

MarkedOutputParser::MarkedOutputParser(const ChatFormat& format, ToolSyntax syntax, const ParserOptions& options)
    : think_start_(format.think_start),
      think_end_(format.think_end),
      syntax_(std::move(syntax)),
      builder_(/*trim_content=*/!format.think_start.empty() || !syntax_.calls.empty(), options.id_seed) {
  if (!options.parse_tool_calls) {
    syntax_.calls.clear();
    syntax_.bare_json_call.reset();
  }
  if (!options.stream_tool_calls) {
    for (CallSyntax& call : syntax_.calls) call.preview = nullptr;
  }
  tool_names_ = options.tool_names;
  content_markers_.push_back(format.think_start);
  content_markers_.insert(content_markers_.end(), syntax_.dropped.begin(), syntax_.dropped.end());
  first_call_marker_ = content_markers_.size();
  for (const CallSyntax& call : syntax_.calls) {
    MET_CHECK(!call.begin.empty() && (!call.end.empty() || call.find_end), "call syntax without delimiters");
    content_markers_.push_back(call.begin);
  }
  awaiting_bare_json_ = syntax_.bare_json_call.has_value();
  if (options.starts_in_thinking && !format.think_start.empty()) {
    mode_ = Mode::kReasoning;
    repeated_think_start_possible_ = true;
  }
  pending_ = syntax_.implicit_prefix;
}

void MarkedOutputParser::feed(std::string_view delta, std::vector<ParseEvent>& events) {
  pending_ += delta;
  drain(/*at_end=*/false, events);
}

ParsedMessage MarkedOutputParser::finish(std::vector<ParseEvent>& events) {
  drain(/*at_end=*/true, events);
  MET_DCHECK(pending_.empty() && mode_ != Mode::kCall);
  return builder_.finish(events);
}

void MarkedOutputParser::drain(bool at_end, std::vector<ParseEvent>& events) {
  for (;;) {
    bool progressed = false;
    switch (mode_) {
      case Mode::kContent: progressed = step_content(at_end, events); break;
      case Mode::kReasoning: progressed = step_reasoning(at_end, events); break;
      case Mode::kCall: progressed = step_call(at_end, events); break;
    }
    if (!progressed) return;
  }
}

void MarkedOutputParser::flush_content(size_t n, std::vector<ParseEvent>& events) {
  if (n == 0) return;
  builder_.add_content(std::string_view(pending_).substr(0, n), events);
  pending_.erase(0, n);
}

bool MarkedOutputParser::step_bare_json(bool at_end, std::vector<ParseEvent>& events) {
  const size_t first = skip_json_space(pending_, 0);
  if (first == pending_.size()) {
    if (!at_end) return false;  // only whitespace so far: a call may still start
    awaiting_bare_json_ = false;
    return true;
  }
  awaiting_bare_json_ = false;
  if (pending_[first] != '{') return true;
  flush_content(first, events);
  open_call(*syntax_.bare_json_call, "");
  return true;
}

bool MarkedOutputParser::step_content(bool at_end, std::vector<ParseEvent>& events) {
  if (awaiting_bare_json_) return step_bare_json(at_end, events);
  const std::optional<MarkerMatch> match = find_marker(pending_, content_markers_);
  if (!match || (match->partial && at_end)) {
    flush_content(pending_.size(), events);
    return false;
  }
  flush_content(match->pos, events);
  if (match->partial) return false;
  std::string marker = content_markers_[match->marker];
  pending_.erase(0, marker.size());
  if (match->marker == 0) {
    builder_.reasoning_boundary();
    mode_ = Mode::kReasoning;
  } else if (match->marker < first_call_marker_) {
    builder_.content_boundary();
  } else {
    builder_.content_boundary();
    open_call(match->marker - first_call_marker_, std::move(marker));
  }
  return true;
}

bool MarkedOutputParser::skip_repeated_think_start(bool at_end) {
  const size_t first = skip_json_space(pending_, 0);
  const std::string_view rest = std::string_view(pending_).substr(first);
  if (rest.size() < think_start_.size() && std::string_view(think_start_).starts_with(rest) && !at_end) {
    return false;  // may still be the repeated marker
  }
  if (rest.starts_with(think_start_)) pending_.erase(0, first + think_start_.size());
  repeated_think_start_possible_ = false;
  return true;
}

bool MarkedOutputParser::step_reasoning(bool at_end, std::vector<ParseEvent>& events) {
  if (repeated_think_start_possible_) return skip_repeated_think_start(at_end);
  const std::string markers[] = {think_end_};
  const std::optional<MarkerMatch> match = find_marker(pending_, markers);
  const size_t decided = !match || (match->partial && at_end) ? pending_.size() : match->pos;
  builder_.add_reasoning(std::string_view(pending_).substr(0, decided), events);
  pending_.erase(0, decided);
  if (!match || match->partial) return false;
  pending_.erase(0, think_end_.size());
  builder_.reasoning_boundary();
  mode_ = Mode::kContent;
  return true;
}

bool MarkedOutputParser::step_call(bool at_end, std::vector<ParseEvent>& events) {
  const CallSyntax& call = syntax_.calls[call_syntax_];
  if (call.end.empty()) {
    body_ += pending_;
    pending_.clear();
    stream_preview(events);
    const std::optional<size_t> end = call.find_end(body_, at_end);
    if (!end && !at_end) return false;
    if (end) {
      pending_ = body_.substr(*end);
      body_.resize(*end);
    }
    close_call(/*terminated=*/true, events);
    return true;
  }
  const std::string markers[] = {call.end};
  const std::optional<MarkerMatch> match = find_marker(pending_, markers);
  const size_t taken = match ? match->pos : pending_.size();
  body_.append(pending_, 0, taken);
  pending_.erase(0, taken);
  stream_preview(events);
  if (match && !match->partial) {
    pending_.erase(0, call.end.size());
    close_call(/*terminated=*/true, events);
    return true;
  }
  if (!at_end) return false;
  body_ += pending_;
  pending_.clear();
  stream_preview(events);
  close_call(/*terminated=*/false, events);
  return true;
}

void MarkedOutputParser::open_call(size_t syntax, std::string begin_marker) {
  mode_ = Mode::kCall;
  call_syntax_ = syntax;
  call_begin_ = std::move(begin_marker);
  body_.clear();
}

void MarkedOutputParser::close_call(bool terminated, std::vector<ParseEvent>& events) {
  const CallSyntax& call = syntax_.calls[call_syntax_];
  Result<std::vector<ParsedCall>> calls = call.parse(body_);
  const std::vector<ParsedCall>* parsed = calls.ok() && !calls->empty() ? &*calls : nullptr;
  if (parsed != nullptr &&
      !std::all_of(parsed->begin(), parsed->end(), [&](const ParsedCall& c) { return names_a_tool(c.name); })) {
    parsed = nullptr;  // a call to no tool of the request's is text
  }
  bool kept = parsed != nullptr;
  if (stream_.began()) {
    kept = stream_.finish(parsed, builder_, events);
  } else if (parsed != nullptr) {
    for (const ParsedCall& parsed_call : *parsed) builder_.add_call(parsed_call, events);
  }
  if (!kept) {
    // Malformed markup stays visible, verbatim, as content.
    builder_.add_content(call_begin_ + body_ + (terminated ? call.end : std::string()), events);
  }
  body_.clear();
  mode_ = Mode::kContent;
  awaiting_bare_json_ = syntax_.bare_json_call.has_value();
}

void MarkedOutputParser::stream_preview(std::vector<ParseEvent>& events) {
  const CallSyntax& call = syntax_.calls[call_syntax_];
  if (!call.preview) return;
  std::optional<CallPreview> preview = call.preview(body_);
  // Not announced until it names one of the request's tools.
  if (preview && !stream_.began() && !names_a_tool(preview->name)) return;
  stream_.update(std::move(preview), builder_, events);
}

bool MarkedOutputParser::names_a_tool(std::string_view name) const {
  return tool_names_.empty() || std::find(tool_names_.begin(), tool_names_.end(), name) != tool_names_.end();
}

}  // namespace met
