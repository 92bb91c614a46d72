// RecurrentState: the CPU backend's pool of recurrent-state slots, one per
// sequence that may run at once (DeviceInfo::num_state_slots), each holding
// every recurrent layer's conv state and SSM state as floats:
//   [slot][recurrent layer][conv: conv_floats | ssm: ssm_floats]
// so one slot is one contiguous span for spill images and snapshots. The
// pool is calloc'ed: pages are zero and taken from the OS only when a slot
// is first used.
// Invariants: slot ids are below num_slots and layer indexes below
// num_layers (MET_CHECK); the layout is fixed at create().
// Threading: a slot is written only by the step that runs its sequence;
// distinct slots may be touched by distinct threads at once. slot() for
// spill I/O only while no step is in flight.
// Tested by tests/backend/recurrent_state_test.cc.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>

#include "core/ids.h"
#include "core/status.h"

namespace met::cpu {

struct RecurrentLayout {
  int32_t num_layers = 0;   // recurrent layers
  int64_t conv_floats = 0;  // one layer's conv state
  int64_t ssm_floats = 0;   // one layer's SSM state
  int32_t num_slots = 0;
};

inline constexpr int64_t kMaxRecurrentStateBytes = int64_t{1} << 40;  // 1 TiB: past it is a typo

class RecurrentState {
 public:
  // Refuses an empty layout, a negative size, or a pool past
  // kMaxRecurrentStateBytes; the message names the field.
  static Result<RecurrentState> create(const RecurrentLayout& layout);

  const RecurrentLayout& layout() const { return layout_; }
  int64_t slot_bytes() const { return slot_floats_ * static_cast<int64_t>(sizeof(float)); }

  float* conv(StateSlotId slot, int32_t layer) { return layer_base(slot, layer); }
  float* ssm(StateSlotId slot, int32_t layer) { return layer_base(slot, layer) + layout_.conv_floats; }
  const float* conv(StateSlotId slot, int32_t layer) const { return layer_base(slot, layer); }
  const float* ssm(StateSlotId slot, int32_t layer) const {
    return layer_base(slot, layer) + layout_.conv_floats;
  }
  // Zeroes every layer's state of `slot` (a sequence starting from token 0).
  void clear(StateSlotId slot);
  // Copies every layer's state of `from` into `to` (a snapshot, or a restore
  // from one). REQUIRES: from != to.
  void copy(StateSlotId from, StateSlotId to);
  // The whole of one slot, for spill save/restore. Exactly slot_bytes().
  std::span<uint8_t> slot(StateSlotId slot);
  std::span<const uint8_t> slot(StateSlotId slot) const;

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  RecurrentState() = default;
  float* layer_base(StateSlotId slot, int32_t layer) const;

  RecurrentLayout layout_;
  int64_t slot_floats_ = 0;
  std::unique_ptr<float, Free> data_;
};

}  // namespace met::cpu
