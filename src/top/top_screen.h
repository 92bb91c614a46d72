// layout_screen(): the whole dashboard as a grid of characters, one string
// per terminal line, each with a style, from the model and the UI state. The
// terminal adapter (top_loop.cc) only paints the grid, so every screen is
// testable without a terminal.
// Panes, top down: a title line; running / waiting / swapped, KV usage, cache
// hit rate, device busy share and tokens/s in and out with sparklines; the
// problem with the last poll, if any; the request table (or the selected
// request's timeline, or the help); per-tenant totals; a line of key hints
// (or the answer to the last key).
// Invariants: exactly `height` lines of exactly `width` characters, for any
// size (a terminal too small gets a line saying so); no input crashes it.
// Threading: pure. Tested by tests/top/top_screen_test.cc.
#pragma once

#include <string>
#include <vector>

#include "top/request_table.h"
#include "top/top_keys.h"
#include "top/top_model.h"

namespace met::top {

enum class LineStyle { kNormal, kTitle, kHeader, kSelected, kAlert };

struct Grid {
  std::vector<std::string> lines;
  std::vector<LineStyle> styles;
};

struct ScreenInput {
  std::string url;
  double interval_s = 1.0;
  const TopModel* model = nullptr;
  const UiState* ui = nullptr;
  const std::vector<const RequestRow*>* rows = nullptr;  // the table as filtered and sorted
};

Grid layout_screen(const ScreenInput& in, int width, int height);

}  // namespace met::top
