// The paged KV cache's unit: a block of kKvBlockTokens token positions. The
// KV manager, the prefix cache's keys, the scheduler's decisions and request
// limits count in these blocks; a device states the block size its KV
// layout uses (DeviceInfo::kv_block_tokens) and the scheduler refuses a
// device whose size differs.
// Threading: constants and pure functions.
#pragma once

#include <cstdint>

namespace met {

inline constexpr int32_t kKvBlockTokens = 16;  // token slots per KV block

// KV blocks that hold `num_tokens` positions.
inline constexpr int32_t blocks_for_tokens(int64_t num_tokens) {
  return static_cast<int32_t>((num_tokens + kKvBlockTokens - 1) / kKvBlockTokens);
}

}  // namespace met
