// RecurrentState: the CPU backend's pool of recurrent-state slots, one per
// sequence that may run at once (DeviceInfo::num_state_slots), each holding
// every recurrent layer's conv state and SSM state as floats:
//   [slot][version][recurrent layer][conv: conv_floats | ssm: ssm_floats]
// so one version of a slot is one contiguous span for spill images and
// snapshots. Each version is tagged with the position it holds the state
// after (the tokens the sequence had consumed; -1: none). The slots of
// running sequences (the first num_ring_slots) keep `rollback` older versions
// behind the current one, the decode rollback ring: a step from position p
// runs on the version tagged p, so a sequence rewound to p (an over-run of
// the pipelined lane) continues from its exact state. Other slots
// (snapshots) keep one.
// Verify steps (speculative decoding, `checkpoints` > 0) leave no copy of
// the state after each row: a ring slot keeps one more version, and a verify
// step from p writes another version than the one at p, which stays, while
// each recurrent layer writes its rows' inputs but the last into the slot's
// replay log (`log_floats` per layer and row, laid out by the layer). The
// positions p + 1 … p + rows - 1 are then replayable: the next step from one
// of them (an accepted prefix) reads the version at p and has each layer
// advance it over the logged rows first (replay_rows, replay_log), the same
// arithmetic, in the same order, as the rows ran, so the state is exact. A
// slot has two logs, used in turn, so a verify step that replays the last
// one's rows writes the other. A replay range lasts until the slot's next
// step begins; a spill image of a replayable position is first materialized
// by the device (ForwardPass::materialize_state).
// The pool is one anonymous mapping advised for huge pages
// (huge_page_memory.h): pages are zero and taken from the OS only when a
// version is first written.
// Invariants: slot ids are below num_slots and layer indexes below
// num_layers (MET_CHECK); the layout is fixed at create(); conv()/ssm() and
// slot() name a slot's current version; no two versions of a slot hold the
// same position; after begin_step(from, to) no version holds a position past
// `from` but the current one (a rewound branch is forgotten), and positions
// are replayable only after a verify step, before the slot's next step.
// Threading: a slot is written only by the step that runs its sequence;
// distinct slots may be touched by distinct threads at once. begin_step,
// copy, clear, at, overwrite and slot() only while no step uses the slot.
// Tested by tests/backend/recurrent_state_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/huge_page_memory.h"
#include "core/ids.h"
#include "core/status.h"

namespace met::cpu {

struct RecurrentLayout {
  int32_t num_layers = 0;   // recurrent layers
  int64_t conv_floats = 0;  // one layer's conv state
  int64_t ssm_floats = 0;   // one layer's SSM state
  int32_t num_slots = 0;
  // The first num_ring_slots slots keep `rollback` versions behind the
  // current one (the tokens a running sequence's state can be rewound).
  int32_t num_ring_slots = 0;
  int32_t rollback = 0;
  // The most rows but one of a ring slot's verify step (begin_step's
  // checkpoints): its drafts, the rows its replay log holds.
  int32_t checkpoints = 0;
  // Floats of one layer's replay log per row (the layer's inputs that
  // advance its state past the row). REQUIRES: > 0 when checkpoints > 0.
  int64_t log_floats = 0;
};

inline constexpr int64_t kMaxRecurrentStateBytes = int64_t{1} << 40;  // 1 TiB: past it is a typo
inline constexpr int32_t kMaxStateRollback = 64;

class RecurrentState {
 public:
  // Refuses an empty layout, a negative size, a rollback outside
  // [0, kMaxStateRollback], or a pool past kMaxRecurrentStateBytes; the
  // message names the field.
  static Result<RecurrentState> create(const RecurrentLayout& layout);

  const RecurrentLayout& layout() const { return layout_; }
  // One version of a slot: every recurrent layer.
  int64_t slot_bytes() const { return slot_floats_ * static_cast<int64_t>(sizeof(float)); }
  int32_t num_versions(StateSlotId slot) const;

  float* conv(StateSlotId slot, int32_t layer) { return layer_base(slot, layer); }
  float* ssm(StateSlotId slot, int32_t layer) { return layer_base(slot, layer) + layout_.conv_floats; }
  const float* conv(StateSlotId slot, int32_t layer) const { return layer_base(slot, layer); }
  const float* ssm(StateSlotId slot, int32_t layer) const {
    return layer_base(slot, layer) + layout_.conv_floats;
  }

  // Whether `slot` holds, or can replay, the state after `from` tokens
  // (always for 0).
  bool holds(StateSlotId slot, int64_t from) const;
  // Readies `slot` for a step that consumes the tokens at [from, to): the
  // current version becomes the one the step writes, tagged `to`: zeroes for
  // from 0; otherwise the version holding `from` (in place) or, when the
  // slot keeps older versions, a free or the oldest other one, which each
  // recurrent layer fills from the version at `from` before it reads it
  // (sync_layer, or head by head from ssm_source); that version stays, to
  // rewind to. Versions past `from` are
  // forgotten. Refuses, naming the positions it holds, when none holds `from`.
  // With `checkpoints` (a verify step of rows [from, to)), the step writes
  // another version than the one at `from`, which stays, and its layers log
  // rows from .. to - 2 (step_log); from + 1 … to - 1 are then replayable.
  // Refuses a verify step longer than checkpoints + 1 rows.
  // A step from a replayable position reads the version the verify step
  // started from and replays replay_rows() logged rows first.
  Status begin_step(StateSlotId slot, int64_t from, int64_t to, bool checkpoints = false);
  // Rows the step begun on `slot` replays before its own (0: none), from
  // replay_log: the rows' inputs of recurrent layer `layer`, log_floats
  // each. REQUIRES for replay_log: replay_rows(slot) > 0.
  int32_t replay_rows(StateSlotId slot) const;
  const float* replay_log(StateSlotId slot, int32_t layer) const;
  // A verify step that replays: recurrent layer `layer` of the version
  // that takes the replayed state (the state after `from`, its replays'
  // start), conv then SSM as conv()/ssm(), for the layer to copy it into
  // after replaying and before its own rows; null for any other step.
  float* replay_save(StateSlotId slot, int32_t layer);
  // Where the verify step begun on `slot` logs recurrent layer `layer`'s
  // rows (row r at r * log_floats). REQUIRES: the step is a verify step.
  float* step_log(StateSlotId slot, int32_t layer);
  // Whether `position` is replayable (a verify step's accepted prefix that
  // no version holds yet).
  bool replayable(StateSlotId slot, int64_t position) const;
  // Whether the step begun on `slot` reads another version than it writes.
  bool needs_sync(StateSlotId slot) const;
  // Copies floats [f0, f1) of recurrent layer `layer` (conv, then SSM) from
  // the version the step reads into the current one. REQUIRES: needs_sync;
  // once per layer and float per step, before the layer runs; threads may
  // copy disjoint ranges at once.
  void sync_layer(StateSlotId slot, int32_t layer, int64_t f0, int64_t f1);
  // The SSM state of recurrent layer `layer` in the version the step begun
  // on `slot` reads, or null when it writes that version in place: a layer
  // that copies it head by head just before it reads it (in cache) instead
  // of sync_layer over the SSM floats.
  const float* ssm_source(StateSlotId slot, int32_t layer) const;
  // The position the current version holds the state after (-1: none).
  int64_t position(StateSlotId slot) const;
  // Zeroes the current version of `slot` (the state after 0 tokens) and
  // forgets the others.
  void clear(StateSlotId slot);
  // Copies the current version of `from`, with its position, into the
  // current version of `to` and forgets to's others (a snapshot, or a
  // restore from one). REQUIRES: from != to.
  void copy(StateSlotId from, StateSlotId to);
  // The version of `slot` holding the state after `position` tokens, for a
  // spill image; refuses when none does. Exactly slot_bytes().
  Result<std::span<const uint8_t>> at(StateSlotId slot, int64_t position) const;
  // The current version of `slot`, to be filled with the state after
  // `position` tokens (a spill image's); the others are forgotten.
  std::span<uint8_t> overwrite(StateSlotId slot, int64_t position);
  // The current version of one slot, whatever it holds. Exactly slot_bytes().
  std::span<uint8_t> slot(StateSlotId slot);
  std::span<const uint8_t> slot(StateSlotId slot) const;

 private:
  RecurrentState() = default;
  void check_slot(StateSlotId slot) const;
  // Index of version 0 of `slot` among all versions of all slots.
  int64_t first_version(StateSlotId slot) const;
  float* version_base(StateSlotId slot, int32_t version) const;
  float* layer_base(StateSlotId slot, int32_t layer) const;
  // Forgets every version of `slot` but the current one, which takes
  // `position`, and its replay range.
  void keep_only_current(StateSlotId slot, int64_t position);
  float* log_base(StateSlotId slot, int32_t side, int32_t layer) const;
  // Why begin_step may not run (src: the version it would read, num_versions when none).
  Status refusal(StateSlotId slot, int64_t from, int64_t to, bool checkpoints, int32_t src) const;
  // The version a step reading `src` (-1: none) writes.
  int32_t written_version(StateSlotId slot, int32_t src, bool checkpoints) const;

  RecurrentLayout layout_;
  int64_t slot_floats_ = 0;
  HugePageMemory pool_;  // slot_floats_ floats per version
  std::vector<int32_t> current_;  // per slot: its current version
  std::vector<int32_t> source_;   // per slot: the version the step reads, if not current_ (-1: none)
  std::vector<int64_t> tags_;     // per version of every slot: the position it holds, -1: none
  // Per ring slot: the replay range the last verify step left, positions
  // (replay_from, replay_to) from version replay_base (-1: the zero state),
  // its log on side log_side; and the rows the running step replays.
  struct Replay {
    int64_t from = -1, to = -1;
    int32_t base = -1;
    int32_t log_side = 0;
    int32_t rows = 0;       // of the step begun
    int32_t read_side = 0;  // the log those rows are read from
    int32_t save = -1;      // the version the step saves its replayed state into (-1: none)
  };
  std::vector<Replay> replay_;
  // Per ring slot, log side and layer: checkpoints rows of log_floats floats.
  HugePageMemory logs_;
};

}  // namespace met::cpu
