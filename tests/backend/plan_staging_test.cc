// Tests for backend/cuda/plan_staging.h: a packed plan reads back section by
// section as the plan it came from (tokens and feeds, positions, row -> seq,
// block tables, outputs and bans); attention partitions are aligned to
// absolute positions, clipped to each seq's reads and its window, and the
// same for a row whatever shares its step; a plan past the capacity is
// refused naming the limit; packing allocates nothing; the ring refuses a
// slot whose step is still in flight.
#include "backend/cuda/plan_staging.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>

#include "testing/allocation_counter.h"

namespace met::cuda {
namespace {

DeviceInfo device_info() {
  DeviceInfo info;
  info.kv_block_tokens = 16;
  info.max_context = 4096;
  info.max_rows = 512;
  info.max_seqs = 8;
  info.max_outputs = 8;
  return info;
}

// A prefill chunk of 3 rows after 14 cached tokens, a decode row at 600
// fed from the previous step's output 1, and a decode row at 255.
StepPlan make_plan() {
  StepPlan plan;
  plan.inputs = {FeedToken{5}, FeedToken{6}, FeedToken{7}, FeedFromRow{1}, FeedToken{9}};
  plan.positions = {14, 15, 16, 600, 255};
  plan.seqs.push_back(StepSeq{0, 3, 14, {BlockId(3), BlockId(9)}, std::nullopt});
  std::vector<BlockId> long_table;
  for (int32_t b = 0; b < 38; ++b) long_table.emplace_back(100 + b);
  plan.seqs.push_back(StepSeq{3, 1, 600, long_table, std::nullopt});
  std::vector<BlockId> table16;
  for (int32_t b = 0; b < 16; ++b) table16.emplace_back(200 + b);
  plan.seqs.push_back(StepSeq{4, 1, 255, table16, std::nullopt});
  plan.banned = {2, 0, 1};
  plan.outputs = {{2, OutputKind::kLogits, 0, 1}, {3, OutputKind::kArgmax, 1, 2}, {4, OutputKind::kArgmax, 3, 0}};
  return plan;
}

struct Packed {
  StagingCapacity capacity = staging_capacity(device_info(), 4);
  StagingLayout layout = staging_layout(capacity);
  std::vector<uint8_t> bytes = std::vector<uint8_t>(static_cast<size_t>(layout.total_bytes), 0xAB);

  PackedHeader pack(const StepPlan& plan, int32_t window = 0) {
    Result<PackedHeader> header = pack_plan(plan, capacity, layout, window, bytes);
    EXPECT_TRUE(header.ok()) << header.status().to_string();
    return header.ok() ? *header : PackedHeader{};
  }
  template <typename T>
  const T* at(int64_t offset) const {
    return staged<T>(bytes, offset);
  }
};

TEST(PlanStaging, SectionsAreAlignedInOrderAndInsideTheBuffer) {
  const StagingLayout l = staging_layout(staging_capacity(device_info(), 4));
  const int64_t offsets[] = {l.header, l.tokens,  l.feeds,      l.positions, l.row_seq,
                             l.seqs,   l.outputs, l.banned,     l.partitions, l.tables};
  for (size_t i = 0; i < std::size(offsets); ++i) {
    EXPECT_EQ(offsets[i] % kStagingAlign, 0) << "section " << i;
    if (i > 0) {
      EXPECT_GT(offsets[i], offsets[i - 1]) << "section " << i;
    }
  }
  EXPECT_GE(l.total_bytes, l.tables + 8 * (4096 / 16) * 4);  // every seq a whole-context table
}

TEST(PlanStaging, APackedPlanReadsBackAsThePlan) {
  Packed p;
  const StepPlan plan = make_plan();
  const PackedHeader h = p.pack(plan);
  EXPECT_EQ(h.num_rows, 5);
  EXPECT_EQ(h.num_seqs, 3);
  EXPECT_EQ(h.num_outputs, 3);
  EXPECT_EQ(h.num_banned, 3);
  EXPECT_EQ(h.num_fed_rows, 1);
  EXPECT_EQ(h.num_table_entries, 2 + 38 + 16);
  EXPECT_EQ(h.max_seq_len, 601);
  EXPECT_EQ(std::memcmp(p.at<PackedHeader>(p.layout.header), &h, sizeof(h)), 0);

  const int32_t* tokens = p.at<int32_t>(p.layout.tokens);
  const int32_t* feeds = p.at<int32_t>(p.layout.feeds);
  const int32_t* positions = p.at<int32_t>(p.layout.positions);
  const int32_t* row_seq = p.at<int32_t>(p.layout.row_seq);
  const std::vector<int32_t> want_tokens = {5, 6, 7, 0, 9}, want_feeds = {kNoFeed, kNoFeed, kNoFeed, 1, kNoFeed};
  const std::vector<int32_t> want_row_seq = {0, 0, 0, 1, 2};
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(tokens[r], want_tokens[static_cast<size_t>(r)]) << r;
    EXPECT_EQ(feeds[r], want_feeds[static_cast<size_t>(r)]) << r;
    EXPECT_EQ(positions[r], plan.positions[static_cast<size_t>(r)]) << r;
    EXPECT_EQ(row_seq[r], want_row_seq[static_cast<size_t>(r)]) << r;
  }
  const PackedSeq* seqs = p.at<PackedSeq>(p.layout.seqs);
  const int32_t* tables = p.at<int32_t>(p.layout.tables);
  for (size_t s = 0; s < plan.seqs.size(); ++s) {
    EXPECT_EQ(seqs[s].row_begin, plan.seqs[s].row_begin);
    EXPECT_EQ(seqs[s].num_rows, plan.seqs[s].num_rows);
    EXPECT_EQ(seqs[s].num_cached, plan.seqs[s].num_cached);
    ASSERT_EQ(seqs[s].num_blocks, std::ssize(plan.seqs[s].block_table));
    for (int32_t b = 0; b < seqs[s].num_blocks; ++b) {
      EXPECT_EQ(tables[seqs[s].table_begin + b], plan.seqs[s].block_table[static_cast<size_t>(b)].value());
    }
  }
  const PackedOutput* outputs = p.at<PackedOutput>(p.layout.outputs);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    EXPECT_EQ(outputs[o].row, plan.outputs[o].row);
    EXPECT_EQ(outputs[o].kind, static_cast<int32_t>(plan.outputs[o].kind));
    EXPECT_EQ(outputs[o].banned_begin, plan.outputs[o].banned_begin);
    EXPECT_EQ(outputs[o].num_banned, plan.outputs[o].num_banned);
  }
  const int32_t* banned = p.at<int32_t>(p.layout.banned);
  EXPECT_EQ(std::vector<int32_t>(banned, banned + 3), plan.banned);
  EXPECT_EQ(packed_bytes(p.layout, h), p.layout.tables + 4 * h.num_table_entries);
}

TEST(PlanStaging, PlansWithoutBansOrWithoutRowsPack) {
  Packed p;
  StepPlan plan = make_plan();
  plan.banned.clear();
  for (OutputRow& o : plan.outputs) o.num_banned = 0, o.banned_begin = 0;
  EXPECT_EQ(p.pack(plan).num_banned, 0);
  const PackedHeader empty = p.pack(StepPlan{});
  EXPECT_EQ(empty.num_rows, 0);
  EXPECT_EQ(empty.num_seqs, 0);
  EXPECT_EQ(packed_bytes(p.layout, empty), p.layout.tables);
}

TEST(PlanStaging, PartitionsAreAbsoluteAndClippedToWhatTheSeqReads) {
  Packed p;
  const PackedHeader h = p.pack(make_plan());
  const PackedSeq* seqs = p.at<PackedSeq>(p.layout.seqs);
  const PackedPartition* parts = p.at<PackedPartition>(p.layout.partitions);
  // Seq 0 reads [0, 17): partition 0 only. Seq 1 reads [0, 601): 0, 1, 2.
  // Seq 2 reads [0, 256): partition 0, wholly.
  ASSERT_EQ(h.num_partitions, 1 + 3 + 1);
  EXPECT_EQ(seqs[0].num_partitions, 1);
  EXPECT_EQ(seqs[1].partition_begin, 1);
  EXPECT_EQ(seqs[1].num_partitions, 3);
  const std::vector<std::array<int32_t, 4>> want = {
      {0, 0, 0, 17}, {1, 0, 0, 256}, {1, 1, 256, 512}, {1, 2, 512, 601}, {2, 0, 0, 256}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(parts[i].seq, want[i][0]) << i;
    EXPECT_EQ(parts[i].index, want[i][1]) << i;
    EXPECT_EQ(parts[i].token_begin, want[i][2]) << i;
    EXPECT_EQ(parts[i].token_end, want[i][3]) << i;
  }
}

TEST(PlanStaging, AWindowStartsTheFirstPartitionWhereTheFirstRowReads) {
  StepSeq seq{0, 2, 1000, {}, std::nullopt};  // rows at 1000, 1001
  const PartitionSpan span = seq_partitions(seq, 300);  // the first row reads from 701
  EXPECT_EQ(span.first, 2);
  EXPECT_EQ(span.count, 2);  // partitions 2 (512..767) and 3 (768..1001)
  Packed p;
  StepPlan plan;
  plan.inputs = {FeedToken{1}, FeedToken{2}};
  plan.positions = {1000, 1001};
  plan.seqs.push_back(seq);
  p.pack(plan, 300);
  const PackedPartition* parts = p.at<PackedPartition>(p.layout.partitions);
  EXPECT_EQ(parts[0].token_begin, 701);
  EXPECT_EQ(parts[0].token_end, 768);
  EXPECT_EQ(parts[1].token_begin, 768);
  EXPECT_EQ(parts[1].token_end, 1002);
  EXPECT_EQ(p.at<PackedSeq>(p.layout.seqs)[0].first_partition, 2);
}

TEST(PlanStaging, ARowsPartitionsDoNotDependOnItsStepmates) {
  // The decode row at 600 alone and beside the others: the same partitions.
  StepPlan alone;
  alone.inputs = {FeedToken{3}};
  alone.positions = {600};
  alone.seqs.push_back(make_plan().seqs[1]);
  alone.seqs[0].row_begin = 0;
  Packed a, b;
  a.pack(alone);
  b.pack(make_plan());
  const PackedSeq sa = a.at<PackedSeq>(a.layout.seqs)[0], sb = b.at<PackedSeq>(b.layout.seqs)[1];
  ASSERT_EQ(sa.num_partitions, sb.num_partitions);
  for (int32_t i = 0; i < sa.num_partitions; ++i) {
    const PackedPartition pa = a.at<PackedPartition>(a.layout.partitions)[sa.partition_begin + i];
    const PackedPartition pb = b.at<PackedPartition>(b.layout.partitions)[sb.partition_begin + i];
    EXPECT_EQ(pa.index, pb.index);
    EXPECT_EQ(pa.token_begin, pb.token_begin);
    EXPECT_EQ(pa.token_end, pb.token_end);
  }
}

TEST(PlanStaging, APlanPastTheCapacityIsRefusedNamingTheLimit) {
  Packed p;
  StepPlan plan = make_plan();
  plan.banned.resize(33);  // 8 outputs x 4 banned each at most
  Result<PackedHeader> r = pack_plan(plan, p.capacity, p.layout, 0, p.bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("33 banned ids past the device's 32"), std::string::npos)
      << r.status().to_string();

  StagingCapacity small = p.capacity;
  small.max_partitions = 4;
  r = pack_plan(make_plan(), small, p.layout, 0, p.bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("5 attention partitions past the device's 4"), std::string::npos);

  std::vector<uint8_t> short_buffer(64);
  r = pack_plan(make_plan(), p.capacity, p.layout, 0, short_buffer);
  EXPECT_FALSE(r.ok());
}

TEST(PlanStaging, PackingAllocatesNothing) {
  Packed p;
  const StepPlan plan = make_plan();
  p.pack(plan);  // warm
  const int64_t before = testing::num_allocations();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pack_plan(plan, p.capacity, p.layout, 0, p.bytes).ok());
  EXPECT_EQ(testing::num_allocations() - before, 0);
}

TEST(PlanStaging, TheRingRefusesASlotWhoseStepIsInFlight) {
  int allocated = 0, freed = 0;
  const StagingLayout layout = staging_layout(staging_capacity(device_info(), 4));
  {
    Result<StagingRing> ring = StagingRing::create(
        layout, 2,
        [&](size_t bytes) -> Result<void*> {
          ++allocated;
          return std::malloc(bytes);
        },
        [&](void* ptr) {
          ++freed;
          std::free(ptr);
        });
    ASSERT_TRUE(ring.ok());
    EXPECT_EQ(allocated, 2);
    Result<std::span<uint8_t>> s0 = ring->acquire(Ticket(0));
    Result<std::span<uint8_t>> s1 = ring->acquire(Ticket(1));
    ASSERT_TRUE(s0.ok() && s1.ok());
    EXPECT_NE(s0->data(), s1->data());
    EXPECT_EQ(std::ssize(*s0), layout.total_bytes);
    Result<std::span<uint8_t>> s2 = ring->acquire(Ticket(2));
    ASSERT_FALSE(s2.ok());
    EXPECT_NE(s2.status().message().find("still held by step 0"), std::string::npos) << s2.status().to_string();
    ring->release(Ticket(0));
    s2 = ring->acquire(Ticket(2));
    ASSERT_TRUE(s2.ok());
    EXPECT_EQ(s2->data(), s0->data());
  }
  EXPECT_EQ(freed, 2);
}

}  // namespace
}  // namespace met::cuda
