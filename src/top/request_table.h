// The request table: each request's derived figures (tok/s, TTFT, age), the
// columns it sorts by, and visible_rows(), which filters by tenant and state
// and sorts.
// Invariants: the sort is stable and total (ties broken by id), so rows do not
// jump between polls; a figure that cannot be known yet (no first token) is
// nullopt and sorts before every known one.
// Threading: pure. Tested by tests/top/request_table_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "top/snapshot.h"

namespace met::top {

enum class SortColumn { kId, kTenant, kState, kPrompt, kCached, kOutput, kTokensPerS, kTtft, kAge, kPreemptions };

SortColumn next_column(SortColumn c);
std::string_view column_name(SortColumn c);

// The request states the server reports, in the order the state filter cycles through them.
const std::vector<std::string>& request_states();

struct TableFilter {
  std::optional<std::string> tenant;  // "" filters the requests without a tenant
  std::optional<std::string> state;
};

struct TableOrder {
  SortColumn column = SortColumn::kAge;
  bool descending = true;
};

// Output tokens per second since the first token, up to `now_ms` or the finish.
std::optional<double> tokens_per_s(const RequestRow& r, int64_t now_ms);
std::optional<int64_t> ttft_ms(const RequestRow& r);
std::optional<int64_t> age_ms(const RequestRow& r, int64_t now_ms);

// Pointers into `s.requests` (which must outlive them), filtered and sorted.
std::vector<const RequestRow*> visible_rows(const Snapshot& s, const TableFilter& filter, const TableOrder& order);

}  // namespace met::top
