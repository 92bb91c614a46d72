// handle_key and the selection (top_keys.h).
// Threading: pure. Tested by tests/top/top_keys_test.cc.
#include "top/top_keys.h"

#include <algorithm>

namespace met::top {
namespace {

constexpr int kPageRows = 10;

void move_selection(UiState& ui, const std::vector<const RequestRow*>& rows, int delta) {
  if (rows.empty()) return;
  int at = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (ui.selected_id && rows[i]->id == *ui.selected_id) at = static_cast<int>(i);
  }
  at = std::clamp(at + delta, 0, static_cast<int>(rows.size()) - 1);
  ui.selected_id = rows[static_cast<size_t>(at)]->id;
}

// none → first → … → last → none
template <class T>
std::optional<T> cycle(const std::optional<T>& current, const std::vector<T>& values) {
  if (values.empty()) return std::nullopt;
  if (!current) return values.front();
  auto it = std::find(values.begin(), values.end(), *current);
  if (it == values.end() || it + 1 == values.end()) return std::nullopt;
  return *(it + 1);
}

std::string filter_flash(const UiState& ui) {
  std::string s = "filter: tenant ";
  s += ui.filter.tenant ? (ui.filter.tenant->empty() ? "-" : *ui.filter.tenant) : "all";
  s += ", state ";
  s += ui.filter.state ? *ui.filter.state : "all";
  return s;
}

KeyEffect confirm_key(UiState& ui, int key) {
  ui.view = View::kTable;
  if (key == 'y' || key == 'Y') return KeyEffect::kCancelSelected;
  ui.flash = "cancel: not sent";
  return KeyEffect::kNone;
}

}  // namespace

KeyEffect handle_key(UiState& ui, int key, const std::vector<const RequestRow*>& rows,
                     const std::vector<std::string>& tenants) {
  ui.flash.clear();
  if (ui.view == View::kConfirmCancel) return confirm_key(ui, key);
  switch (key) {
    case 'q': case 'Q': return KeyEffect::kQuit;
    case '?': case 'h': ui.view = ui.view == View::kHelp ? View::kTable : View::kHelp; break;
    case kKeyEscape: ui.view = View::kTable; break;
    case kKeyEnter: case '\r': case 'l':
      if (ui.view == View::kTimeline) {
        ui.view = View::kTable;
      } else if (selected_row(ui, rows) != nullptr) {
        ui.view = View::kTimeline;
      }
      break;
    case kKeyUp: case 'k': move_selection(ui, rows, -1); break;
    case kKeyDown: case 'j': move_selection(ui, rows, 1); break;
    case kKeyPageUp: move_selection(ui, rows, -kPageRows); break;
    case kKeyPageDown: move_selection(ui, rows, kPageRows); break;
    case 's':
      ui.order.column = next_column(ui.order.column);
      ui.flash = "sort: " + std::string(column_name(ui.order.column));
      break;
    case 'r': ui.order.descending = !ui.order.descending; break;
    case 't': ui.filter.tenant = cycle(ui.filter.tenant, tenants); ui.flash = filter_flash(ui); break;
    case 'f': ui.filter.state = cycle(ui.filter.state, request_states()); ui.flash = filter_flash(ui); break;
    case 'p': case ' ':
      ui.paused = !ui.paused;
      ui.flash = ui.paused ? "paused: p resumes" : "resumed";
      break;
    case 'c':
      if (selected_row(ui, rows) != nullptr) {
        ui.view = View::kConfirmCancel;
      } else {
        ui.flash = "cancel: no request selected";
      }
      break;
    default: break;
  }
  return KeyEffect::kNone;
}

void settle_selection(UiState& ui, const std::vector<const RequestRow*>& rows) {
  if (selected_row(ui, rows) != nullptr) return;
  if (ui.view == View::kTimeline || ui.view == View::kConfirmCancel) {
    ui.view = View::kTable;
    ui.flash = "request " + ui.selected_id.value_or("?") + " is no longer listed";
  }
  if (rows.empty()) {
    ui.selected_id.reset();
  } else {
    ui.selected_id = rows.front()->id;
  }
}

const RequestRow* selected_row(const UiState& ui, const std::vector<const RequestRow*>& rows) {
  if (!ui.selected_id) return nullptr;
  for (const RequestRow* r : rows) {
    if (r->id == *ui.selected_id) return r;
  }
  return nullptr;
}

}  // namespace met::top
