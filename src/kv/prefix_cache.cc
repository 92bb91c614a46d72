// PrefixCache over a BlockPool. Tested by tests/kv/prefix_cache_test.cc.
#include "kv/prefix_cache.h"

#include <algorithm>
#include <optional>

#include "backend/step_plan.h"
#include "core/check.h"
#include "kv/kv_block.h"

namespace met {

PrefixCache::PrefixCache(BlockPool& pool) : pool_(pool) {}

PrefixMatch PrefixCache::lookup(std::span<const TokenId> tokens, CacheSalt salt, int32_t max_blocks,
                                std::vector<BlockId>& blocks, std::vector<BlockKey>* keys) const {
  // Keys are hashed block by block, stopping at the first miss, so a long
  // prompt that shares little costs little.
  const size_t num_full = tokens.size() / kKvBlockTokens;
  const size_t limit = max_blocks > 0 ? std::min(num_full, static_cast<size_t>(max_blocks)) : 0;
  PrefixMatch m;
  std::optional<BlockKey> parent;
  for (size_t b = 0; b < limit; ++b) {
    parent = block_key(parent, tokens.subspan(b * kKvBlockTokens, kKvBlockTokens), salt);
    const std::optional<BlockId> block = pool_.find(*parent);
    if (!block) break;
    blocks.push_back(*block);
    if (keys != nullptr) keys->push_back(*parent);
    ++m.num_blocks;
  }
  m.num_tokens = m.num_blocks * kKvBlockTokens;
  return m;
}

PrefixMatch PrefixCache::adopt(std::span<const BlockId> blocks, int64_t query_tokens, std::vector<BlockId>& table) {
  for (BlockId b : blocks) {
    pool_.retain(b);
    table.push_back(b);
  }
  const PrefixMatch m{static_cast<int32_t>(blocks.size()), static_cast<int32_t>(blocks.size()) * kKvBlockTokens};
  count_query(query_tokens, m);
  return m;
}

void PrefixCache::count_query(int64_t query_tokens, const PrefixMatch& m) {
  ++num_queries_;
  num_hit_tokens_ += m.num_tokens;
  num_query_tokens_ += query_tokens;
}

PrefixMatch PrefixCache::match(std::span<const TokenId> tokens, CacheSalt salt, int32_t max_blocks,
                               std::vector<BlockId>& table) {
  const size_t first = table.size();
  const PrefixMatch m = lookup(tokens, salt, max_blocks, table);
  for (size_t i = first; i < table.size(); ++i) pool_.retain(table[i]);
  count_query(static_cast<int64_t>(tokens.size()), m);
  return m;
}

int32_t PrefixCache::register_blocks(std::span<const TokenId> tokens, int32_t num_tokens,
                                     std::span<const BlockId> table, CacheSalt salt) {
  MET_DCHECK(num_tokens >= 0 && static_cast<size_t>(num_tokens) <= tokens.size(),
             "register_blocks of {} tokens out of {}", num_tokens, tokens.size());
  chain_keys(tokens.first(static_cast<size_t>(num_tokens)), salt, scratch_keys_);
  MET_CHECK(table.size() >= scratch_keys_.size(), "register_blocks: {} full blocks but a table of {}",
            scratch_keys_.size(), table.size());
  int32_t num_keyed = 0;
  for (size_t i = 0; i < scratch_keys_.size(); ++i) {
    // A block that already has a key (a prefix hit, or registered earlier)
    // has this one: keys follow from the tokens alone.
    if (const std::optional<BlockKey> key = pool_.key_of(table[i])) {
      MET_DCHECK(*key == scratch_keys_[i], "block {} of the table holds the key of other tokens",
                 table[i].value());
      continue;
    }
    if (!pool_.set_key(table[i], scratch_keys_[i])) continue;
    ++num_keyed;
    if (KvEventSink* sink = pool_.event_sink()) {
      const std::optional<BlockKey> parent = i > 0 ? std::optional(scratch_keys_[i - 1]) : std::nullopt;
      sink->block_stored(scratch_keys_[i], parent, tokens.subspan(i * kKvBlockTokens, kKvBlockTokens), salt.adapter);
    }
  }
  return num_keyed;
}

}  // namespace met
