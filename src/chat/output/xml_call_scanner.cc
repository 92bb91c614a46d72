// XmlCallScanner: see xml_call_scanner.h.
// Tested by tests/chat/tool_body_xml_test.cc and output_parser_test.cc.
#include "chat/output/xml_call_scanner.h"

#include <nlohmann/json.hpp>

#include "chat/output/marker_match.h"
#include "chat/output/tool_body_json.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

// A parameter's value: JSON when it parses as a non-string, else the text.
Json typed_value(std::string_view text) {
  Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!value.is_discarded() && !value.is_string()) return value;
  return Json(std::string(text));
}

// True when no JSON value other than a string can start with `c`.
bool starts_only_strings(char c) {
  return std::string_view("{[\"-0123456789tfn \t\r\n").find(c) == std::string_view::npos;
}

// `text` without a trailing, incomplete UTF-8 sequence.
std::string_view whole_code_points(std::string_view text) {
  size_t back = 0;
  while (back < text.size() && back < 4 && (static_cast<unsigned char>(text[text.size() - 1 - back]) & 0xC0) == 0x80) {
    ++back;
  }
  if (back == text.size()) return text;
  const auto lead = static_cast<unsigned char>(text[text.size() - 1 - back]);
  const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return need > back + 1 ? text.substr(0, text.size() - 1 - back) : text;
}

class ArgumentsText {
 public:
  void add(std::string_view key, const Json& value) { pieces_.push_back(open_key(key) + dump_compact(value)); }
  // A string value still arriving: its escaped text so far, without the closing quote.
  void add_open_string(std::string_view key, std::string_view text) {
    std::string escaped = dump_compact(Json(std::string(text)));
    escaped.pop_back();
    pieces_.push_back(open_key(key) + escaped);
    in_string_ = true;
  }
  std::string closing() const { return pieces_.empty() ? "{}" : in_string_ ? "\"}" : "}"; }
  std::vector<std::string> finish() && {
    pieces_.push_back(pieces_.empty() ? "{}" : "}");
    return std::move(pieces_);
  }
  std::vector<std::string> take() && { return std::move(pieces_); }

 private:
  std::string open_key(std::string_view key) const {
    return (pieces_.empty() ? "{" : ",") + dump_compact(Json(std::string(key))) + ":";
  }
  std::vector<std::string> pieces_;
  bool in_string_ = false;
};

struct Key {
  std::string name;
  bool is_string = false;
};

Key read_key(std::string_view text, const XmlCallSyntax& syntax) {
  if (!syntax.key_has_attributes) return Key{std::string(trim_space(text)), false};
  return Key{std::string(text.substr(0, text.find('"'))), text.find("string=\"true\"") != std::string_view::npos};
}

std::string_view strip_newlines(std::string_view text) {
  if (text.starts_with('\n')) text.remove_prefix(1);
  if (text.ends_with('\n')) text.remove_suffix(1);
  return text;
}

// Where an unclosed value ends: the first of value_close and value_stops.
std::optional<MarkerMatch> value_end(std::string_view body, size_t from, const XmlCallSyntax& syntax) {
  std::vector<std::string> markers = syntax.value_stops;
  markers.insert(markers.begin(), syntax.value_close);
  std::optional<MarkerMatch> match = find_marker(body.substr(from), markers);
  if (match) match->pos += from;
  return match;
}

}  // namespace

namespace {

void add_closed_value(ArgumentsText& args, const Key& key, std::string_view text, const XmlCallSyntax& syntax) {
  if (syntax.strip_value_newlines) text = strip_newlines(text);
  args.add(key.name, key.is_string ? Json(std::string(text)) : typed_value(text));
}

// A value still arriving: streamed only once it is surely a string; a
// newline that may be the one stripped at the end is held back.
void add_open_value(ArgumentsText& args, const Key& key, std::string_view text, const XmlCallSyntax& syntax) {
  if (syntax.strip_value_newlines && text.starts_with('\n')) text.remove_prefix(1);
  if (text.empty() || (!key.is_string && !starts_only_strings(text.front()))) return;
  if (syntax.strip_value_newlines && text.ends_with('\n')) text.remove_suffix(1);
  args.add_open_string(key.name, whole_code_points(text));
}

// Reads parameters from `pos`. A complete body sets `end`; a partial one stops
// quietly where the text runs out.
Status scan_parameters(std::string_view body, size_t pos, const XmlCallSyntax& s, bool complete,
                       ArgumentsText& args, size_t& end) {
  for (;;) {
    const size_t call_end = s.call_close.empty() ? std::string_view::npos : body.find(s.call_close, pos);
    const size_t key_at = body.find(s.key_open, pos);
    if (key_at == std::string_view::npos || key_at > call_end) {
      end = call_end == std::string_view::npos ? body.size() : call_end + s.call_close.size();
      return ok_status();
    }
    pos = key_at + s.key_open.size();
    const size_t key_end = body.find(s.key_close, pos);
    if (key_end == std::string_view::npos) return invalid_argument("tool call: unterminated parameter name");
    const Key key = read_key(body.substr(pos, key_end - pos), s);
    pos = key_end + s.key_close.size();
    if (!s.value_open.empty()) {
      const size_t value_at = body.find(s.value_open, pos);
      if (value_at == std::string_view::npos) return invalid_argument("tool call: parameter without value");
      pos = value_at + s.value_open.size();
    }
    const std::optional<MarkerMatch> value_stop = value_end(body, pos, s);
    if (value_stop && !value_stop->partial) {
      add_closed_value(args, key, body.substr(pos, value_stop->pos - pos), s);
      pos = value_stop->pos + (value_stop->marker == 0 ? s.value_close.size() : 0);
    } else if (complete) {
      add_closed_value(args, key, body.substr(pos), s);
      pos = body.size();
    } else {
      add_open_value(args, key, body.substr(pos, (value_stop ? value_stop->pos : body.size()) - pos), s);
      return ok_status();
    }
  }
}

Result<std::string> scan_name(std::string_view body, size_t& pos, const XmlCallSyntax& s, bool complete) {
  if (!s.name_open.empty()) {
    pos = body.find(s.name_open, pos);
    if (pos == std::string_view::npos) return invalid_argument("tool call: no {}", s.name_open);
    pos += s.name_open.size();
  }
  size_t name_end = body.find(s.name_close, pos);
  if (name_end == std::string_view::npos) {
    if (!complete || !s.name_close_opens_key) return invalid_argument("tool call: unterminated function name");
    name_end = s.call_close.empty() ? body.size() : std::min(body.find(s.call_close, pos), body.size());
  }
  std::string name(trim_space(body.substr(pos, name_end - pos)));
  if (name.empty() || name.find('<') != std::string::npos) return invalid_argument("tool call: no function name");
  pos = s.name_close_opens_key ? name_end : name_end + s.name_close.size();
  return name;
}

Result<XmlScan> scan(std::string_view body, size_t pos, const XmlCallSyntax& s, bool complete) {
  Result<std::string> name = scan_name(body, pos, s, complete);
  if (!name.ok()) return name.status();
  XmlScan out;
  out.name = std::move(*name);
  ArgumentsText args;
  Status status = scan_parameters(body, pos, s, complete, args, out.end);
  if (!status.ok() && complete) return status;
  out.closing = args.closing();
  out.argument_pieces = complete ? std::move(args).finish() : std::move(args).take();
  return out;
}

}  // namespace

Result<XmlScan> scan_complete_call(std::string_view body, size_t pos, const XmlCallSyntax& syntax) {
  return scan(body, pos, syntax, /*complete=*/true);
}

std::optional<XmlScan> scan_partial_call(std::string_view body, const XmlCallSyntax& syntax) {
  Result<XmlScan> scanned = scan(body, 0, syntax, /*complete=*/false);
  if (!scanned.ok()) return std::nullopt;
  return std::move(*scanned);
}

}  // namespace met
