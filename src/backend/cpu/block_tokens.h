// The CPU backend's KV block: kBlockTokens token slots, the size its
// attention kernels and KvCache layout are compiled for. CpuDevice reports it
// as DeviceInfo::kv_block_tokens; the scheduler checks it against the KV
// manager's block (kv/kv_block.h) before it runs.
// Threading: a constant.
#pragma once

#include <cstdint>

namespace met::cpu {

inline constexpr int32_t kBlockTokens = 16;

}  // namespace met::cpu
