// find_marker: where the first of several markers starts in streamed text,
// telling a marker that is complete from one cut off by the end of the text
// (which must be held back until the next delta decides it).
// Invariants: pure function. Threading: any. Tested by tests/chat/marker_match_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace met {

struct MarkerMatch {
  size_t pos = 0;     // where the marker starts in the text
  size_t marker = 0;  // index into the markers
  bool partial = false;  // the text ends inside a marker (or a longer one may still match)
};

// The earliest position where a marker matches fully, or where the text's
// tail is a proper prefix of a marker. At that position a partial match wins
// over a full one (a longer marker may still complete); among full matches the
// longest wins. Empty markers never match.
std::optional<MarkerMatch> find_marker(std::string_view text, std::span<const std::string> markers);

}  // namespace met
