// TextChannel: one text stream of a message (reasoning or content) that trims
// whitespace where markup was cut out, so "<think>\nplan\n</think>\n\nanswer"
// gives "plan" and "answer". Trailing whitespace is held until non-whitespace
// follows (then it is emitted unchanged) or a boundary drops it.
// Invariants: with trimming off, take() returns its input unchanged; with it
// on, the concatenation of everything returned never begins after a boundary
// with whitespace nor ends before one with it.
// Threading: one owner. Tested by tests/chat/text_channel_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace met {

class TextChannel {
 public:
  // `trims`: hold and trim whitespace at boundaries. `starts_at_boundary`:
  // leading whitespace of the very first text is dropped too.
  TextChannel(bool trims, bool starts_at_boundary) : trims_(trims), at_boundary_(starts_at_boundary) {}

  // The part of `text` that is decided now.
  std::string take(std::string_view text);
  // Markup was cut out here: held whitespace is dropped, and so is leading
  // whitespace of the text that follows.
  void boundary();
  // The stream ends: held whitespace if `keep_trailing`, else nothing.
  std::string finish(bool keep_trailing);

 private:
  bool trims_;
  bool at_boundary_;
  std::string held_;
};

}  // namespace met
