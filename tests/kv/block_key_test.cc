// Tests for block keys (src/kv/block_key.h).
#include "kv/block_key.h"

#include <array>
#include <cstring>
#include <numeric>
#include <unordered_set>

#include <gtest/gtest.h>
#include <xxhash.h>

#include "backend/step_plan.h"
#include "kv/kv_block.h"

namespace met {
namespace {

std::vector<TokenId> tokens_from(TokenId first, int32_t n) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

const std::vector<TokenId> kBlock = tokens_from(100, kKvBlockTokens);
const BlockKey kParent{.lo = 0x0123456789abcdefULL, .hi = 0xfedcba9876543210ULL};

// The documented layout, written out by hand: parent (lo, hi), the tokens as
// little-endian int32, tenant, adapter; XXH3-128 over it.
BlockKey reference_key(const BlockKey& parent, std::span<const TokenId> tokens, CacheSalt salt) {
  std::vector<uint8_t> buf;
  const auto put = [&buf](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) buf.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put(parent.lo, 8);
  put(parent.hi, 8);
  for (const TokenId t : tokens) put(static_cast<uint32_t>(t), 4);
  put(salt.tenant, 8);
  put(salt.adapter, 8);
  const XXH128_hash_t h = XXH3_128bits(buf.data(), buf.size());
  return BlockKey{.lo = h.low64, .hi = h.high64};
}

TEST(BlockKey, IsXxh3Of128BitsOverTheDocumentedLayout) {
  const std::vector<TokenId> tokens = {-1, 0, 1, 0x7fffffff, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const CacheSalt salt{.tenant = 0x1122334455667788ULL, .adapter = 3};
  EXPECT_EQ(block_key(kParent, tokens, salt), reference_key(kParent, tokens, salt));
}

TEST(BlockKey, FirstBlockChainsFromTheRootMarker) {
  BlockKey root;
  std::memcpy(&root.lo, "met-kv-r", 8);
  std::memcpy(&root.hi, "oot-v1\0\0", 8);
  EXPECT_EQ(block_key(std::nullopt, kBlock, {}), reference_key(root, kBlock, {}));
}

TEST(BlockKey, SameInputsGiveTheSameKey) {
  const CacheSalt salt{.tenant = 9, .adapter = 2};
  EXPECT_EQ(block_key(kParent, kBlock, salt), block_key(kParent, kBlock, salt));
  EXPECT_EQ(block_key(std::nullopt, kBlock, salt), block_key(std::nullopt, kBlock, salt));
}

TEST(BlockKey, KeysDifferWhenAnyTokenDiffers) {
  const BlockKey base = block_key(kParent, kBlock, {});
  for (int32_t i = 0; i < kKvBlockTokens; ++i) {
    std::vector<TokenId> changed = kBlock;
    changed[static_cast<size_t>(i)] += 1;
    EXPECT_NE(block_key(kParent, changed, {}), base) << "token " << i;
  }
}

TEST(BlockKey, KeysDifferWhenTheParentDiffers) {
  const BlockKey other_parent{.lo = kParent.lo, .hi = kParent.hi + 1};
  EXPECT_NE(block_key(kParent, kBlock, {}), block_key(other_parent, kBlock, {}));
  EXPECT_NE(block_key(kParent, kBlock, {}), block_key(std::nullopt, kBlock, {}));
}

TEST(BlockKey, KeysDifferWhenTheTenantDiffers) {
  EXPECT_NE(block_key(kParent, kBlock, {.tenant = 1}), block_key(kParent, kBlock, {.tenant = 2}));
  EXPECT_NE(block_key(kParent, kBlock, {.tenant = 0}), block_key(kParent, kBlock, {.tenant = 1}));
}

TEST(BlockKey, KeysDifferWhenTheAdapterDiffers) {
  EXPECT_NE(block_key(kParent, kBlock, {.adapter = 1}), block_key(kParent, kBlock, {.adapter = 2}));
  EXPECT_NE(block_key(kParent, kBlock, {.adapter = 0}), block_key(kParent, kBlock, {.adapter = 1}));
}

TEST(BlockKey, TenantAndAdapterAreNotInterchangeable) {
  EXPECT_NE(block_key(kParent, kBlock, {.tenant = 7, .adapter = 0}),
            block_key(kParent, kBlock, {.tenant = 0, .adapter = 7}));
}

TEST(BlockKey, TenantSaltIsZeroOnlyForTheEmptyString) {
  EXPECT_EQ(tenant_salt(""), 0u);
  for (const char* s : {"a", "tenant-1", "tenant-2", " "}) {
    EXPECT_NE(tenant_salt(s), 0u) << s;
  }
  EXPECT_NE(tenant_salt(std::string_view("\0", 1)), 0u);
}

TEST(BlockKey, TenantSaltIsTheXxh3HashOfTheString) {
  EXPECT_EQ(tenant_salt("acme"), XXH3_64bits("acme", 4));
}

TEST(BlockKey, TenantSaltsOfDifferentStringsDiffer) {
  EXPECT_NE(tenant_salt("acme"), tenant_salt("acme "));
  EXPECT_NE(tenant_salt("acme"), tenant_salt("ACME"));
  EXPECT_EQ(tenant_salt("acme"), tenant_salt(std::string("ac") + "me"));
}

TEST(BlockKey, ChainKeysGivesOneKeyPerFullBlock) {
  std::vector<BlockKey> keys;
  for (const int32_t n : {0, 1, 15, 16, 17, 47, 48, 49}) {
    chain_keys(tokens_from(0, n), {}, keys);
    EXPECT_EQ(keys.size(), static_cast<size_t>(n / kKvBlockTokens)) << n << " tokens";
  }
}

TEST(BlockKey, ChainKeysChainsEachBlockToItsParent) {
  const std::vector<TokenId> tokens = tokens_from(7, 3 * kKvBlockTokens + 5);
  const CacheSalt salt{.tenant = tenant_salt("t"), .adapter = 4};
  std::vector<BlockKey> keys;
  chain_keys(tokens, salt, keys);
  ASSERT_EQ(keys.size(), 3u);
  std::optional<BlockKey> parent;
  for (size_t b = 0; b < keys.size(); ++b) {
    parent = block_key(parent, std::span(tokens).subspan(b * kKvBlockTokens, kKvBlockTokens), salt);
    EXPECT_EQ(keys[b], *parent) << "block " << b;
  }
}

TEST(BlockKey, ChainsOfEqualPrefixesGiveEqualKeys) {
  std::vector<TokenId> a = tokens_from(0, 4 * kKvBlockTokens);
  std::vector<TokenId> b = a;
  b[2 * kKvBlockTokens + 3] = -5;  // the third block differs
  std::vector<BlockKey> ka, kb;
  chain_keys(a, {}, ka);
  chain_keys(b, {}, kb);
  EXPECT_EQ(ka[0], kb[0]);
  EXPECT_EQ(ka[1], kb[1]);
  EXPECT_NE(ka[2], kb[2]);
  EXPECT_NE(ka[3], kb[3]);  // same tokens, but a different parent
}

TEST(BlockKey, ADifferenceInTheFirstBlockChangesEveryLaterKey) {
  std::vector<TokenId> a = tokens_from(0, 3 * kKvBlockTokens);
  std::vector<TokenId> b = a;
  b[0] = 999;
  std::vector<BlockKey> ka, kb;
  chain_keys(a, {}, ka);
  chain_keys(b, {}, kb);
  for (size_t i = 0; i < ka.size(); ++i) EXPECT_NE(ka[i], kb[i]) << "block " << i;
}

TEST(BlockKey, ChainKeysClearsTheOutputFirst) {
  std::vector<BlockKey> keys(5, kParent);
  chain_keys(tokens_from(0, kKvBlockTokens), {}, keys);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0], block_key(std::nullopt, tokens_from(0, kKvBlockTokens), {}));
}

TEST(BlockKey, RepeatedBlocksInOneChainGetDistinctKeys) {
  const std::vector<TokenId> tokens(4 * kKvBlockTokens, 42);
  std::vector<BlockKey> keys;
  chain_keys(tokens, {}, keys);
  const std::unordered_set<BlockKey, BlockKeyHash> distinct(keys.begin(), keys.end());
  EXPECT_EQ(distinct.size(), keys.size());
}

}  // namespace
}  // namespace met
