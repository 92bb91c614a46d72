// Plan staging: a StepPlan flattened into one buffer of fixed layout, the
// bytes CudaDevice::launch copies to the device in a single host-to-device
// copy. The layout depends only on the device's capacities, never on a
// plan, so every section sits at the same offset in every step: a captured
// CUDA graph keeps reading the right addresses, and packing allocates
// nothing. The attention partitions (split-KV work of fixed size, aligned
// to absolute positions: partition p covers positions [p P, (p + 1) P) with
// P = kAttnPartitionTokens) are planned here too, so a row's attention is
// the same fold of the same partitions whatever else is in its step.
// StagingRing holds `depth` such buffers (pinned host memory from the
// allocator it is given), one per step in flight.
// Invariants: sections are kStagingAlign-aligned and within total_bytes; a
// packed plan satisfies validate_plan (the caller checked it) and fits the
// capacity, else pack_plan refuses naming the limit; a ring slot is written
// only while its previous step is released.
// Threading: pure functions; a StagingRing belongs to its device's engine
// thread. Tested by tests/backend/plan_staging_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backend/device.h"
#include "backend/step_plan.h"
#include "backend/cuda/staged_step.h"
#include "core/ids.h"
#include "core/status.h"

namespace met::cuda {

inline constexpr int64_t kStagingAlign = 256;

// The most of each thing one packed step holds.
struct StagingCapacity {
  int32_t max_rows = 0;
  int32_t max_seqs = 0;
  int32_t max_outputs = 0;
  int32_t max_banned = 0;         // banned ids over all outputs
  int32_t max_table_entries = 0;  // block-table entries over all seqs
  int32_t max_partitions = 0;     // attention partitions over all seqs
};

// From the device's limits: every seq may hold a table of the whole context
// and its partitions, every output `banned_per_output` banned ids.
StagingCapacity staging_capacity(const DeviceInfo& info, int32_t banned_per_output);

// Byte offsets of the sections of one staging buffer. The block tables come
// last, so a step's used bytes are one prefix (packed_bytes).
struct StagingLayout {
  int64_t header = 0;      // PackedHeader
  int64_t tokens = 0;      // int32 per row: the input token (0 where fed)
  int64_t feeds = 0;       // int32 per row: the previous step's output index, or kNoFeed
  int64_t positions = 0;   // int32 per row
  int64_t row_seq = 0;     // int32 per row: its seq's index
  int64_t seqs = 0;        // PackedSeq per seq
  int64_t outputs = 0;     // PackedOutput per output
  int64_t banned = 0;      // int32 token ids
  int64_t partitions = 0;  // PackedPartition, each seq's in position order
  int64_t tables = 0;      // int32 block ids, the seqs' tables one after another
  int64_t total_bytes = 0;
};

StagingLayout staging_layout(const StagingCapacity& capacity);

// The partitions a seq's rows read: from the one holding its first row's
// first read position (its window's start, 0 without a window) to the one
// holding its last row's position.
struct PartitionSpan {
  int32_t first = 0;
  int32_t count = 0;
};
PartitionSpan seq_partitions(const StepSeq& seq, int32_t window);

// Writes `plan` into `buffer` (at least layout.total_bytes). `window` is the
// device's kv_window. Refuses, naming the limit, a plan past `capacity`.
Result<PackedHeader> pack_plan(const StepPlan& plan, const StagingCapacity& capacity,
                               const StagingLayout& layout, int32_t window, std::span<uint8_t> buffer);

// The bytes of a packed buffer that hold the step: the prefix to copy.
int64_t packed_bytes(const StagingLayout& layout, const PackedHeader& header);

// The typed view of one section of a packed buffer.
template <typename T>
const T* staged(std::span<const uint8_t> buffer, int64_t offset) {
  return reinterpret_cast<const T*>(buffer.data() + offset);
}

// `depth` staging buffers, one per step in flight: acquire(t) hands out slot
// t % depth for step t, refusing while the step that last used it has not
// been released (awaited).
class StagingRing {
 public:
  using Allocate = std::function<Result<void*>(size_t bytes)>;
  using Deallocate = std::function<void(void*)>;

  static Result<StagingRing> create(const StagingLayout& layout, int32_t depth, Allocate allocate,
                                    Deallocate deallocate);
  StagingRing(StagingRing&& other) noexcept;
  StagingRing& operator=(StagingRing&&) = delete;
  StagingRing(const StagingRing&) = delete;
  ~StagingRing();

  Result<std::span<uint8_t>> acquire(Ticket ticket);
  // Gives back the slot of `ticket` (its step awaited). REQUIRES: acquired.
  void release(Ticket ticket);
  int32_t depth() const { return static_cast<int32_t>(slots_.size()); }
  int64_t slot_bytes() const { return slot_bytes_; }

 private:
  struct Slot {
    uint8_t* bytes = nullptr;
    bool in_flight = false;
    uint64_t ticket = 0;
  };
  StagingRing(int64_t slot_bytes, Deallocate deallocate) : slot_bytes_(slot_bytes), deallocate_(std::move(deallocate)) {}

  int64_t slot_bytes_ = 0;
  Deallocate deallocate_;
  std::vector<Slot> slots_;
};

}  // namespace met::cuda
