// Sharded two-generation cache. Tested by tests/tokenizer/bpe_cache_test.cc.
#include "tokenizer/bpe_cache.h"

namespace met {

BpeCache::BpeCache(size_t max_entries) : per_shard_(max_entries / (2 * kShards)) {}

BpeCache::Shard& BpeCache::shard_for(std::string_view piece) {
  // The low bits feed the map's buckets; the shard takes high ones.
  return shards_[(StringViewHash{}(piece) >> 56) % kShards];
}

void BpeCache::rotate_if_full(Shard& shard) {
  if (shard.current.size() < per_shard_) return;
  shard.previous = std::move(shard.current);
  shard.current = Map();
}

bool BpeCache::find(std::string_view piece, std::vector<TokenId>& out) {
  if (per_shard_ == 0) return false;
  Shard& shard = shard_for(piece);
  MutexLock lock(shard.mu);
  auto it = shard.current.find(piece);
  if (it == shard.current.end()) {
    it = shard.previous.find(piece);
    if (it == shard.previous.end()) return false;
    // Promote, so that entries in use survive the next rotation.
    auto node = shard.previous.extract(it);
    out.insert(out.end(), node.mapped().begin(), node.mapped().end());
    rotate_if_full(shard);
    shard.current.insert(std::move(node));
    return true;
  }
  out.insert(out.end(), it->second.begin(), it->second.end());
  return true;
}

void BpeCache::insert(std::string_view piece, std::span<const TokenId> ids) {
  if (per_shard_ == 0) return;
  Shard& shard = shard_for(piece);
  MutexLock lock(shard.mu);
  rotate_if_full(shard);
  shard.current.emplace(std::string(piece), std::vector<TokenId>(ids.begin(), ids.end()));
}

size_t BpeCache::size() {
  size_t total = 0;
  for (Shard& shard : shards_) {
    MutexLock lock(shard.mu);
    total += shard.current.size() + shard.previous.size();
  }
  return total;
}

}  // namespace met
