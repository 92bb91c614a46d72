// run_top (top_loop.h): the ncurses adapter and the poll/key loop.
// Threading: the main thread. Tested by tests/top/top_tmux_test.cc.
#include "top/top_loop.h"

#include <curses.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "top/top_http.h"
#include "top/top_keys.h"
#include "top/top_model.h"
#include "top/top_screen.h"

namespace met::top {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kHistoryCapacity = 240;
constexpr int kKeyWaitMs = 100;
constexpr int kEscapeDelayMs = 50;

// initscr() .. endwin(), so every return restores the terminal.
class CursesSession {
 public:
  CursesSession() {
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(kEscapeDelayMs);  // Esc alone closes a view without ncurses' default 1 s wait
    timeout(kKeyWaitMs);
  }
  ~CursesSession() { endwin(); }
  CursesSession(const CursesSession&) = delete;
  CursesSession& operator=(const CursesSession&) = delete;
};

int style_attr(LineStyle style) {
  switch (style) {
    case LineStyle::kNormal: return A_NORMAL;
    case LineStyle::kTitle: return A_REVERSE;
    case LineStyle::kHeader: return A_BOLD | A_UNDERLINE;
    case LineStyle::kSelected: return A_REVERSE;
    case LineStyle::kAlert: return A_BOLD;
  }
  return A_NORMAL;
}

void paint(const Grid& grid) {
  erase();
  for (size_t i = 0; i < grid.lines.size(); ++i) {
    const int attr = style_attr(grid.styles[i]);
    attron(attr);
    // The last column of the last line is left alone: writing it scrolls some terminals.
    const int n = static_cast<int>(grid.lines[i].size()) - (i + 1 == grid.lines.size() ? 1 : 0);
    mvaddnstr(static_cast<int>(i), 0, grid.lines[i].c_str(), n);
    attroff(attr);
  }
  refresh();
}

// ncurses' key codes onto handle_key's; -1 for none.
int map_key(int ch) {
  switch (ch) {
    case KEY_UP: return kKeyUp;
    case KEY_DOWN: return kKeyDown;
    case KEY_PPAGE: return kKeyPageUp;
    case KEY_NPAGE: return kKeyPageDown;
    case KEY_ENTER: return kKeyEnter;
    default: return ch >= 0 && ch < 256 ? ch : -1;
  }
}

std::string cancel(TopHttp& http, const std::string& id, bool sent_key) {
  const Result<HttpAnswer> answer = http.post("/v1/requests/" + id + "/cancel");
  if (!answer.ok()) return "cancel " + id + ": " + answer.status().message();
  if (answer->status == 200) return "cancelled request " + id;
  if (answer->status == 404) return "cancel " + id + ": it is no longer in flight";
  return "cancel " + id + ": " + describe_http_failure(*answer, sent_key);
}

std::vector<std::string> tenants_of(const TopModel& model) {
  std::vector<std::string> tenants;
  if (!model.snapshot()) return tenants;
  for (const TenantRow& t : model.snapshot()->tenants) tenants.push_back(t.tenant);
  return tenants;
}

}  // namespace

Status run_top(const TopOptions& options) {
  if (isatty(STDIN_FILENO) == 0 || isatty(STDOUT_FILENO) == 0) {
    return invalid_argument("met top draws on a terminal: run it in one (stdin and stdout are not a tty)");
  }
  const long timeout_ms = std::max(1000L, static_cast<long>(options.interval_s * 2000));
  std::unique_ptr<TopHttp> http = make_curl_http({options.url, options.api_key, timeout_ms});
  TopModel model(kHistoryCapacity, !options.api_key.empty());
  UiState ui;
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(options.interval_s * 1000));
  CursesSession session;
  Clock::time_point next_poll = Clock::now();
  for (;;) {
    if (!ui.paused && Clock::now() >= next_poll) {
      model.on_poll(http->get("/v1/requests"));
      next_poll = Clock::now() + interval;
    }
    static const Snapshot kEmpty;
    const Snapshot& snap = model.snapshot() ? *model.snapshot() : kEmpty;
    const std::vector<const RequestRow*> rows = visible_rows(snap, ui.filter, ui.order);
    settle_selection(ui, rows);
    paint(layout_screen({options.url, options.interval_s, &model, &ui, &rows}, COLS, LINES));
    const int key = map_key(getch());
    if (key < 0) continue;  // timeout or KEY_RESIZE: the next paint takes the new size
    switch (handle_key(ui, key, rows, tenants_of(model))) {
      case KeyEffect::kNone: break;
      case KeyEffect::kQuit: return ok_status();
      case KeyEffect::kCancelSelected:
        ui.flash = cancel(*http, ui.selected_id.value_or(""), !options.api_key.empty());
        next_poll = Clock::now();
        break;
    }
  }
}

}  // namespace met::top
