// How a recurrent layer runs a sequence's rows around speculative decoding's
// verify steps (StepSeq::state_checkpoints; cpu::RecurrentState's replay
// log): a step from a verify step's accepted prefix first advances the state
// it reads over the logged rows it replays (and, when it verifies too, saves
// that state as its own replays' start); a verify seq logs its rows' inputs
// but the last and runs its rows one per call, as decode steps run them, so
// a replay gives the state those steps would have, bit for bit. Each layer
// lays out its log rows (gated_delta_layer.cc, mamba2_layer.cc): the raw
// convolution inputs first (kConvLogOffset), then what its heads read.
// Threading: what the callers' ranges allow (threads split conv channels
// and (seq, head) pairs). Tested by tests/model/hybrid_model_test.cc and
// mamba2_model_test.cc (expect_verify_steps_rewind_exactly).
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/short_conv.h"
#include "backend/cpu/recurrent_state.h"
#include "backend/step_plan.h"

namespace met {

// A log row starts with the row's raw convolution input (`channels` floats).
inline constexpr int64_t kConvLogOffset = 0;

struct ConvChannels {
  int32_t d_conv = 0;
  int64_t channels = 0;
  int64_t c0 = 0, c1 = 0;  // this thread's
  int64_t log_floats = 0;
};

// Channels [c0, c1) of `s`'s short convolution in recurrent layer `rlayer`:
// the rows the step replays, then the seq's rows, row r's input at x + r *
// x_stride and output at out + r * out_stride. conv(x, x_stride, n, st, out,
// out_stride) runs n rows on conv state st; replayed rows' outputs go to
// `scratch` (one row of `channels` floats).
template <typename Conv>
void convolve_seq(cpu::RecurrentState& state, const StepSeq& s, int32_t rlayer, const ConvChannels& ch,
                  const float* x, int64_t x_stride, float* out, int64_t out_stride, float* scratch, Conv&& conv) {
  const StateSlotId slot = *s.state_slot;
  float* st = state.conv(slot, rlayer);
  if (const int32_t replays = state.replay_rows(slot); replays > 0) {
    const float* log = state.replay_log(slot, rlayer);
    for (int32_t r = 0; r < replays; ++r) conv(log + r * ch.log_floats + kConvLogOffset, 0, 1, st, scratch, 0);
    if (float* save = state.replay_save(slot, rlayer)) {
      cpu::copy_conv_state(st, save, ch.d_conv, ch.channels, ch.c0, ch.c1);
    }
  }
  if (!s.state_checkpoints) {
    conv(x, x_stride, s.num_rows, st, out, out_stride);
    return;
  }
  float* log = state.step_log(slot, rlayer);
  for (int32_t r = 0; r < s.num_rows; ++r) {
    if (r + 1 < s.num_rows) {
      std::memcpy(log + r * ch.log_floats + kConvLogOffset + ch.c0, x + r * x_stride + ch.c0,
                  static_cast<size_t>(ch.c1 - ch.c0) * sizeof(float));
    }
    conv(x + r * x_stride, x_stride, 1, st, out + r * out_stride, out_stride);
  }
}

// Head state `st` (head_floats floats at head_offset in the SSM state of
// recurrent layer `rlayer`) of seq `s`: filled from the version the step
// reads, advanced over the logged rows the step replays (replay(log_row)),
// saved where a replaying verify step keeps it, then past the seq's rows: a
// verify seq's one per call (advance(r)), others by run_all().
template <typename Replay, typename Advance, typename RunAll>
void advance_head(cpu::RecurrentState& state, const StepSeq& s, int32_t rlayer, int64_t head_offset,
                  int64_t head_floats, float* st, Replay&& replay, Advance&& advance, RunAll&& run_all) {
  const StateSlotId slot = *s.state_slot;
  const size_t bytes = static_cast<size_t>(head_floats) * sizeof(float);
  // A rewindable slot's step writes another version than it reads: the
  // head's state is copied over here, where the kernel reads it from cache.
  if (const float* src = state.ssm_source(slot, rlayer)) std::memcpy(st, src + head_offset, bytes);
  if (const int32_t replays = state.replay_rows(slot); replays > 0) {
    const float* log = state.replay_log(slot, rlayer);
    const int64_t log_floats = state.layout().log_floats;
    for (int32_t r = 0; r < replays; ++r) replay(log + r * log_floats);
    if (float* save = state.replay_save(slot, rlayer)) {
      std::memcpy(save + state.layout().conv_floats + head_offset, st, bytes);
    }
  }
  if (!s.state_checkpoints) {
    run_all();
    return;
  }
  for (int32_t r = 0; r < s.num_rows; ++r) advance(r);
}

}  // namespace met
