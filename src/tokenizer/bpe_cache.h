// BpeCache: a bounded map from a pre-token's raw bytes to its BPE token ids,
// so that repeated words skip the merge loop.
// Invariants: holds at most max_entries entries (two generations per shard:
// when the current one is full it becomes the previous one and the old
// previous one is dropped, so recently used entries survive a rotation);
// a hit returns exactly what was inserted for those bytes.
// Threading: thread-safe; each of the 16 shards has its own mutex guarding its
// maps. The only mutable state of a Tokenizer.
// Tested by tests/tokenizer/bpe_cache_test.cc.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"
#include "tokenizer/vocab.h"

namespace met {

class BpeCache {
 public:
  // max_entries == 0 disables the cache.
  explicit BpeCache(size_t max_entries);

  // Appends the cached ids of `piece` to `out`; false on a miss.
  bool find(std::string_view piece, std::vector<TokenId>& out);
  void insert(std::string_view piece, std::span<const TokenId> ids);

  size_t max_entries() const { return per_shard_ * kShards * 2; }
  // Entries held now (locks every shard in turn).
  size_t size();

 private:
  static constexpr size_t kShards = 16;
  using Map = std::unordered_map<std::string, std::vector<TokenId>, StringViewHash, std::equal_to<>>;
  struct Shard {
    Mutex mu;
    Map current GUARDED_BY(mu);
    Map previous GUARDED_BY(mu);
  };
  Shard& shard_for(std::string_view piece);
  void rotate_if_full(Shard& shard) REQUIRES(shard.mu);

  size_t per_shard_;  // capacity of one generation of one shard
  std::array<Shard, kShards> shards_;
};

}  // namespace met
