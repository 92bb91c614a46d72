// TopModel: what the dashboard knows from its polls: the last snapshot, the
// rates since the one before, the history the sparklines draw, and the
// problem with the last poll (unreachable, refused key, not JSON), if any.
// Invariants: a failed poll keeps the last good snapshot on screen (marked
// stale by problem()) and drops the rate baseline, so the next good poll
// starts the rates afresh rather than averaging over the outage.
// Threading: the dashboard loop's thread. Tested by tests/top/top_model_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/status.h"
#include "top/rates.h"
#include "top/snapshot.h"
#include "top/top_http.h"

namespace met::top {

class TopModel {
 public:
  TopModel(size_t history_capacity, bool sent_key) : history_(history_capacity), sent_key_(sent_key) {}

  // The outcome of one GET /v1/requests.
  void on_poll(const Result<HttpAnswer>& answer);

  const std::optional<Snapshot>& snapshot() const { return snapshot_; }
  const Rates& rates() const { return rates_; }
  const History& history() const { return history_; }
  // Empty after a good poll.
  const std::string& problem() const { return problem_; }
  int num_polls() const { return num_polls_; }

 private:
  void on_snapshot(Snapshot s);

  std::optional<Snapshot> snapshot_;
  bool baseline_ok_ = false;  // snapshot_ may serve as the base of the next rates
  Rates rates_;
  History history_;
  std::string problem_;
  bool sent_key_;
  int num_polls_ = 0;
};

}  // namespace met::top
