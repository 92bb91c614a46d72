// Pipeline predicates. Tested by tests/scheduler/decode_lane_test.cc.
#include "scheduler/pipeline.h"

#include "scheduler/commit_token.h"

namespace met {

RowMask row_mask(const ActiveSeq& a) { return RowMask{suppressing_stops(a)}; }

bool rows_match(const Inflight& inf, std::span<const ActiveSeq> active) {
  if (inf.rows.size() != active.size()) return false;
  for (size_t i = 0; i < active.size(); ++i) {
    if (inf.rows[i].slot != active[i].seq.slot_idx) return false;
  }
  return true;
}

bool argmax_readback_eligible(std::span<const ActiveSeq* const> rows) {
  for (const ActiveSeq* a : rows) {
    if (needs_logits(*a)) return false;
  }
  return true;
}

bool ahead_allowed(std::span<const ActiveSeq> active) {
  if (active.empty()) return false;
  for (const ActiveSeq& a : active) {
    if (a.status.finished || needs_logits(a)) return false;
    if (static_cast<int32_t>(a.seq.tokens.size()) - a.seq.seq_len != 1) return false;
  }
  return true;
}

}  // namespace met
