// KvEventStager: the KvEventSink the engine attaches to its KV manager when
// KV events are on. It turns the prefix cache's reports into KvEvents and
// keeps them until the engine takes them, once per tick, as one batch.
// Invariants: events leave in the order they were reported; take() leaves
// nothing staged. Staging appends to a vector: no lock, and an allocation
// only when a tick's events outgrow it (a vector per batch handed over).
// Threading: engine thread only. Tested by tests/engine/kv_event_publisher_test.cc
// and, with an engine, by tests/engine/engine_kv_events_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/kv_event.h"
#include "kv/kv_event_sink.h"

namespace met {

class KvEventStager final : public KvEventSink {
 public:
  void block_stored(const BlockKey& key, const std::optional<BlockKey>& parent, std::span<const TokenId> tokens,
                    uint64_t adapter) override;
  void block_removed(const BlockKey& key) override;
  void all_blocks_cleared() override;

  bool empty() const { return staged_.empty(); }
  // Moves the staged events into out.events (replacing what it held) and
  // stamps out.ts with the wall clock; false, with `out` untouched, when
  // nothing is staged.
  bool take(KvEventBatch& out);

 private:
  std::vector<KvEvent> staged_;
};

}  // namespace met
