// The causal short convolution of recurrent layers (ggml_ssm_conv) followed
// by SiLU, with its rolling state: for row r and channel c,
//   y = sum_{w < d_conv} in[r + w - (d_conv - 1)][c] * kernel[c * d_conv + w]
//       (+ bias[c] when a bias is given: Mamba2's ssm_conv1d.bias),
//   out[r][c] = silu(y) = y / (1 + e^-y),
// where rows before 0 come from the state (the previous d_conv - 1 inputs,
// oldest first). Afterwards the state holds the last d_conv - 1 inputs of
// the concatenation (old state, x), oldest first. kernel is GGUF's
// ssm_conv1d {d_conv, channels} (d_conv fastest).
// Invariants: a channel's result depends on that channel alone, so calls
// over disjoint channel ranges compose; rows may be split across calls
// anywhere (the state carries them). out must not overlap x or state.
// Threading: pure function over the channels given; threads split by
// channel. Tested by tests/backend/short_conv_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>

namespace met::cpu {

inline constexpr int32_t kMaxShortConvWidth = 8;  // d_conv; Qwen3.5 and Mamba2 use 4

// Channels [c_begin, c_end) of `rows` rows. x row r at x + r*x_stride (full
// width, indexed by c); kernel[c*d_conv + w]; state: (d_conv-1) rows x
// `channels` floats, oldest first, updated; out row r at out + r*out_stride;
// bias: null, or `channels` floats added to y before the SiLU (after the
// taps' sum, as ggml adds ssm_conv1d.bias to ssm_conv's result).
// REQUIRES: 1 <= d_conv <= kMaxShortConvWidth, 0 <= c_begin <= c_end <= channels.
void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias = nullptr);

// Copies channels [c_begin, c_end) of a short convolution's state ((d_conv -
// 1) rows of `channels` floats) from `from` to `to`: a checkpoint of it.
inline void copy_conv_state(const float* from, float* to, int32_t d_conv, int64_t channels, int64_t c_begin,
                            int64_t c_end) {
  for (int32_t w = 0; w + 1 < d_conv; ++w) {
    std::copy(from + w * channels + c_begin, from + w * channels + c_end, to + w * channels + c_begin);
  }
}

}  // namespace met::cpu
