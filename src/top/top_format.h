// Short fixed-width figures for the dashboard: durations, token counts,
// rates, percentages, and ASCII sparklines (plain ASCII, so any terminal and
// any SSH session draws them).
// Invariants: fmt_duration and fmt_count fit in 6 columns for any input;
// nullopt prints as "-"; sparkline() returns exactly `width` characters.
// Threading: pure. Tested by tests/top/top_format_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

namespace met::top {

std::string fmt_duration(std::optional<int64_t> ms);  // "850ms", "12.3s", "4m05s", "3h07m", "12d"
std::string fmt_count(int64_t n);                     // "999999" → "1000k" → "12.3M"
std::string fmt_rate(std::optional<double> per_s);    // "12.5", "1234", "12.3k"
std::string fmt_percent(std::optional<double> share);  // 0..1 → "42.0%"

// The last `width` values of `samples` (read through `value`), scaled to
// `max` (or to the largest value shown when max is nullopt), as levels
// "_.-=+*#%@", right-aligned and left-padded with spaces.
template <class Sample>
std::string sparkline(const std::deque<Sample>& samples, const std::function<double(const Sample&)>& value,
                      std::optional<double> max, size_t width);

// Pads with spaces or cuts to exactly `width` columns.
std::string fit(const std::string& s, size_t width);
std::string fit_right(const std::string& s, size_t width);

// One character per level, for the value v in [0, max].
char spark_level(double v, double max);

template <class Sample>
std::string sparkline(const std::deque<Sample>& samples, const std::function<double(const Sample&)>& value,
                      std::optional<double> max, size_t width) {
  const size_t n = samples.size() < width ? samples.size() : width;
  const size_t first = samples.size() - n;
  double top = max.value_or(0.0);
  if (!max) {
    for (size_t i = first; i < samples.size(); ++i) top = std::max(top, value(samples[i]));
  }
  std::string out(width - n, ' ');
  for (size_t i = first; i < samples.size(); ++i) out += spark_level(value(samples[i]), top);
  return out;
}

}  // namespace met::top
