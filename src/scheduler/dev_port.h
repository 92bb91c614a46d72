// DevPort: the scheduler's `dev` port. It owns the KV bookkeeping that lives
// beside the device (the BlockPool and the PrefixCache over it) and forwards
// forward steps and KV block copies to a Device. Effects (io.h) are applied
// here and nowhere else.
// Invariants: a block id in a SeqState's table holds one reference of this
// pool; ReleaseSeq drops them all (after registering full blocks when asked)
// and leaves the table empty; the device sees only plans whose tables were
// reserved here.
// Threading: engine thread only. Tested by tests/scheduler/dev_port_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/device.h"
#include "kv/block_pool.h"
#include "kv/prefix_cache.h"
#include "kv/spill_io.h"
#include "scheduler/io.h"

namespace met {

enum class Admit { kNow, kLater, kNever };

class DevPort {
 public:
  explicit DevPort(Device& device);

  const DeviceInfo& info() const { return device_.info(); }
  KvShape kv_shape() const;
  int32_t num_blocks() const { return pool_.num_blocks(); }
  int32_t num_free_blocks() const { return pool_.num_free(); }
  int32_t num_blocks_in_use() const { return pool_.num_in_use(); }
  const PrefixCache& prefix_cache() const { return prefix_; }

  void apply(const Effect& effect);

  // Grows `seq`'s block table to cover `num_tokens` positions. kLater: the
  // pool has too few free blocks now (nothing changes); kNever: more than the
  // whole pool.
  Admit reserve_kv(SeqState& seq, int32_t num_tokens);
  // Reuses the longest cached chain for seq.tokens, leaving at least one
  // token to compute. REQUIRES: an empty table. Sets seq.seq_len to the hit.
  PrefixMatch match_prefix(SeqState& seq);

  Result<Ticket> launch(const StepPlan& plan) { return device_.launch(plan); }
  Status await_result(Ticket ticket, StepResult& out) { return device_.await_result(ticket, out); }

  // The KV of seq's first `num_blocks` blocks into `image` (its buffer reused).
  Status save_blocks(const SeqState& seq, int32_t num_blocks, SpillImage& image);
  // Allocates image.num_blocks blocks for `seq` (empty table) and writes the
  // image into them; on error nothing stays allocated. kLater is an error here:
  // the caller checks num_free_blocks() first.
  Status restore_blocks(SeqState& seq, const SpillImage& image);

 private:
  // Keys the full blocks among seq's computed tokens in the prefix cache.
  void publish(const SeqState& seq);
  Device& device_;
  BlockPool pool_;
  PrefixCache prefix_;
};

}  // namespace met
