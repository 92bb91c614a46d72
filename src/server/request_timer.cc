// RequestTimer. Tested by tests/server/request_timer_test.cc.
#include "server/request_timer.h"

#include <variant>

namespace met {
namespace {

double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

void RequestTimer::on_event(const StreamEvent& event) {
  const TimePoint now = clock_.now();
  if (const auto* d = std::get_if<DeltaEvent>(&event)) {
    if (d->tokens.empty()) return;
    if (!last_token_at_) {
      metrics_.observe_ttft(seconds(now - arrived_));
      // The first delta's other tokens came in the same instant.
      if (d->tokens.size() > 1) metrics_.observe_inter_token(0.0, d->tokens.size() - 1);
    } else {
      metrics_.observe_inter_token(seconds(now - *last_token_at_), d->tokens.size());
    }
    last_token_at_ = now;
    return;
  }
  metrics_.observe_e2e(seconds(now - arrived_));
  if (const auto* f = std::get_if<FinishEvent>(&event)) {
    metrics_.count_success(f->finish_reason);
    if (!adapter_.empty()) metrics_.count_adapter(adapter_, f->usage.prompt_tokens, f->usage.completion_tokens);
  }
}

}  // namespace met
