// run_top(): `met top`'s loop. It polls GET /v1/requests every interval
// through TopHttp, feeds TopModel, lays the screen out with layout_screen()
// and paints it with ncurses, and reads keys (handle_key) between polls;
// a cancel is POST /v1/requests/{id}/cancel.
// Invariants: ncurses is confined to this file's .cc: it paints a Grid and
// maps key codes, nothing else. The terminal is restored on every exit path.
// A failed poll is shown on screen and retried; it never ends the loop.
// Threading: the main thread. Tested by tests/top/top_tmux_test.cc (the
// built `met top` in a tmux pane).
#pragma once

#include <string>

#include "core/status.h"

namespace met::top {

struct TopOptions {
  std::string url;      // "http://host:port"
  std::string api_key;  // the admin key, or an API key; may be empty
  double interval_s = 1.0;
};

Status run_top(const TopOptions& options);

}  // namespace met::top
