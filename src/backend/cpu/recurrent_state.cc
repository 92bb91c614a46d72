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
  if (layout.num_ring_slots < 0 || layout.num_ring_slots > layout.num_slots) {
    return invalid_argument("recurrent state: {} ring slots of {} slots", layout.num_ring_slots, layout.num_slots);
  }
  return ok_status();
}

// Versions a ring slot keeps besides its current one.
int64_t ring_extra(const RecurrentLayout& layout) { return std::max(layout.rollback, layout.checkpoints); }

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
  s.current_.assign(static_cast<size_t>(layout.num_slots), 0);
  s.source_.assign(static_cast<size_t>(layout.num_slots), -1);
  s.tags_.assign(static_cast<size_t>(versions), -1);
  s.touched_.assign(static_cast<size_t>(versions), 0);
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
  return from == 0 || std::find(tags, tags + n, from) != tags + n;
}

Status RecurrentState::begin_step(StateSlotId slot, int64_t from, int64_t to, bool checkpoints) {
  const int32_t n = num_versions(slot);
  int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  int32_t& cur = current_[static_cast<size_t>(slot.value())];
  int32_t& src = source_[static_cast<size_t>(slot.value())];
  src = from == 0 ? -1 : static_cast<int32_t>(std::find(tags, tags + n, from) - tags);
  if (src == n) {
    src = -1;
    std::string held;
    for (int32_t v = 0; v < n; ++v) {
      if (tags[v] >= 0) held += fmt::format("{}{}", held.empty() ? "" : ", ", tags[v]);
    }
    return out_of_range("state slot {}: no state after {} tokens to run from (it holds {})", slot.value(), from,
                        held.empty() ? "none" : held);
  }
  if (checkpoints && to - from - 1 > n - 1) {
    src = -1;
    return out_of_range("state slot {}: a verify step of {} rows keeps {} states besides its last; the slot keeps {}",
                        slot.value(), to - from, to - from - 1, n - 1);
  }
  for (int32_t v = 0; v < n; ++v) {
    if (tags[v] > from) tags[v] = -1;  // a branch the sequence was rewound from
  }
  cur = src >= 0 ? src : cur;
  // The lane's ring keeps the version at `from` to rewind to: the step
  // writes a free or the oldest other one. A verify step runs in place.
  if (!checkpoints && slot.value() < layout_.num_ring_slots && layout_.rollback > 0) {
    cur = src == 0 ? 1 : 0;
    for (int32_t v = 0; v < n; ++v) {
      if (v != src && tags[v] < tags[cur]) cur = v;
    }
  }
  if (src < 0) std::memset(version_base(slot, cur), 0, static_cast<size_t>(slot_bytes()));
  if (src == cur) src = -1;  // in place
  tags[cur] = to;
  touched_[static_cast<size_t>(first_version(slot) + cur)] = 1;
  if (checkpoints) tag_checkpoints(slot, from, to);
  return ok_status();
}

void RecurrentState::tag_checkpoints(StateSlotId slot, int64_t from, int64_t to) {
  const int32_t n = num_versions(slot);
  int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  uint8_t* touched = &touched_[static_cast<size_t>(first_version(slot))];
  const int32_t cur = current_[static_cast<size_t>(slot.value())];
  // Versions written before first (their pages are the process's already:
  // a first write takes a page fault per page, as long as the step), then
  // the oldest.
  auto before = [&](int32_t a, int32_t b) {
    return touched[a] != touched[b] ? touched[a] > touched[b] : tags[a] < tags[b];
  };
  for (int64_t p = from + 1; p < to; ++p) {
    int32_t pick = -1;
    for (int32_t v = 0; v < n; ++v) {
      if (v != cur && tags[v] <= from && (pick < 0 || before(v, pick))) pick = v;
    }
    tags[pick] = p;  // past `from`: the next pick takes another
    touched[pick] = 1;
  }
}

float* RecurrentState::checkpoint(StateSlotId slot, int32_t layer, int64_t position) {
  const int32_t n = num_versions(slot);
  const int64_t* tags = &tags_[static_cast<size_t>(first_version(slot))];
  const auto v = static_cast<int32_t>(std::find(tags, tags + n, position) - tags);
  MET_CHECK(v < n && position > 0, "state slot {}: no checkpoint after {} tokens", slot.value(), position);
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "recurrent layer {} outside [0, {})", layer,
            layout_.num_layers);
  return version_base(slot, v) + layer * (layout_.conv_floats + layout_.ssm_floats);
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
