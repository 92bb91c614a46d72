// The request table's figures, filter and sort (request_table.h).
// Threading: pure. Tested by tests/top/request_table_test.cc.
#include "top/request_table.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace met::top {
namespace {

// Ids are decimal numbers from met serve; compare them as numbers when both are.
bool id_less(const std::string& a, const std::string& b) {
  const bool numeric = !a.empty() && !b.empty() && a.find_first_not_of("0123456789") == std::string::npos &&
                       b.find_first_not_of("0123456789") == std::string::npos;
  if (numeric && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

// -1 below every known figure, so unknown ones sort first.
double sort_value(const RequestRow& r, SortColumn c, int64_t now_ms) {
  switch (c) {
    case SortColumn::kPrompt: return static_cast<double>(r.prompt_tokens);
    case SortColumn::kCached: return static_cast<double>(r.cached_tokens);
    case SortColumn::kOutput: return static_cast<double>(r.output_tokens);
    case SortColumn::kTokensPerS: return tokens_per_s(r, now_ms).value_or(-1.0);
    case SortColumn::kTtft: return static_cast<double>(ttft_ms(r).value_or(-1));
    case SortColumn::kAge: return static_cast<double>(age_ms(r, now_ms).value_or(-1));
    case SortColumn::kPreemptions: return static_cast<double>(r.preemptions);
    case SortColumn::kId:
    case SortColumn::kTenant:
    case SortColumn::kState: return 0.0;
  }
  return 0.0;
}

// Strict "a before b" in ascending order, ties broken by id.
bool ascending_less(const RequestRow& a, const RequestRow& b, SortColumn c, int64_t now_ms) {
  switch (c) {
    case SortColumn::kId: return id_less(a.id, b.id);
    case SortColumn::kTenant:
      if (a.tenant != b.tenant) return a.tenant < b.tenant;
      return id_less(a.id, b.id);
    case SortColumn::kState:
      if (a.state != b.state) return a.state < b.state;
      return id_less(a.id, b.id);
    case SortColumn::kPrompt:
    case SortColumn::kCached:
    case SortColumn::kOutput:
    case SortColumn::kTokensPerS:
    case SortColumn::kTtft:
    case SortColumn::kAge:
    case SortColumn::kPreemptions: break;
  }
  const double va = sort_value(a, c, now_ms);
  const double vb = sort_value(b, c, now_ms);
  if (va != vb) return va < vb;
  return id_less(a.id, b.id);
}

}  // namespace

SortColumn next_column(SortColumn c) {
  switch (c) {
    case SortColumn::kId: return SortColumn::kTenant;
    case SortColumn::kTenant: return SortColumn::kState;
    case SortColumn::kState: return SortColumn::kPrompt;
    case SortColumn::kPrompt: return SortColumn::kCached;
    case SortColumn::kCached: return SortColumn::kOutput;
    case SortColumn::kOutput: return SortColumn::kTokensPerS;
    case SortColumn::kTokensPerS: return SortColumn::kTtft;
    case SortColumn::kTtft: return SortColumn::kAge;
    case SortColumn::kAge: return SortColumn::kPreemptions;
    case SortColumn::kPreemptions: return SortColumn::kId;
  }
  return SortColumn::kId;
}

std::string_view column_name(SortColumn c) {
  switch (c) {
    case SortColumn::kId: return "id";
    case SortColumn::kTenant: return "tenant";
    case SortColumn::kState: return "state";
    case SortColumn::kPrompt: return "prompt";
    case SortColumn::kCached: return "cached";
    case SortColumn::kOutput: return "output";
    case SortColumn::kTokensPerS: return "tok/s";
    case SortColumn::kTtft: return "ttft";
    case SortColumn::kAge: return "age";
    case SortColumn::kPreemptions: return "preemptions";
  }
  return "";
}

const std::vector<std::string>& request_states() {
  static const std::vector<std::string> kStates = {"waiting", "prefill",  "running", "swapped",
                                                   "preempted", "finished", "failed"};
  return kStates;
}

std::optional<double> tokens_per_s(const RequestRow& r, int64_t now_ms) {
  if (!r.first_token_ms) return std::nullopt;
  const int64_t end_ms = r.finished_ms.value_or(now_ms);
  const int64_t span_ms = end_ms - *r.first_token_ms;
  if (span_ms <= 0) return std::nullopt;
  return static_cast<double>(r.output_tokens) * 1000.0 / static_cast<double>(span_ms);
}

std::optional<int64_t> ttft_ms(const RequestRow& r) {
  if (!r.first_token_ms || !r.queued_ms) return std::nullopt;
  return *r.first_token_ms - *r.queued_ms;
}

std::optional<int64_t> age_ms(const RequestRow& r, int64_t now_ms) {
  if (!r.queued_ms) return std::nullopt;
  return now_ms - *r.queued_ms;
}

std::vector<const RequestRow*> visible_rows(const Snapshot& s, const TableFilter& filter, const TableOrder& order) {
  std::vector<const RequestRow*> rows;
  for (const RequestRow& r : s.requests) {
    if (filter.tenant && r.tenant != *filter.tenant) continue;
    if (filter.state && r.state != *filter.state) continue;
    rows.push_back(&r);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const RequestRow* a, const RequestRow* b) {
    return order.descending ? ascending_less(*b, *a, order.column, s.now_ms)
                            : ascending_less(*a, *b, order.column, s.now_ms);
  });
  return rows;
}

}  // namespace met::top
