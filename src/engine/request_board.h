// RequestBoard: the engine thread's record of every request in flight (its
// state, token counts, timeline) and of the last ones that ended, and the
// per-tenant totals, kept from the scheduler's lifecycle events. view()
// merges it with the scheduler's live progress (output tokens and blocks
// held, which change per token and are not events) into an EngineView.
// Invariants: a request is in flight from its "queued" event to its one
// terminal event ("finished" or "failed"), then among the last num_recent
// ended ones; at most max_tenants tenants are told apart, later ones are
// counted under kOtherTenant; nothing here changes per token.
// Threading: engine thread only. Tested by tests/engine/request_board_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>

#include "engine/engine_view.h"
#include "scheduler/io.h"
#include "scheduler/scheduler.h"

namespace met {

inline constexpr std::string_view kOtherTenant = "other";

class RequestBoard {
 public:
  static constexpr size_t kDefaultRecent = 64;
  static constexpr size_t kDefaultMaxTenants = 1024;
  explicit RequestBoard(size_t num_recent = kDefaultRecent, size_t max_tenants = kDefaultMaxTenants)
      : num_recent_(num_recent), max_tenants_(max_tenants) {}

  void on_event(const RequestEvent& e, int64_t unix_ms);
  // The board with `live` (Scheduler::describe's) merged in.
  EngineView view(std::span<const SeqProgress> live, int64_t now_ms) const;
  size_t num_in_flight() const { return in_flight_.size(); }
  // The blocks each tenant's requests in `live` hold, into `out` (its entries
  // zeroed first, and kept, so a tick allocates only for a tenant new to it).
  void tenant_blocks(std::span<const SeqProgress> live, std::unordered_map<std::string, int64_t>& out) const;

 private:
  TenantView& tenant(std::string_view name);
  void end(RequestView&& v);

  size_t num_recent_;
  size_t max_tenants_;
  std::unordered_map<uint64_t, RequestView> in_flight_;
  std::deque<RequestView> recent_;  // oldest first
  std::unordered_map<std::string, TenantView> tenants_;
};

}  // namespace met
