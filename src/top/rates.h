// Rates between two polls of /v1/requests, and the History of them that the
// sparklines draw: tokens/s in (prompt) and out (output), the device's busy
// share, the prefix cache's hit rate, KV pool usage and the queue counts.
// Invariants: a rate needs two snapshots with the server's clock moving
// forward; otherwise it is nullopt (shown as "-"), never a division by zero.
// A counter that went backwards (the server restarted) gives no rate.
// History keeps at most `capacity` samples, oldest first.
// Threading: plain values; the caller's thread. Tested by tests/top/rates_test.cc.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "top/snapshot.h"

namespace met::top {

struct Rates {
  std::optional<double> prompt_tokens_per_s;
  std::optional<double> output_tokens_per_s;
  std::optional<double> device_busy_share;  // 0..1
  std::optional<double> cache_hit_rate;     // 0..1, over the tokens looked up between the polls
};

Rates compute_rates(const Snapshot& prev, const Snapshot& cur);

// KV blocks in use over the pool, 0..1 (nullopt for an empty pool).
std::optional<double> kv_usage(const EngineCounters& engine);

// One point of every sparkline.
struct Sample {
  double running = 0;
  double waiting = 0;
  double swapped = 0;
  double kv_usage = 0;
  double cache_hit_rate = 0;
  double device_busy_share = 0;
  double prompt_tokens_per_s = 0;
  double output_tokens_per_s = 0;
};

Sample make_sample(const Snapshot& cur, const Rates& rates);

class History {
 public:
  explicit History(size_t capacity) : capacity_(capacity) {}
  void add(const Sample& s);
  void clear() { samples_.clear(); }
  const std::deque<Sample>& samples() const { return samples_; }

 private:
  size_t capacity_;
  std::deque<Sample> samples_;
};

}  // namespace met::top
