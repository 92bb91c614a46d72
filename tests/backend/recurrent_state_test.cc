// Tests for recurrent_state.h: slots start zeroed, layers and slots do not
// overlap, clear() zeroes one slot only, slot() spans exactly the slot's
// layers, bad layouts are refused by name; the decode rollback ring: a step
// runs from the version at its start position, keeps the one it came from,
// forgets a rewound branch, refuses a position it does not hold, and a slot
// without a ring updates in place; verify steps' replay log: every accepted
// prefix replays to the state of plain steps (with and without a ring, and
// from a verify step that itself replayed), a zero-row step materializes a
// replayable position, a verify longer than the log is refused.
#include "backend/cpu/recurrent_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

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

RecurrentLayout ring_layout(int32_t rollback) {
  return RecurrentLayout{.num_layers = 2, .conv_floats = 3, .ssm_floats = 4, .num_slots = 3, .num_ring_slots = 2,
                         .rollback = rollback};
}

// Plays a recurrent layer: every float of the slot's current version becomes
// f(old, token), as a step over one token would; the state then depends on
// every token consumed and their order.
void run_token(RecurrentState& s, StateSlotId slot, int64_t position, float token) {
  ASSERT_TRUE(s.begin_step(slot, position, position + 1).ok());
  for (int32_t layer = 0; layer < s.layout().num_layers; ++layer) {
    const int64_t n = s.layout().conv_floats + s.layout().ssm_floats;
    if (s.needs_sync(slot)) s.sync_layer(slot, layer, 0, n);
    float* f = s.conv(slot, layer);
    for (int64_t i = 0; i < n; ++i) f[i] = f[i] * 0.5f + token + static_cast<float>(i);
  }
}

std::vector<uint8_t> bytes_at(const RecurrentState& s, StateSlotId slot, int64_t position) {
  Result<std::span<const uint8_t>> held = s.at(slot, position);
  EXPECT_TRUE(held.ok()) << held.status().message();
  return held.ok() ? std::vector<uint8_t>(held->begin(), held->end()) : std::vector<uint8_t>();
}

TEST(RecurrentStateRing, AStepFromAnEarlierPositionContinuesFromThatExactState) {
  Result<RecurrentState> s = RecurrentState::create(ring_layout(2));
  ASSERT_TRUE(s.ok()) << s.status().message();
  const StateSlotId slot(1);
  EXPECT_EQ(s->num_versions(slot), 3);
  run_token(*s, slot, 0, 5.0f);
  run_token(*s, slot, 1, 6.0f);
  const std::vector<uint8_t> after2 = bytes_at(*s, slot, 2);
  run_token(*s, slot, 2, 7.0f);
  const std::vector<uint8_t> after3 = bytes_at(*s, slot, 3);
  run_token(*s, slot, 3, 8.0f);  // an over-run: the host commits 9 at position 2 instead of 7
  EXPECT_EQ(s->position(slot), 4);
  run_token(*s, slot, 2, 9.0f);
  EXPECT_EQ(s->position(slot), 3);
  EXPECT_NE(bytes_at(*s, slot, 3), after3);
  EXPECT_EQ(bytes_at(*s, slot, 2), after2);  // the version rewound to stays
  EXPECT_FALSE(s->at(slot, 4).ok());        // the abandoned branch is forgotten
  // Running 7 again from 2 gives back the first branch's state bit for bit.
  run_token(*s, slot, 2, 7.0f);
  EXPECT_EQ(bytes_at(*s, slot, 3), after3);
}

TEST(RecurrentStateRing, APositionOutsideTheRingIsRefusedByName) {
  Result<RecurrentState> s = RecurrentState::create(ring_layout(1));
  ASSERT_TRUE(s.ok());
  const StateSlotId slot(0);
  for (int64_t p = 0; p < 4; ++p) run_token(*s, slot, p, static_cast<float>(p));
  EXPECT_TRUE(s->holds(slot, 3));
  EXPECT_FALSE(s->holds(slot, 2));
  const Status st = s->begin_step(slot, 2, 3);
  EXPECT_NE(st.message().find("no state after 2 tokens"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("it holds"), std::string::npos) << st.message();
  EXPECT_EQ(s->position(slot), 4);  // a refused step changes nothing
  EXPECT_TRUE(s->holds(slot, 0));   // position 0 is always the empty state
}

TEST(RecurrentStateRing, ASlotWithoutARingUpdatesInPlaceAndCannotRewind) {
  Result<RecurrentState> s = RecurrentState::create(ring_layout(2));
  ASSERT_TRUE(s.ok());
  const StateSlotId snapshot(2);  // past num_ring_slots
  EXPECT_EQ(s->num_versions(snapshot), 1);
  float* before = s->conv(snapshot, 0);
  run_token(*s, snapshot, 0, 1.0f);
  run_token(*s, snapshot, 1, 2.0f);
  EXPECT_EQ(s->conv(snapshot, 0), before);
  EXPECT_FALSE(s->needs_sync(snapshot));
  EXPECT_FALSE(s->begin_step(snapshot, 1, 2).ok());
}

TEST(RecurrentStateRing, CopyAndOverwriteLeaveOneVersionAtTheirPosition) {
  Result<RecurrentState> s = RecurrentState::create(ring_layout(2));
  ASSERT_TRUE(s.ok());
  const StateSlotId a(0), b(1), snap(2);
  for (int64_t p = 0; p < 3; ++p) run_token(*s, a, p, static_cast<float>(p));
  s->copy(a, snap);
  EXPECT_EQ(s->position(snap), 3);
  EXPECT_EQ(bytes_at(*s, snap, 3), bytes_at(*s, a, 3));
  for (int64_t p = 0; p < 2; ++p) run_token(*s, b, p, 9.0f);
  s->copy(snap, b);  // a restore: b's own versions are gone
  EXPECT_EQ(s->position(b), 3);
  EXPECT_FALSE(s->at(b, 2).ok());
  const std::vector<uint8_t> image = bytes_at(*s, a, 3);
  std::span<uint8_t> dst = s->overwrite(b, 17);
  std::copy(image.begin(), image.end(), dst.begin());
  EXPECT_EQ(bytes_at(*s, b, 17), image);
  EXPECT_FALSE(s->at(b, 3).ok());
}

// A layer of the tests' verify steps: each float f becomes f * 0.5 + token
// + i, and a verify step logs each row's token but the last (log_floats 1);
// the rows a step replays go first, saved where the step says.
void advance(RecurrentState& s, StateSlotId slot, int32_t layer, float token) {
  float* f = s.conv(slot, layer);
  const int64_t n = s.layout().conv_floats + s.layout().ssm_floats;
  for (int64_t i = 0; i < n; ++i) f[i] = f[i] * 0.5f + token + static_cast<float>(i);
}

void run_rows(RecurrentState& s, StateSlotId slot, int64_t from, const std::vector<float>& tokens, bool verify) {
  const auto to = from + static_cast<int64_t>(tokens.size());
  ASSERT_TRUE(s.begin_step(slot, from, to, verify).ok());
  const int64_t n = s.layout().conv_floats + s.layout().ssm_floats;
  for (int32_t layer = 0; layer < s.layout().num_layers; ++layer) {
    if (s.needs_sync(slot)) s.sync_layer(slot, layer, 0, n);
    for (int32_t r = 0; r < s.replay_rows(slot); ++r) advance(s, slot, layer, s.replay_log(slot, layer)[r]);
    if (float* save = s.replay_save(slot, layer)) std::copy(s.conv(slot, layer), s.conv(slot, layer) + n, save);
    for (size_t r = 0; r < tokens.size(); ++r) {
      if (verify && r + 1 < tokens.size()) s.step_log(slot, layer)[r] = tokens[r];
      advance(s, slot, layer, tokens[r]);
    }
  }
}

RecurrentLayout verify_layout(int32_t rollback) {
  RecurrentLayout layout = small_layout();
  layout.num_ring_slots = 2;
  layout.rollback = rollback;
  layout.checkpoints = 3;
  layout.log_floats = 1;
  return layout;
}

// The state after `tokens`, one plain step each.
std::vector<uint8_t> straight(const std::vector<float>& tokens) {
  Result<RecurrentState> s = RecurrentState::create(small_layout());
  EXPECT_TRUE(s.ok());
  for (size_t p = 0; p < tokens.size(); ++p) run_rows(*s, StateSlotId(0), static_cast<int64_t>(p), {tokens[p]}, false);
  return bytes_at(*s, StateSlotId(0), static_cast<int64_t>(tokens.size()));
}

// A verify step of 4 rows from 3 keeps no state per row: the version at 3
// stays, 4-6 become replayable and 7 is held; a step from any of 4-6 (an
// accepted prefix) replays the logged rows first and continues from the
// exact state, with or without a lane ring.
TEST(RecurrentStateReplay, AVerifyStepsAcceptedPrefixIsReplayedToTheExactState) {
  const std::vector<float> prompt = {1, 2, 3}, drafts = {10, 11, 12, 13};
  for (const int32_t rollback : {0, 2}) {
    for (int32_t accepted = 1; accepted <= 4; ++accepted) {
      Result<RecurrentState> s = RecurrentState::create(verify_layout(rollback));
      ASSERT_TRUE(s.ok()) << s.status().message();
      const StateSlotId slot(1);
      EXPECT_EQ(s->num_versions(slot), rollback > 0 ? 3 : 2);
      for (int64_t p = 0; p < 3; ++p) run_rows(*s, slot, p, {prompt[static_cast<size_t>(p)]}, false);
      run_rows(*s, slot, 3, drafts, true);
      EXPECT_EQ(s->position(slot), 7);
      for (int64_t p = 3; p <= 7; ++p) EXPECT_TRUE(s->holds(slot, p)) << p;
      for (int64_t p = 4; p < 7; ++p) EXPECT_TRUE(s->replayable(slot, p)) << p;
      EXPECT_FALSE(s->replayable(slot, 7));
      EXPECT_FALSE(s->at(slot, 5).ok());  // a spill image needs the device's replay first
      std::vector<float> want = prompt;
      want.insert(want.end(), drafts.begin(), drafts.begin() + accepted);
      want.push_back(20);
      run_rows(*s, slot, 3 + accepted, {20}, false);
      EXPECT_EQ(bytes_at(*s, slot, 4 + accepted), straight(want)) << accepted << " accepted, rollback " << rollback;
      EXPECT_FALSE(s->replayable(slot, 4));  // the range lasts one step
    }
  }
}

// A verify step from a replayable position (the last one's accepted
// prefix) replays, saves that state as its own start and logs on the other
// side: its own accepted prefix replays exactly too; from position 0 the
// replays start from the zero state.
TEST(RecurrentStateReplay, AVerifyStepFromAReplayedPositionIsReplayedExactlyToo) {
  Result<RecurrentState> s = RecurrentState::create(verify_layout(0));
  ASSERT_TRUE(s.ok());
  const StateSlotId slot(0);
  run_rows(*s, slot, 0, {1, 2, 3}, true);  // from the zero state
  run_rows(*s, slot, 1, {4, 5, 6, 7}, true);  // one of three accepted: replays 1, verifies from 1
  run_rows(*s, slot, 3, {8}, false);  // two of four accepted
  EXPECT_EQ(bytes_at(*s, slot, 4), straight({1, 4, 5, 8}));
}

// A spill image of a replayable position: a zero-row step from it makes it
// a version of its own (what ForwardPass::materialize_state does).
TEST(RecurrentStateReplay, AZeroRowStepMaterializesAReplayablePosition) {
  Result<RecurrentState> s = RecurrentState::create(verify_layout(2));
  ASSERT_TRUE(s.ok());
  const StateSlotId slot(1);
  run_rows(*s, slot, 0, {1}, false);
  run_rows(*s, slot, 1, {2, 3, 4}, true);
  run_rows(*s, slot, 2, {}, false);
  EXPECT_EQ(bytes_at(*s, slot, 2), straight({1, 2}));
  EXPECT_FALSE(s->holds(slot, 3));
}

TEST(RecurrentStateReplay, AVerifyStepLongerThanTheLogIsRefusedAndChangesNothing) {
  RecurrentLayout layout = verify_layout(0);
  layout.checkpoints = 2;
  Result<RecurrentState> s = RecurrentState::create(layout);
  ASSERT_TRUE(s.ok());
  const StateSlotId slot(0);
  run_rows(*s, slot, 0, {1}, false);
  const Status st = s->begin_step(slot, 1, 5, true);
  EXPECT_NE(st.message().find("a verify step of 4 rows logs 3 rows besides its last; the slot logs 2"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(s->position(slot), 1);
  EXPECT_NE(s->begin_step(StateSlotId(3), 0, 2, true).message().find("the slot logs 0"), std::string::npos);
  EXPECT_TRUE(s->begin_step(slot, 1, 4, true).ok());
  layout.checkpoints = kMaxStateRollback + 1;
  EXPECT_NE(RecurrentState::create(layout).status().message().find("checkpoints"), std::string::npos);
  layout.checkpoints = 2;
  layout.log_floats = 0;
  EXPECT_NE(RecurrentState::create(layout).status().message().find("replay log"), std::string::npos);
}

TEST(RecurrentStateRing, ARollbackPastTheLimitIsRefused) {
  RecurrentLayout l = ring_layout(kMaxStateRollback + 1);
  EXPECT_NE(RecurrentState::create(l).status().message().find("rollback"), std::string::npos);
  l = ring_layout(1);
  l.num_ring_slots = 4;
  EXPECT_NE(RecurrentState::create(l).status().message().find("ring slots"), std::string::npos);
}

}  // namespace
}  // namespace met::cpu
