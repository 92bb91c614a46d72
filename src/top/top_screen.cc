// layout_screen (top_screen.h): a GridBuilder appends styled lines; one
// function per pane.
// Threading: pure. Tested by tests/top/top_screen_test.cc.
#include "top/top_screen.h"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>

#include "top/top_format.h"

namespace met::top {
namespace {

constexpr int kMinWidth = 40;
constexpr int kMinHeight = 12;
constexpr size_t kGaugeLabel = 10;
constexpr size_t kGaugeValue = 8;

class GridBuilder {
 public:
  GridBuilder(int width, int height) : width_(static_cast<size_t>(width)), height_(static_cast<size_t>(height)) {}
  void add(const std::string& text, LineStyle style = LineStyle::kNormal) {
    if (grid_.lines.size() >= std::min(height_, limit_)) return;
    grid_.lines.push_back(fit(text, width_));
    grid_.styles.push_back(style);
  }
  // Breaks `text` at spaces into lines of the grid's width.
  void add_wrapped(const std::string& text, LineStyle style) {
    std::string rest = text;
    while (!rest.empty()) {
      size_t cut = rest.size() <= width_ ? rest.size() : rest.rfind(' ', width_);
      if (cut == std::string::npos || cut == 0) cut = std::min(width_, rest.size());
      add(rest.substr(0, cut), style);
      rest.erase(0, std::min(rest.size(), cut + (cut < rest.size() && rest[cut] == ' ' ? 1 : 0)));
    }
  }
  size_t used() const { return grid_.lines.size(); }
  // Lines past `limit` are dropped until set_limit() is called again.
  void set_limit(size_t limit) { limit_ = limit; }
  size_t width() const { return width_; }
  size_t height() const { return height_; }
  Grid finish(const std::string& last_line, LineStyle style) {
    limit_ = SIZE_MAX;
    while (grid_.lines.size() + 1 < height_) add("");
    add(last_line, style);
    return std::move(grid_);
  }

 private:
  size_t width_;
  size_t height_;
  size_t limit_ = SIZE_MAX;
  Grid grid_;
};

std::string title_line(const ScreenInput& in) {
  std::string s = "met top  " + in.url;
  const auto& snap = in.model->snapshot();
  if (snap) s += "  up " + fmt_duration(snap->engine.uptime_ms);
  s += fmt::format("  every {:g}s", in.interval_s);
  if (in.ui->paused) s += "  [PAUSED]";
  return s;
}

using SampleFn = std::function<double(const Sample&)>;

std::string gauge(const std::string& label, const std::string& value, const History& h, const SampleFn& fn,
                  std::optional<double> max, size_t width) {
  const size_t spark = width > kGaugeLabel + kGaugeValue + 2 ? width - kGaugeLabel - kGaugeValue - 2 : 0;
  return fit(label, kGaugeLabel) + fit_right(value, kGaugeValue) + " " + sparkline(h.samples(), fn, max, spark) + " ";
}

void add_gauges(GridBuilder& g, const TopModel& m) {
  const History& h = m.history();
  const size_t half = g.width() / 2;
  const EngineCounters e = m.snapshot() ? m.snapshot()->engine : EngineCounters{};
  const Rates& r = m.rates();
  auto count = [](int64_t n) { return fmt_count(n); };
  g.add(gauge("running", count(e.running), h, [](const Sample& s) { return s.running; }, std::nullopt, half) +
        gauge("waiting", count(e.waiting), h, [](const Sample& s) { return s.waiting; }, std::nullopt, half));
  const std::string kv = fmt_percent(kv_usage(e));
  g.add(gauge("swapped", count(e.swapped), h, [](const Sample& s) { return s.swapped; }, std::nullopt, half) +
        gauge("kv used", kv, h, [](const Sample& s) { return s.kv_usage; }, 1.0, half));
  g.add(gauge("cache hit", fmt_percent(r.cache_hit_rate), h, [](const Sample& s) { return s.cache_hit_rate; }, 1.0,
              half) +
        gauge("busy", fmt_percent(r.device_busy_share), h, [](const Sample& s) { return s.device_busy_share; },
              1.0, half));
  g.add(gauge("tok/s in", fmt_rate(r.prompt_tokens_per_s), h,
              [](const Sample& s) { return s.prompt_tokens_per_s; }, std::nullopt, half) +
        gauge("tok/s out", fmt_rate(r.output_tokens_per_s), h,
              [](const Sample& s) { return s.output_tokens_per_s; }, std::nullopt, half));
}

std::string table_header(const TableOrder& order) {
  auto h = [&](SortColumn c, const char* name, size_t w, bool right) {
    std::string label = name;
    if (order.column == c) label += order.descending ? "v" : "^";
    return right ? fit_right(label, w) : fit(label, w);
  };
  return h(SortColumn::kId, "ID", 8, false) + " " + h(SortColumn::kTenant, "TENANT", 10, false) + " " +
         h(SortColumn::kState, "STATE", 9, false) + " " + h(SortColumn::kPrompt, "PROMPT", 6, true) + " " +
         h(SortColumn::kCached, "CACHED", 6, true) + " " + h(SortColumn::kOutput, "OUTPUT", 6, true) + " " +
         h(SortColumn::kTokensPerS, "TOK/S", 6, true) + " " + h(SortColumn::kTtft, "TTFT", 6, true) + " " +
         h(SortColumn::kAge, "AGE", 6, true) + " " + h(SortColumn::kPreemptions, "PRE", 3, true);
}

std::string tenant_name(const std::string& t) { return t.empty() ? "-" : t; }

std::string table_row(const RequestRow& r, int64_t now_ms) {
  return fit(r.id, 8) + " " + fit(tenant_name(r.tenant), 10) + " " + fit(r.state, 9) + " " +
         fit_right(fmt_count(r.prompt_tokens), 6) + " " + fit_right(fmt_count(r.cached_tokens), 6) + " " +
         fit_right(fmt_count(r.output_tokens), 6) + " " + fit_right(fmt_rate(tokens_per_s(r, now_ms)), 6) + " " +
         fit_right(fmt_duration(ttft_ms(r)), 6) + " " + fit_right(fmt_duration(age_ms(r, now_ms)), 6) + " " +
         fit_right(fmt_count(r.preemptions), 3);
}

// The rows around the selection that fit in `lines`.
void add_table(GridBuilder& g, const ScreenInput& in, size_t lines) {
  g.add(table_header(in.ui->order), LineStyle::kHeader);
  const auto& rows = *in.rows;
  if (rows.empty()) {
    g.add(in.model->snapshot() ? "  no requests" + std::string(in.ui->filter.tenant || in.ui->filter.state
                                                                   ? " match the filter (t, f change it)"
                                                                   : " in flight")
                               : "");
    return;
  }
  const size_t shown = lines > 1 ? lines - 1 : 0;
  size_t at = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (in.ui->selected_id && rows[i]->id == *in.ui->selected_id) at = i;
  }
  const size_t first = at < shown ? 0 : at - shown + 1;
  const int64_t now_ms = in.model->snapshot()->now_ms;
  for (size_t i = first; i < rows.size() && i < first + shown; ++i) {
    g.add(table_row(*rows[i], now_ms), i == at ? LineStyle::kSelected : LineStyle::kNormal);
  }
}

void add_timeline(GridBuilder& g, const ScreenInput& in) {
  const RequestRow* r = selected_row(*in.ui, *in.rows);
  if (r == nullptr) return;
  g.add(fmt::format("request {}  tenant {}  adapter {}  state {}", r->id, tenant_name(r->tenant),
                    r->adapter.empty() ? "-" : r->adapter, r->state),
        LineStyle::kHeader);
  g.add(fmt::format("prompt {}  cached {}  output {}  kv blocks {}  preemptions {}  ttft {}", r->prompt_tokens,
                    r->cached_tokens, r->output_tokens, r->kv_blocks, r->preemptions, fmt_duration(ttft_ms(*r))));
  if (!r->finish_reason.empty()) g.add("finish: " + r->finish_reason);
  const int64_t origin = r->queued_ms.value_or(r->timeline.empty() ? 0 : r->timeline.front().ms);
  for (const TimelineEvent& ev : r->timeline) {
    g.add(fmt::format("  {:<8}  {:<12} {}", "+" + fmt_duration(ev.ms - origin), ev.event, ev.detail));
  }
  g.add("  (Enter or Esc returns to the table)");
}

void add_help(GridBuilder& g) {
  g.add("keys", LineStyle::kHeader);
  for (const char* line : {"  Up/Down j/k  select a request      Enter  its timeline (Enter/Esc back)",
                           "  s  sort by the next column          r      reverse the sort",
                           "  t  filter by the next tenant        f      filter by the next state",
                           "  c  cancel the selected request (asks y/n; needs the admin key)",
                           "  p  pause / resume the display       ?      this help      q  quit"}) {
    g.add(line);
  }
}

void add_tenants(GridBuilder& g, const Snapshot& s, size_t lines) {
  if (lines < 2 || s.tenants.empty()) return;
  g.add(fit("TENANT", 16) + fit_right("REQS", 6) + fit_right("RUN", 5) + fit_right("PROMPT", 9) +
            fit_right("OUTPUT", 9) + fit_right("HIT", 7) + fit_right("KV", 7),
        LineStyle::kHeader);
  for (size_t i = 0; i + 1 < lines && i < s.tenants.size(); ++i) {
    const TenantRow& t = s.tenants[i];
    const std::optional<double> hit =
        t.cache_query_tokens > 0
            ? std::optional<double>(static_cast<double>(t.cache_hit_tokens) / static_cast<double>(t.cache_query_tokens))
            : std::nullopt;
    g.add(fit(tenant_name(t.tenant), 16) + fit_right(fmt_count(t.requests), 6) + fit_right(fmt_count(t.running), 5) +
          fit_right(fmt_count(t.prompt_tokens), 9) + fit_right(fmt_count(t.output_tokens), 9) +
          fit_right(fmt_percent(hit), 7) + fit_right(fmt_count(t.kv_blocks), 7));
  }
}

std::string bottom_line(const ScreenInput& in) {
  if (in.ui->view == View::kConfirmCancel) {
    return "cancel request " + in.ui->selected_id.value_or("?") + "? y cancels it, any other key keeps it";
  }
  if (!in.ui->flash.empty()) return in.ui->flash;
  return "q quit  ? help  s/r sort  t/f filter  Enter timeline  c cancel  p pause";
}

}  // namespace

Grid layout_screen(const ScreenInput& in, int width, int height) {
  GridBuilder g(std::max(width, 1), std::max(height, 1));
  if (width < kMinWidth || height < kMinHeight) {
    g.add_wrapped(fmt::format("met top needs a terminal of at least {}x{}", kMinWidth, kMinHeight), LineStyle::kAlert);
    return g.finish("q quits", LineStyle::kTitle);
  }
  g.add(title_line(in), LineStyle::kTitle);
  const TopModel& m = *in.model;
  if (!m.snapshot()) {
    g.add("");
    g.add_wrapped(m.problem().empty() ? "waiting for the first answer from " + in.url : m.problem(),
                  LineStyle::kAlert);
    if (!m.problem().empty()) g.add(fmt::format("retrying every {:g}s; q quits", in.interval_s));
    return g.finish(bottom_line(in), LineStyle::kTitle);
  }
  add_gauges(g, m);
  if (!m.problem().empty()) {
    g.add("stale: " + m.problem() + " (retrying)", LineStyle::kAlert);
  } else {
    g.add("");
  }
  const Snapshot& s = *m.snapshot();
  const size_t free_lines = g.height() - g.used() - 1;
  const size_t tenant_lines = s.tenants.empty() ? 0 : std::min<size_t>(s.tenants.size() + 1, free_lines / 4);
  g.set_limit(g.height() - 1 - tenant_lines);
  switch (in.ui->view) {
    case View::kTable:
    case View::kConfirmCancel: add_table(g, in, free_lines - tenant_lines); break;
    case View::kTimeline: add_timeline(g, in); break;
    case View::kHelp: add_help(g); break;
  }
  while (g.used() + tenant_lines + 1 < g.height()) g.add("");
  g.set_limit(SIZE_MAX);
  add_tenants(g, s, tenant_lines);
  return g.finish(bottom_line(in), LineStyle::kTitle);
}

}  // namespace met::top
