// Tests for recurrent_state.h: slots start zeroed, layers and slots do not
// overlap, clear() zeroes one slot only, slot() spans exactly the slot's
// layers, and bad layouts are refused by name.
#include "backend/cpu/recurrent_state.h"

#include <gtest/gtest.h>

#include <cstring>

namespace met::cpu {
namespace {

RecurrentLayout small_layout() {
  return RecurrentLayout{.num_layers = 3, .conv_floats = 5, .ssm_floats = 7, .num_slots = 4};
}

TEST(RecurrentState, SlotsStartZeroed) {
  Result<RecurrentState> s = RecurrentState::create(small_layout());
  ASSERT_TRUE(s.ok()) << s.status().message();
  for (int32_t slot = 0; slot < 4; ++slot) {
    for (uint8_t b : s->slot(StateSlotId(slot))) ASSERT_EQ(b, 0);
  }
}

TEST(RecurrentState, EachLayerOfEachSlotHasItsOwnStorage) {
  Result<RecurrentState> s = RecurrentState::create(small_layout());
  ASSERT_TRUE(s.ok());
  float value = 1.0f;
  for (int32_t slot = 0; slot < 4; ++slot) {
    for (int32_t layer = 0; layer < 3; ++layer) {
      for (int i = 0; i < 5; ++i) s->conv(StateSlotId(slot), layer)[i] = value++;
      for (int i = 0; i < 7; ++i) s->ssm(StateSlotId(slot), layer)[i] = value++;
    }
  }
  value = 1.0f;
  for (int32_t slot = 0; slot < 4; ++slot) {
    for (int32_t layer = 0; layer < 3; ++layer) {
      for (int i = 0; i < 5; ++i) EXPECT_EQ(s->conv(StateSlotId(slot), layer)[i], value++);
      for (int i = 0; i < 7; ++i) EXPECT_EQ(s->ssm(StateSlotId(slot), layer)[i], value++);
    }
  }
}

TEST(RecurrentState, ClearZeroesOneSlotAndLeavesItsNeighbours) {
  Result<RecurrentState> s = RecurrentState::create(small_layout());
  ASSERT_TRUE(s.ok());
  for (int32_t slot = 0; slot < 4; ++slot) {
    for (uint8_t& b : s->slot(StateSlotId(slot))) b = 0xAB;
  }
  s->clear(StateSlotId(2));
  for (int32_t slot = 0; slot < 4; ++slot) {
    for (uint8_t b : s->slot(StateSlotId(slot))) ASSERT_EQ(b, slot == 2 ? 0 : 0xAB) << "slot " << slot;
  }
}

TEST(RecurrentState, ASlotSpansAllItsLayers) {
  Result<RecurrentState> s = RecurrentState::create(small_layout());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->slot_bytes(), 3 * (5 + 7) * static_cast<int64_t>(sizeof(float)));
  const std::span<uint8_t> one = s->slot(StateSlotId(1));
  EXPECT_EQ(static_cast<int64_t>(one.size()), s->slot_bytes());
  EXPECT_EQ(reinterpret_cast<float*>(one.data()), s->conv(StateSlotId(1), 0));
  EXPECT_EQ(reinterpret_cast<float*>(one.data() + one.size()), s->conv(StateSlotId(2), 0));
}

TEST(RecurrentState, BadLayoutsAreRefusedByName) {
  RecurrentLayout no_layers = small_layout();
  no_layers.num_layers = 0;
  EXPECT_NE(RecurrentState::create(no_layers).status().message().find("recurrent layers"), std::string::npos);
  RecurrentLayout no_slots = small_layout();
  no_slots.num_slots = 0;
  EXPECT_NE(RecurrentState::create(no_slots).status().message().find("slots"), std::string::npos);
  RecurrentLayout huge = small_layout();
  huge.ssm_floats = int64_t{1} << 40;
  EXPECT_FALSE(RecurrentState::create(huge).ok());
}

}  // namespace
}  // namespace met::cpu
