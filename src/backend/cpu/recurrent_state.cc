// RecurrentState. Tested by tests/backend/recurrent_state_test.cc.
#include "backend/cpu/recurrent_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "core/check.h"

namespace met::cpu {
namespace {

Status check_layout(const RecurrentLayout& layout) {
  if (layout.num_layers < 1) return invalid_argument("recurrent state: {} recurrent layers", layout.num_layers);
  if (layout.num_slots < 1) return invalid_argument("recurrent state: {} slots", layout.num_slots);
  if (layout.conv_floats < 0 || layout.ssm_floats < 0 || layout.conv_floats + layout.ssm_floats == 0) {
    return invalid_argument("recurrent state: conv {} and ssm {} floats per layer", layout.conv_floats,
                            layout.ssm_floats);
  }
  if (layout.rollback < 0 || layout.rollback > kMaxStateRollback) {
    return invalid_argument("recurrent state: a rollback of {} tokens is outside [0, {}]", layout.rollback,
                            kMaxStateRollback);
  }
  if (layout.checkpoints < 0 || layout.checkpoints > kMaxStateRollback) {
    return invalid_argument("recurrent state: {} checkpoints per verify step is outside [0, {}]", layout.checkpoints,
                            kMaxStateRollback);
  }
  if (layout.checkpoints > 0 && layout.log_floats < 1) {
    return invalid_argument("recurrent state: verify steps of {} drafts need a replay log ({} floats a row)",
                            layout.checkpoints, layout.log_floats);
  }
  if (layout.num_ring_slots < 0 || layout.num_ring_slots > layout.num_slots) {
    return invalid_argument("recurrent state: {} ring slots of {} slots", layout.num_ring_slots, layout.num_slots);
  }
  return ok_status();
}

// Versions a ring slot keeps besides its current one (a verify step keeps
// the one it started from).
int64_t ring_extra(const RecurrentLayout& layout) {
  return std::max<int64_t>(layout.rollback, layout.checkpoints > 0 ? 1 : 0);
}

// Floats of one ring slot's two replay logs.
int64_t log_floats_per_slot(const RecurrentLayout& layout) {
  return 2 * int64_t{layout.checkpoints} * layout.num_layers * layout.log_floats;
}

}  // namespace

Result<RecurrentState> RecurrentState::create(const RecurrentLayout& layout) {
  MET_RETURN_IF_ERROR(check_layout(layout));
  const int64_t per_layer = layout.conv_floats + layout.ssm_floats;
  const int64_t versions = layout.num_slots + int64_t{layout.num_ring_slots} * ring_extra(layout);
  const int64_t limit = kMaxRecurrentStateBytes / static_cast<int64_t>(sizeof(float));
  if (per_layer > limit / layout.num_layers || per_layer * layout.num_layers > limit / versions) {
    return invalid_argument("recurrent state: {} slot versions of {} layers × {} floats is past {} bytes", versions,
                            layout.num_layers, per_layer, kMaxRecurrentStateBytes);
  }
  RecurrentState s;
  s.layout_ = layout;
  s.slot_floats_ = per_layer * layout.num_layers;
  const auto total = static_cast<size_t>(s.slot_floats_ * versions);
  Result<HugePageMemory> pool = HugePageMemory::map(total * sizeof(float));
  if (!pool.ok()) return pool.status().with_prefix("recurrent state");
  s.pool_ = std::move(pool).value();
  s.pool_.prefault();  // backed now, not in the step that first clears a slot (the replay logs stay lazy)
  s.current_.assign(static_cast<size_t>(layout.num_slots), 0);
  s.source_.assign(static_cast<size_t>(layout.num_slots), -1);
  s.tags_.assign(static_cast<size_t>(versions), -1);
  s.replay_.assign(static_cast<size_t>(layout.num_slots), Replay{});
  const int64_t log_floats = log_floats_per_slot(layout) * layout.num_ring_slots;
  if (log_floats > limit) return invalid_argument("recurrent state: a replay log of {} floats", log_floats);
  if (log_floats > 0) {
    Result<HugePageMemory> logs = HugePageMemory::map(static_cast<size_t>(log_floats) * sizeof(float));
    if (!logs.ok()) return logs.status().with_prefix("recurrent state: replay log");
    s.logs_ = std::move(logs).value();
  }
  return s;
}

void RecurrentState::check_slot(StateSlotId slot) const {
  MET_CHECK(slot.value() >= 0 && slot.value() < layout_.num_slots, "state slot {} outside [0, {})", slot.value(),
            layout_.num_slots);
}

int32_t RecurrentState::num_versions(StateSlotId slot) const {
  check_slot(slot);
  return slot.value() < layout_.num_ring_slots ? 1 + static_cast<int32_t>(ring_extra(layout_)) : 1;
}

int64_t RecurrentState::first_version(StateSlotId slot) const {
  const int64_t s = slot.value();
  const int64_t ring = layout_.num_ring_slots;
  const int64_t per_ring_slot = 1 + ring_extra(layout_);
  return s < ring ? s * per_ring_slot : ring * per_ring_slot + (s - ring);
}

float* RecurrentState::version_base(StateSlotId slot, int32_t version) const {
  return reinterpret_cast<float*>(pool_.data()) + (first_version(slot) + version) * slot_floats_;
}

float* RecurrentState::layer_base(StateSlotId slot, int32_t layer) const {
  check_slot(slot);
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "recurrent layer {} outside [0, {})", layer,
            layout_.num_layers);
  return version_base(slot, current_[static_cast<size_t>(slot.value())]) +
         layer * (layout_.conv_floats + layout_.ssm_floats);
}

bool RecurrentState::holds(StateSlotId slot, int64_t from) const {
  const int32_t n = num_versions(slot);
  const int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  return from == 0 || std::find(tags, tags + n, from) != tags + n || replayable(slot, from);
}

bool RecurrentState::replayable(StateSlotId slot, int64_t position) const {
  check_slot(slot);
  const Replay& r = replay_[static_cast<size_t>(slot.value())];
  return r.from < position && position < r.to;
}

Status RecurrentState::refusal(StateSlotId slot, int64_t from, int64_t to, bool checkpoints, int32_t src) const {
  const int32_t n = num_versions(slot);
  const int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  if (src == n) {
    std::string held;
    for (int32_t v = 0; v < n; ++v) {
      if (tags[v] >= 0) held += fmt::format("{}{}", held.empty() ? "" : ", ", tags[v]);
    }
    return out_of_range("state slot {}: no state after {} tokens to run from (it holds {})", slot.value(), from,
                        held.empty() ? "none" : held);
  }
  const bool ring = slot.value() < layout_.num_ring_slots;
  if (checkpoints && (!ring || to - from - 1 > layout_.checkpoints)) {
    return out_of_range("state slot {}: a verify step of {} rows logs {} rows besides its last; the slot logs {}",
                        slot.value(), to - from, to - from - 1, ring ? layout_.checkpoints : 0);
  }
  return ok_status();
}

int32_t RecurrentState::written_version(StateSlotId slot, int32_t src, bool checkpoints) const {
  const int32_t cur = current_[static_cast<size_t>(slot.value())];
  // The lane's ring keeps the version at `from` to rewind to, and a verify
  // step the one its replays start from: the step writes a free or the
  // oldest other one.
  if ((!checkpoints && layout_.rollback == 0) || slot.value() >= layout_.num_ring_slots) return src >= 0 ? src : cur;
  const int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  int32_t pick = src == 0 ? 1 : 0;
  for (int32_t v = 0; v < num_versions(slot); ++v) {
    if (v != src && tags[v] < tags[pick]) pick = v;
  }
  return pick;
}

Status RecurrentState::begin_step(StateSlotId slot, int64_t from, int64_t to, bool checkpoints) {
  const int32_t n = num_versions(slot);
  int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  int32_t& cur = current_[static_cast<size_t>(slot.value())];
  int32_t& src = source_[static_cast<size_t>(slot.value())];
  Replay& replay = replay_[static_cast<size_t>(slot.value())];
  const int32_t held = static_cast<int32_t>(std::find(tags, tags + n, from) - tags);
  const bool replays = from != 0 && held == n && replayable(slot, from);
  src = from == 0 ? -1 : replays ? replay.base : held;
  if (Status refused = refusal(slot, from, to, checkpoints, src); !refused.ok()) {
    src = -1;
    return refused;
  }
  replay.rows = replays ? static_cast<int32_t>(from - replay.from) : 0;
  replay.read_side = replay.log_side;
  for (int32_t v = 0; v < n; ++v) {
    if (tags[v] > from) tags[v] = -1;  // a branch the sequence was rewound from
  }
  cur = written_version(slot, src, checkpoints);
  if (src < 0) std::memset(version_base(slot, cur), 0, static_cast<size_t>(slot_bytes()));
  // A verify step from a replayed position starts a range at `from`, which
  // no version holds: its layers save the replayed state into the version
  // they read (it held the old range's start) or, from the zero state,
  // another one.
  replay.save = checkpoints && replays ? (src >= 0 ? src : (cur == 0 ? 1 : 0)) : -1;
  if (replay.save >= 0) tags[replay.save] = from;
  if (checkpoints) {
    replay.base = replays ? replay.save : src;  // -1: the zero state
    replay.from = from;
    replay.to = to;
    replay.log_side = replay.rows > 0 ? 1 - replay.read_side : replay.log_side;
  } else {
    replay.from = replay.to = -1;
  }
  if (src == cur) src = -1;  // in place
  tags[cur] = to;
  return ok_status();
}

int32_t RecurrentState::replay_rows(StateSlotId slot) const {
  check_slot(slot);
  return replay_[static_cast<size_t>(slot.value())].rows;
}

float* RecurrentState::log_base(StateSlotId slot, int32_t side, int32_t layer) const {
  MET_CHECK(slot.value() >= 0 && slot.value() < layout_.num_ring_slots && layout_.checkpoints > 0,
            "state slot {} keeps no replay log", slot.value());
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "recurrent layer {} outside [0, {})", layer,
            layout_.num_layers);
  const int64_t per_side = int64_t{layout_.checkpoints} * layout_.num_layers * layout_.log_floats;
  return reinterpret_cast<float*>(logs_.data()) + (2 * int64_t{slot.value()} + side) * per_side +
         int64_t{layer} * layout_.checkpoints * layout_.log_floats;
}

const float* RecurrentState::replay_log(StateSlotId slot, int32_t layer) const {
  const Replay& r = replay_[static_cast<size_t>(slot.value())];
  MET_CHECK(r.rows > 0, "state slot {}: the step replays no rows", slot.value());
  return log_base(slot, r.read_side, layer);
}

float* RecurrentState::replay_save(StateSlotId slot, int32_t layer) {
  check_slot(slot);
  const int32_t save = replay_[static_cast<size_t>(slot.value())].save;
  if (save < 0) return nullptr;
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "recurrent layer {} outside [0, {})", layer,
            layout_.num_layers);
  return version_base(slot, save) + layer * (layout_.conv_floats + layout_.ssm_floats);
}

float* RecurrentState::step_log(StateSlotId slot, int32_t layer) {
  check_slot(slot);
  const Replay& r = replay_[static_cast<size_t>(slot.value())];
  MET_CHECK(r.to >= 0, "state slot {}: no verify step to log", slot.value());
  return log_base(slot, r.log_side, layer);
}

bool RecurrentState::needs_sync(StateSlotId slot) const {
  check_slot(slot);
  return source_[static_cast<size_t>(slot.value())] >= 0;
}

void RecurrentState::sync_layer(StateSlotId slot, int32_t layer, int64_t f0, int64_t f1) {
  const int32_t src = source_[static_cast<size_t>(slot.value())];
  MET_DCHECK(src >= 0, "state slot {}: nothing to sync", slot.value());
  const int64_t per_layer = layout_.conv_floats + layout_.ssm_floats;
  MET_DCHECK(0 <= f0 && f0 <= f1 && f1 <= per_layer, "sync of floats [{}, {}) of {}", f0, f1, per_layer);
  float* to = layer_base(slot, layer);
  const float* from = version_base(slot, src) + layer * per_layer;
  std::memcpy(to + f0, from + f0, static_cast<size_t>(f1 - f0) * sizeof(float));
}

const float* RecurrentState::ssm_source(StateSlotId slot, int32_t layer) const {
  check_slot(slot);
  const int32_t src = source_[static_cast<size_t>(slot.value())];
  if (src < 0) return nullptr;
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "recurrent layer {} outside [0, {})", layer,
            layout_.num_layers);
  return version_base(slot, src) + layer * (layout_.conv_floats + layout_.ssm_floats) + layout_.conv_floats;
}

int64_t RecurrentState::position(StateSlotId slot) const {
  check_slot(slot);
  return tags_[static_cast<size_t>(first_version(slot) + current_[static_cast<size_t>(slot.value())])];
}

void RecurrentState::keep_only_current(StateSlotId slot, int64_t position) {
  const int32_t n = num_versions(slot);
  source_[static_cast<size_t>(slot.value())] = -1;
  int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  for (int32_t v = 0; v < n; ++v) tags[v] = -1;
  tags[current_[static_cast<size_t>(slot.value())]] = position;
  replay_[static_cast<size_t>(slot.value())] = Replay{};
}

void RecurrentState::clear(StateSlotId slot) {
  keep_only_current(slot, 0);
  std::memset(layer_base(slot, 0), 0, static_cast<size_t>(slot_bytes()));
}

void RecurrentState::copy(StateSlotId from, StateSlotId to) {
  MET_CHECK(from != to, "state slot {} copied onto itself", from.value());
  keep_only_current(to, position(from));
  std::memcpy(layer_base(to, 0), layer_base(from, 0), static_cast<size_t>(slot_bytes()));
}

Result<std::span<const uint8_t>> RecurrentState::at(StateSlotId slot, int64_t position) const {
  const int32_t n = num_versions(slot);
  const int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  for (int32_t v = 0; v < n; ++v) {
    if (tags[v] == position && position >= 0) {
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(version_base(slot, v)),
                                      static_cast<size_t>(slot_bytes()));
    }
  }
  return out_of_range("state slot {}: no state after {} tokens (the current one is after {})", slot.value(),
                      position, this->position(slot));
}

std::span<uint8_t> RecurrentState::overwrite(StateSlotId slot, int64_t position) {
  keep_only_current(slot, position);
  return this->slot(slot);
}

std::span<uint8_t> RecurrentState::slot(StateSlotId id) {
  return {reinterpret_cast<uint8_t*>(layer_base(id, 0)), static_cast<size_t>(slot_bytes())};
}

std::span<const uint8_t> RecurrentState::slot(StateSlotId id) const {
  return {reinterpret_cast<const uint8_t*>(layer_base(id, 0)), static_cast<size_t>(slot_bytes())};
}

}  // namespace met::cpu
