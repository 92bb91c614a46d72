// MessageBlocks and ContentFold. Tested by tests/server/messages_encoder_test.cc.
#include "server/messages_blocks.h"

#include <utility>
#include <variant>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

bool only_whitespace(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

Json block_delta(size_t index, Json delta) {
  return Json{{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(delta)}};
}

}  // namespace

std::string tool_use_id(const std::string& call_id) {
  constexpr std::string_view kCall = "call_";
  return "toolu_" + (call_id.starts_with(kCall) ? call_id.substr(kCall.size()) : call_id);
}

void MessageBlocks::open(Kind kind, Json block, std::vector<Json>& out) {
  if (open_ != Kind::kNone) {
    if (open_ == Kind::kThinking) {
      out.push_back(block_delta(num_blocks_ - 1, Json{{"type", "signature_delta"}, {"signature", ""}}));
    }
    out.push_back(Json{{"type", "content_block_stop"}, {"index", num_blocks_ - 1}});
    open_ = Kind::kNone;
  }
  if (kind == Kind::kNone) return;
  out.push_back(Json{{"type", "content_block_start"}, {"index", num_blocks_}, {"content_block", std::move(block)}});
  open_ = kind;
  ++num_blocks_;
}

void MessageBlocks::add_text(Kind kind, const std::string& text, std::vector<Json>& out) {
  if (text.empty()) return;
  std::string piece = text;
  if (open_ != kind) {
    if (held_kind_ != kind) held_.clear();
    held_kind_ = kind;
    held_ += text;
    if (only_whitespace(held_)) return;
    piece = std::move(held_);
    held_.clear();
    held_kind_ = Kind::kNone;
    open(kind,
         kind == Kind::kThinking ? Json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}
                                 : Json{{"type", "text"}, {"text", ""}},
         out);
  }
  Json delta = kind == Kind::kThinking ? Json{{"type", "thinking_delta"}, {"thinking", std::move(piece)}}
                                       : Json{{"type", "text_delta"}, {"text", std::move(piece)}};
  out.push_back(block_delta(num_blocks_ - 1, std::move(delta)));
}

void MessageBlocks::add(const ParseEvent& event, std::vector<Json>& out) {
  if (const auto* r = std::get_if<ReasoningDelta>(&event)) return add_text(Kind::kThinking, r->text, out);
  if (const auto* c = std::get_if<ContentDelta>(&event)) return add_text(Kind::kText, c->text, out);
  if (const auto* b = std::get_if<ToolCallBegin>(&event)) {
    held_.clear();
    held_kind_ = Kind::kNone;
    tool_blocks_[b->index] = num_blocks_;
    open(Kind::kToolUse,
         Json{{"type", "tool_use"}, {"id", tool_use_id(b->id)}, {"name", b->name}, {"input", Json::object()}}, out);
    return;
  }
  const auto& a = std::get<ToolCallArgumentsDelta>(event);
  const auto block = tool_blocks_.find(a.index);
  if (a.text.empty() || block == tool_blocks_.end()) return;
  out.push_back(block_delta(block->second, Json{{"type", "input_json_delta"}, {"partial_json", a.text}}));
}

void MessageBlocks::close(std::vector<Json>& out) {
  held_.clear();
  held_kind_ = Kind::kNone;
  open(Kind::kNone, Json(), out);
}

void ContentFold::add(const Json& event) {
  const std::string& type = event.at("type").get_ref<const std::string&>();
  const size_t index = event.value("index", size_t{0});
  if (type == "content_block_start") {
    content_.push_back(event.at("content_block"));
    return;
  }
  if (index >= content_.size()) return;
  Json& block = content_[index];
  if (type == "content_block_stop" && block.at("type") == "tool_use") {
    Json input = Json::parse(input_json_[index], nullptr, /*allow_exceptions=*/false);
    block["input"] = input.is_object() ? std::move(input) : Json::object();
    return;
  }
  if (type != "content_block_delta") return;
  const Json& delta = event.at("delta");
  const std::string& kind = delta.at("type").get_ref<const std::string&>();
  if (kind == "text_delta") block["text"].get_ref<std::string&>() += delta.at("text").get_ref<const std::string&>();
  if (kind == "thinking_delta") {
    block["thinking"].get_ref<std::string&>() += delta.at("thinking").get_ref<const std::string&>();
  }
  if (kind == "signature_delta") block["signature"] = delta.at("signature");
  if (kind == "input_json_delta") input_json_[index] += delta.at("partial_json").get_ref<const std::string&>();
}

}  // namespace met
