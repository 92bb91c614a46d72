// The dashboard's figures (top_format.h).
// Threading: pure. Tested by tests/top/top_format_test.cc.
#include "top/top_format.h"

#include <cmath>
#include <fmt/format.h>

namespace met::top {

std::string fmt_duration(std::optional<int64_t> ms) {
  if (!ms) return "-";
  const int64_t v = *ms < 0 ? 0 : *ms;
  if (v < 1000) return fmt::format("{}ms", v);
  if (v < 60'000) return fmt::format("{:.1f}s", static_cast<double>(v) / 1000.0);
  const int64_t s = v / 1000;
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 100 * 3600) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  if (s < 100'000 * 86400LL) return fmt::format("{}d", s / 86400);
  return ">99ky";
}

std::string fmt_count(int64_t n) {
  if (n < 0) return "-";
  if (n < 1'000'000) return fmt::format("{}", n);
  if (n < 10'000'000) return fmt::format("{:.2f}M", static_cast<double>(n) / 1e6);
  if (n < 1'000'000'000) return fmt::format("{}M", n / 1'000'000);
  if (n < 1'000'000'000'000) return fmt::format("{}G", n / 1'000'000'000);
  if (n < 1'000'000'000'000'000) return fmt::format("{}T", n / 1'000'000'000'000);
  return ">999T";
}

std::string fmt_rate(std::optional<double> per_s) {
  if (!per_s || !std::isfinite(*per_s)) return "-";
  const double v = *per_s < 0 ? 0 : *per_s;
  if (v < 100) return fmt::format("{:.1f}", v);
  if (v < 100'000) return fmt::format("{:.0f}", v);
  if (v < 1e8) return fmt::format("{:.0f}k", v / 1e3);
  return fmt::format("{:.0f}M", v / 1e6);
}

std::string fmt_percent(std::optional<double> share) {
  if (!share || !std::isfinite(*share)) return "-";
  return fmt::format("{:.1f}%", *share * 100.0);
}

std::string fit(const std::string& s, size_t width) {
  if (s.size() >= width) return s.substr(0, width);
  return s + std::string(width - s.size(), ' ');
}

std::string fit_right(const std::string& s, size_t width) {
  if (s.size() >= width) return s.substr(0, width);
  return std::string(width - s.size(), ' ') + s;
}

char spark_level(double v, double max) {
  static constexpr char kLevels[] = "_.-=+*#%@";
  constexpr int kTop = static_cast<int>(sizeof(kLevels)) - 2;
  if (!(max > 0) || !(v > 0)) return kLevels[0];
  const int level = static_cast<int>(std::lround(v / max * kTop));
  return kLevels[level < 0 ? 0 : (level > kTop ? kTop : level)];
}

}  // namespace met::top
