// RecurrentState. Tested by tests/backend/recurrent_state_test.cc.
#include "backend/cpu/recurrent_state.h"

#include <cstring>

#include "core/check.h"

namespace met::cpu {

Result<RecurrentState> RecurrentState::create(const RecurrentLayout& layout) {
  if (layout.num_layers < 1) return invalid_argument("recurrent state: {} recurrent layers", layout.num_layers);
  if (layout.num_slots < 1) return invalid_argument("recurrent state: {} slots", layout.num_slots);
  if (layout.conv_floats < 0 || layout.ssm_floats < 0 || layout.conv_floats + layout.ssm_floats == 0) {
    return invalid_argument("recurrent state: conv {} and ssm {} floats per layer", layout.conv_floats,
                            layout.ssm_floats);
  }
  const int64_t per_layer = layout.conv_floats + layout.ssm_floats;
  const int64_t limit = kMaxRecurrentStateBytes / static_cast<int64_t>(sizeof(float));
  if (per_layer > limit / layout.num_layers || per_layer * layout.num_layers > limit / layout.num_slots) {
    return invalid_argument("recurrent state: {} slots of {} layers × {} floats is past {} bytes", layout.num_slots,
                            layout.num_layers, per_layer, kMaxRecurrentStateBytes);
  }
  RecurrentState s;
  s.layout_ = layout;
  s.slot_floats_ = per_layer * layout.num_layers;
  const auto total = static_cast<size_t>(s.slot_floats_ * layout.num_slots);
  s.data_.reset(static_cast<float*>(std::calloc(total, sizeof(float))));
  if (s.data_ == nullptr) {
    return invalid_argument("recurrent state: cannot allocate {} bytes", total * sizeof(float));
  }
  return s;
}

float* RecurrentState::layer_base(StateSlotId slot, int32_t layer) const {
  MET_CHECK(slot.value() >= 0 && slot.value() < layout_.num_slots, "state slot {} outside [0, {})", slot.value(),
            layout_.num_slots);
  MET_CHECK(layer >= 0 && layer < layout_.num_layers, "recurrent layer {} outside [0, {})", layer,
            layout_.num_layers);
  return data_.get() + slot.value() * slot_floats_ + layer * (layout_.conv_floats + layout_.ssm_floats);
}

void RecurrentState::clear(StateSlotId slot) {
  std::memset(layer_base(slot, 0), 0, static_cast<size_t>(slot_bytes()));
}

void RecurrentState::copy(StateSlotId from, StateSlotId to) {
  MET_CHECK(from != to, "state slot {} copied onto itself", from.value());
  std::memcpy(layer_base(to, 0), layer_base(from, 0), static_cast<size_t>(slot_bytes()));
}

std::span<uint8_t> RecurrentState::slot(StateSlotId id) {
  return {reinterpret_cast<uint8_t*>(layer_base(id, 0)), static_cast<size_t>(slot_bytes())};
}

std::span<const uint8_t> RecurrentState::slot(StateSlotId id) const {
  return {reinterpret_cast<const uint8_t*>(layer_base(id, 0)), static_cast<size_t>(slot_bytes())};
}

}  // namespace met::cpu
