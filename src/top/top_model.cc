// TopModel (top_model.h).
// Threading: the loop's thread. Tested by tests/top/top_model_test.cc.
#include "top/top_model.h"

#include <utility>

namespace met::top {

void TopModel::on_poll(const Result<HttpAnswer>& answer) {
  ++num_polls_;
  if (!answer.ok()) {
    problem_ = answer.status().message();
    baseline_ok_ = false;
    return;
  }
  if (answer->status != 200) {
    problem_ = describe_http_failure(*answer, sent_key_);
    baseline_ok_ = false;
    return;
  }
  Result<Snapshot> parsed = parse_snapshot(answer->body);
  if (!parsed.ok()) {
    problem_ = parsed.status().message();
    baseline_ok_ = false;
    return;
  }
  on_snapshot(std::move(parsed).value());
}

void TopModel::on_snapshot(Snapshot s) {
  problem_.clear();
  rates_ = snapshot_ && baseline_ok_ ? compute_rates(*snapshot_, s) : Rates{};
  history_.add(make_sample(s, rates_));
  snapshot_ = std::move(s);
  baseline_ok_ = true;
}

}  // namespace met::top
