// UiState: what the operator chose (view, sort, filters, the selected request,
// pause), and handle_key(), which applies one key press to it and says what
// the loop must do (quit, cancel the selected request).
// Invariants: the selection is a request id, so it follows its request as the
// rows re-sort between polls; settle_selection() moves it to the first
// visible row when its request is gone or filtered out. Keys are plain ints:
// printable ASCII as itself, the rest as the kKey* constants below (the
// terminal adapter maps ncurses' codes onto them).
// Threading: pure. Tested by tests/top/top_keys_test.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "top/request_table.h"

namespace met::top {

inline constexpr int kKeyUp = 0x10001;
inline constexpr int kKeyDown = 0x10002;
inline constexpr int kKeyPageUp = 0x10003;
inline constexpr int kKeyPageDown = 0x10004;
inline constexpr int kKeyEnter = '\n';
inline constexpr int kKeyEscape = 27;

enum class View { kTable, kTimeline, kHelp, kConfirmCancel };

struct UiState {
  View view = View::kTable;
  TableFilter filter;
  TableOrder order;
  std::optional<std::string> selected_id;
  bool paused = false;
  std::string flash;  // a one-line answer to the last action, shown until the next key
};

enum class KeyEffect { kNone, kQuit, kCancelSelected };

// `rows`: the table as shown; `tenants`: the tenants the filter cycles through.
KeyEffect handle_key(UiState& ui, int key, const std::vector<const RequestRow*>& rows,
                     const std::vector<std::string>& tenants);

void settle_selection(UiState& ui, const std::vector<const RequestRow*>& rows);

// The selected request among `rows`, if it is there.
const RequestRow* selected_row(const UiState& ui, const std::vector<const RequestRow*>& rows);

}  // namespace met::top
