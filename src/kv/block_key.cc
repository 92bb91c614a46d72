// Block keys over XXH3: one contiguous little-endian buffer per block, hashed
// in one call (no allocation). Tested by tests/kv/block_key_test.cc.
#include "kv/block_key.h"

#include <array>

#include <xxhash.h>

#include "backend/step_plan.h"
#include "core/check.h"
#include "core/little_endian.h"
#include "kv/kv_block.h"

namespace met {
namespace {

// parent key (16) + tokens (4 each) + tenant (8) + adapter (8).
constexpr size_t kKeyInputBytes = 16 + 4 * kKvBlockTokens + 8 + 8;

// Stands in for the parent of a sequence's first block: the bytes
// "met-kv-root-v1\0\0" read as two little-endian u64. A format constant.
constexpr BlockKey kRootMarker{.lo = 0x722d766b2d74656dULL, .hi = 0x000031762d746f6fULL};

}  // namespace

size_t BlockKeyHash::operator()(const BlockKey& k) const noexcept {
  // Both halves are already uniform hash bits; mixing them costs nothing.
  return static_cast<size_t>(k.lo ^ (k.hi * 0x9e3779b97f4a7c15ULL));
}

uint64_t tenant_salt(std::string_view cache_salt) {
  if (cache_salt.empty()) return 0;
  const uint64_t h = XXH3_64bits(cache_salt.data(), cache_salt.size());
  return h == 0 ? 1 : h;  // 0 means "no salt"; a salt that hashes to it moves aside
}

BlockKey block_key(const std::optional<BlockKey>& parent, std::span<const TokenId> block_tokens,
                   CacheSalt salt) {
  MET_DCHECK(block_tokens.size() == static_cast<size_t>(kKvBlockTokens),
             "block_key: {} tokens, a block holds {}", block_tokens.size(), kKvBlockTokens);
  std::array<uint8_t, kKeyInputBytes> buf;
  uint8_t* p = buf.data();
  const BlockKey& prev = parent ? *parent : kRootMarker;
  put_u64(p, prev.lo);
  put_u64(p + 8, prev.hi);
  p += 16;
  for (int32_t i = 0; i < kKvBlockTokens; ++i, p += 4) put_u32(p, static_cast<uint32_t>(block_tokens[i]));
  put_u64(p, salt.tenant);
  put_u64(p + 8, salt.adapter);
  const XXH128_hash_t h = XXH3_128bits(buf.data(), buf.size());
  return BlockKey{.lo = h.low64, .hi = h.high64};
}

void chain_keys(std::span<const TokenId> tokens, CacheSalt salt, std::vector<BlockKey>& out) {
  out.clear();
  const size_t num_full = tokens.size() / kKvBlockTokens;
  std::optional<BlockKey> parent;
  for (size_t b = 0; b < num_full; ++b) {
    parent = block_key(parent, tokens.subspan(b * kKvBlockTokens, kKvBlockTokens), salt);
    out.push_back(*parent);
  }
}

}  // namespace met
