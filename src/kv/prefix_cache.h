// PrefixCache: reuse of KV blocks across sequences that share a prompt
// prefix. A sequence's full blocks are registered under their chained keys
// (kv/block_key.h) before it drops its references; a later sequence with the
// same leading tokens, tenant and adapter retains those blocks instead of
// prefilling them again. The blocks themselves, their references, the LRU and
// the key index live in the BlockPool; this class adds the key chain and the
// hit statistics.
// Invariants: a match is a chain from token 0 with no gaps; every matched
// block is retained once for the caller; no allocation per call once the
// scratch key vector has grown to the longest prompt seen.
// Threading: engine thread only (like its pool).
// Tested by tests/kv/prefix_cache_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ids.h"
#include "kv/block_key.h"
#include "kv/block_pool.h"
#include "kv/kv_block.h"

namespace met {

struct PrefixMatch {
  int32_t num_blocks = 0;
  int32_t num_tokens = 0;  // num_blocks * kKvBlockTokens
};

class PrefixCache {
 public:
  explicit PrefixCache(BlockPool& pool);

  // The longest chain of cached blocks that starts at token 0 of `tokens` and
  // has at most max_blocks blocks: each matched block is retained and appended
  // to `table`. Counts one query of tokens.size() tokens and its hit tokens.
  PrefixMatch match(std::span<const TokenId> tokens, CacheSalt salt, int32_t max_blocks,
                    std::vector<BlockId>& table);

  // The same chain as match finds, appended to `blocks`, with nothing
  // retained or counted (a query: the scheduler decides before it takes);
  // `keys`, if given, gets each matched block's key appended.
  PrefixMatch lookup(std::span<const TokenId> tokens, CacheSalt salt, int32_t max_blocks,
                     std::vector<BlockId>& blocks, std::vector<BlockKey>* keys = nullptr) const;
  // Takes a chain lookup found: retains each block, appends it to `table`,
  // and counts one query of `query_tokens` tokens and its hit tokens.
  // REQUIRES: `blocks` is lookup's answer, with no eviction since.
  PrefixMatch adopt(std::span<const BlockId> blocks, int64_t query_tokens, std::vector<BlockId>& table);

  // Registers the full blocks among the first `num_tokens` tokens: block i of
  // `table` gets key chain_keys(tokens[0..num_tokens))[i] unless it already
  // has one; blocks whose key already names another block stay unkeyed.
  // Each newly keyed block is reported to the pool's event sink, if any.
  // Returns how many blocks were newly keyed.
  // REQUIRES: 0 <= num_tokens <= tokens.size();
  //           table.size() >= num_tokens / kKvBlockTokens; those blocks in use.
  int32_t register_blocks(std::span<const TokenId> tokens, int32_t num_tokens,
                          std::span<const BlockId> table, CacheSalt salt);

  // The key of every cached block (in use or evictable), appended to `out`
  // in no set order.
  void append_cached_keys(std::vector<BlockKey>& out) const { pool_.append_keys(out); }

  int64_t num_queries() const { return num_queries_; }
  int64_t num_hit_tokens() const { return num_hit_tokens_; }
  int64_t num_query_tokens() const { return num_query_tokens_; }

 private:
  BlockPool& pool_;
  void count_query(int64_t query_tokens, const PrefixMatch& m);

  std::vector<BlockKey> scratch_keys_;
  int64_t num_queries_ = 0;
  int64_t num_hit_tokens_ = 0;
  int64_t num_query_tokens_ = 0;
};

}  // namespace met
