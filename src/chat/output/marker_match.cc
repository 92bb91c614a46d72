// find_marker: see marker_match.h.
// Tested by tests/chat/marker_match_test.cc.
#include "chat/output/marker_match.h"

namespace met {
namespace {

// The match of the markers at `pos`, if any.
std::optional<MarkerMatch> match_at(std::string_view text, size_t pos, std::span<const std::string> markers) {
  std::optional<MarkerMatch> best;
  const std::string_view tail = text.substr(pos);
  for (size_t i = 0; i < markers.size(); ++i) {
    const std::string& marker = markers[i];
    if (marker.empty()) continue;
    if (tail.size() < marker.size()) {
      if (std::string_view(marker).starts_with(tail)) return MarkerMatch{pos, i, true};
    } else if (tail.starts_with(marker)) {
      if (!best || markers[best->marker].size() < marker.size()) best = MarkerMatch{pos, i, false};
    }
  }
  return best;
}

}  // namespace

std::optional<MarkerMatch> find_marker(std::string_view text, std::span<const std::string> markers) {
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (std::optional<MarkerMatch> match = match_at(text, pos, markers)) return match;
  }
  return std::nullopt;
}

}  // namespace met
