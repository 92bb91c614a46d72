// Stop-string search. Tested by tests/tokenizer/stop_strings_test.cc.
#include "tokenizer/stop_strings.h"

#include <algorithm>

namespace met {

std::optional<StopHit> find_stop(std::string_view text, std::span<const std::string> stops) {
  std::optional<StopHit> best;
  for (size_t i = 0; i < stops.size(); ++i) {
    if (stops[i].empty()) continue;
    const size_t at = text.find(stops[i]);
    if (at == std::string_view::npos) continue;
    if (!best || at < best->position) best = StopHit{at, i};
  }
  return best;
}

size_t stop_prefix_suffix_length(std::string_view text, std::span<const std::string> stops) {
  size_t longest = 0;
  for (const std::string& stop : stops) {
    const size_t max_len = std::min(text.size(), stop.empty() ? size_t{0} : stop.size() - 1);
    for (size_t len = max_len; len > longest; --len) {
      if (text.substr(text.size() - len) == std::string_view(stop).substr(0, len)) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

}  // namespace met
