// TextChannel: see text_channel.h.
// Tested by tests/chat/text_channel_test.cc.
#include "chat/output/text_channel.h"

namespace met {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string TextChannel::take(std::string_view text) {
  if (!trims_) return std::string(text);
  if (at_boundary_) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    if (text.empty()) return {};
    at_boundary_ = false;
  }
  size_t keep = text.size();
  while (keep > 0 && is_space(text[keep - 1])) --keep;
  if (keep == 0) {
    held_ += text;
    return {};
  }
  std::string out = std::move(held_);
  out += text.substr(0, keep);
  held_ = std::string(text.substr(keep));
  return out;
}

void TextChannel::boundary() {
  held_.clear();
  at_boundary_ = true;
}

std::string TextChannel::finish(bool keep_trailing) {
  std::string out = keep_trailing ? std::move(held_) : std::string();
  held_.clear();
  return out;
}

}  // namespace met
