// BlockKey: a full KV block's identity in the prefix cache, a chained hash of
// (the parent block's key, the block's tokens, the tenant, the adapter), so
// two blocks share a key only when everything before and in them is equal.
// Invariants: a key depends only on its inputs (the same on every run and
// host); keys never match across tenants or adapters (DESIGN.md invariant 5);
// tenant_salt is 0 only for the empty salt.
// Threading: pure functions over plain values, any thread.
// Tested by tests/kv/block_key_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "kv/kv_block.h"

namespace met {

// Salts a prefix-cache key so that hits never cross tenants or adapters.
struct CacheSalt {
  uint64_t tenant = 0;   // tenant_salt(cache_salt); 0 = no salt given
  uint64_t adapter = 0;  // adapter id; 0 = the base model
  friend bool operator==(const CacheSalt&, const CacheSalt&) = default;
};

// A full block's identity in the prefix cache: XXH3-128 over (the parent's
// key, or a fixed root marker for block 0; the block's kKvBlockTokens token
// ids as little-endian int32; salt.tenant; salt.adapter), all little-endian.
struct BlockKey {
  uint64_t lo = 0, hi = 0;
  friend bool operator==(const BlockKey&, const BlockKey&) = default;
};

struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const noexcept;
};

// 0 for "", else a 64-bit XXH3 hash of the bytes, never 0.
uint64_t tenant_salt(std::string_view cache_salt);

// The key of one full block whose parent block has key `parent` (nullopt for
// the first block of a sequence).
// REQUIRES: block_tokens.size() == kKvBlockTokens.
BlockKey block_key(const std::optional<BlockKey>& parent, std::span<const TokenId> block_tokens,
                   CacheSalt salt);

// Keys of the full blocks of `tokens` in order (tokens.size() / kKvBlockTokens
// of them), appended to out after clearing it; a partial last block has none.
void chain_keys(std::span<const TokenId> tokens, CacheSalt salt, std::vector<BlockKey>& out);

// The 64-bit hash a key is known by outside met (KV events for prefix-aware
// routers): its low half, which is as uniform as the whole.
inline uint64_t external_block_hash(const BlockKey& key) { return key.lo; }

}  // namespace met
