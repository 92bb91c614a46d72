// The paged KV cache's unit: a block of kKvBlockTokens token positions. The
// KV manager, the prefix cache's keys, the scheduler's decisions and request
// limits count in these blocks; a device states the block size its KV
// layout uses (DeviceInfo::kv_block_tokens) and the scheduler refuses a
// device whose size differs. For a model whose every layer attends through a
// sliding window (DeviceInfo::kv_window), the leading blocks behind the
// window are given back as the sequence grows.
// Threading: constants and pure functions.
#pragma once

#include <cstdint>

namespace met {

inline constexpr int32_t kKvBlockTokens = 16;  // token slots per KV block

// KV blocks that hold `num_tokens` positions.
inline constexpr int32_t blocks_for_tokens(int64_t num_tokens) {
  return static_cast<int32_t>((num_tokens + kKvBlockTokens - 1) / kKvBlockTokens);
}

// Leading blocks no attention reads again once `seq_len` positions hold KV,
// when every layer reads at most `window` positions back: the next query, at
// position seq_len, reads [seq_len - window + 1, seq_len], so block b (its
// positions [16b, 16b + 15]) is behind once 16b + 15 < seq_len - window + 1.
// 0 when `window` is 0 (some layer reads the whole context).
inline constexpr int32_t blocks_behind_window(int64_t seq_len, int32_t window) {
  if (window <= 0) return 0;
  const int64_t first_read = seq_len - window + 1;
  return first_read <= 0 ? 0 : static_cast<int32_t>(first_read / kKvBlockTokens);
}

// Blocks a sequence must hold to compute its next row when every layer reads
// `window` positions back: the window's positions straddle at most one
// block more than they fill. However long it grows, it needs no more.
inline constexpr int32_t window_min_blocks(int32_t window) { return blocks_for_tokens(window) + 1; }

}  // namespace met
