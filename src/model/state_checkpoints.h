// How a recurrent layer runs a verify step's rows (StepSeq::state_checkpoints,
// speculative decoding): one row at a time, the state after each row but the
// last copied into that row's checkpoint version (cpu::RecurrentState::
// checkpoint), so the next step can start after any accepted prefix. Other
// seqs run all their rows in one call. Shared by the gated delta net and the
// Mamba2 layer. Threading: what the callers' ranges allow (threads split
// conv channels and (seq, head) pairs). Tested by
// tests/model/hybrid_verify_test.cc.
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/short_conv.h"
#include "backend/cpu/recurrent_state.h"
#include "backend/step_plan.h"

namespace met {

// Channels [c0, c1) of `s`'s short convolution: convolve(r, n, state) runs
// rows [r, r + n) of the seq on `state` (its conv state, updated).
template <typename Convolve>
void convolve_seq(cpu::RecurrentState& state, const StepSeq& s, int32_t rlayer, int32_t d_conv, int64_t channels,
                  int64_t c0, int64_t c1, Convolve&& convolve) {
  float* st = state.conv(*s.state_slot, rlayer);
  const int32_t rows_per_call = s.state_checkpoints ? 1 : s.num_rows;
  for (int32_t r = 0; r < s.num_rows; r += rows_per_call) {
    convolve(r, rows_per_call, st);
    if (r + rows_per_call < s.num_rows) {
      cpu::copy_conv_state(st, state.checkpoint(*s.state_slot, rlayer, s.num_cached + r + 1), d_conv, channels, c0,
                           c1);
    }
  }
}

// A verify seq's rows of one head whose SSM state `st` (head_floats floats
// at `head_offset` in the layer's SSM state) advance(r) moves past row r.
template <typename Advance>
void advance_rows_with_checkpoints(cpu::RecurrentState& state, const StepSeq& s, int32_t rlayer, int64_t head_offset,
                                   int64_t head_floats, const float* st, Advance&& advance) {
  const int64_t conv_floats = state.layout().conv_floats;
  for (int32_t r = 0; r < s.num_rows; ++r) {
    advance(r);
    if (r + 1 == s.num_rows) break;
    float* to = state.checkpoint(*s.state_slot, rlayer, s.num_cached + r + 1) + conv_floats + head_offset;
    std::memcpy(to, st, static_cast<size_t>(head_floats) * sizeof(float));
  }
}

}  // namespace met
