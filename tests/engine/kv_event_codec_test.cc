// Tests for engine/kv_event_codec.h: batches encode as vLLM's msgspec
// KVEventBatch does (array_like structs, the class name as each event's
// tag, omit_defaults dropping data_parallel_rank), byte for byte for a small
// batch and structurally, through an independent decoder, for the rest.
#include "engine/kv_event_codec.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "testing/msgpack_reader.h"

namespace met {
namespace {

using testing::MsgpackValue;
using testing::read_msgpack;

KvBlockStored stored(uint64_t hash, std::optional<uint64_t> parent, TokenId first,
                     std::optional<uint64_t> lora = std::nullopt) {
  KvBlockStored e;
  e.block_hash = hash;
  e.parent_hash = parent;
  std::iota(e.token_ids.begin(), e.token_ids.end(), first);
  e.lora_id = lora;
  return e;
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

TEST(KvEventCodec, ASmallBatchEncodesAsMsgspecWouldByteForByte) {
  KvEventBatch batch;
  batch.ts = 1.5;
  batch.events = {stored(0x1122334455667788, std::nullopt, 0), KvBlockRemoved{.block_hash = 5}, KvAllBlocksCleared{}};
  std::string out;
  encode_kv_event_batch(batch, "CPU", out);
  std::string want = bytes({0x92, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x93});
  want += bytes({0x97, 0xab}) + "BlockStored";
  want += bytes({0x91, 0xcf, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xc0, 0xdc, 0x00, 0x10});
  for (int t = 0; t < 16; ++t) want.push_back(static_cast<char>(t));
  want += bytes({0x10, 0xc0, 0xa3}) + "CPU";
  want += bytes({0x93, 0xac}) + "BlockRemoved" + bytes({0x91, 0x05, 0xa3}) + "CPU";
  want += bytes({0x91, 0xb0}) + "AllBlocksCleared";
  EXPECT_EQ(out, want);
}

TEST(KvEventCodec, BlockStoredCarriesItsFieldsInVllmsOrder) {
  KvEventBatch batch;
  batch.ts = 1733300000.25;
  batch.events = {stored(0xfedcba9876543210, 0x0123456789abcdef, 1000, 3)};
  std::string out;
  encode_kv_event_batch(batch, "GPU", out);
  const std::optional<MsgpackValue> v = read_msgpack(out);
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ(v->array.size(), 2u);  // [ts, events]: data_parallel_rank omitted
  EXPECT_EQ(v->array[0].kind, MsgpackValue::Kind::kFloat);
  EXPECT_EQ(v->array[0].number, 1733300000.25);
  ASSERT_EQ(v->array[1].array.size(), 1u);
  const MsgpackValue& e = v->array[1].array[0];
  ASSERT_EQ(e.array.size(), 7u);
  EXPECT_EQ(e.array[0].str, "BlockStored");
  ASSERT_EQ(e.array[1].array.size(), 1u);                   // block_hashes
  EXPECT_EQ(e.array[1].array[0].u64(), 0xfedcba9876543210u);
  EXPECT_EQ(e.array[2].u64(), 0x0123456789abcdefu);         // parent_block_hash
  ASSERT_EQ(e.array[3].array.size(), 16u);                  // token_ids
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(e.array[3].array[i].u64(), 1000 + i);
  EXPECT_EQ(e.array[4].u64(), 16u);                         // block_size
  EXPECT_EQ(e.array[5].u64(), 3u);                          // lora_id
  EXPECT_EQ(e.array[6].str, "GPU");                         // medium
}

TEST(KvEventCodec, AnEmptyMediumIsNil) {
  KvEventBatch batch;
  batch.events = {KvBlockRemoved{.block_hash = 300}};
  std::string out;
  encode_kv_event_batch(batch, "", out);
  const std::optional<MsgpackValue> v = read_msgpack(out);
  ASSERT_TRUE(v.has_value());
  const MsgpackValue& e = v->array[1].array[0];
  ASSERT_EQ(e.array.size(), 3u);
  EXPECT_EQ(e.array[0].str, "BlockRemoved");
  EXPECT_EQ(e.array[1].array[0].u64(), 300u);
  EXPECT_TRUE(e.array[2].is_nil());
}

TEST(KvEventCodec, ManyEventsUseALongerArrayHeader) {
  KvEventBatch batch;
  for (uint64_t i = 0; i < 70000; ++i) batch.events.push_back(KvBlockRemoved{.block_hash = i});
  std::string out;
  encode_kv_event_batch(batch, "CPU", out);
  const std::optional<MsgpackValue> v = read_msgpack(out);
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ(v->array[1].array.size(), 70000u);
  EXPECT_EQ(v->array[1].array[69999].array[1].array[0].u64(), 69999u);
}

}  // namespace
}  // namespace met
