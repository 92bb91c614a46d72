// Plan staging (see plan_staging.h).
#include "backend/cuda/plan_staging.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/check.h"

namespace met::cuda {
namespace {

int64_t align_up(int64_t n) { return (n + kStagingAlign - 1) / kStagingAlign * kStagingAlign; }

int32_t ceil_div(int64_t a, int64_t b) { return static_cast<int32_t>((a + b - 1) / b); }

template <typename T>
T* section(std::span<uint8_t> buffer, int64_t offset) {
  return reinterpret_cast<T*>(buffer.data() + offset);
}

Status check_fits(const StepPlan& plan, const StagingCapacity& cap, int64_t table_entries,
                  int64_t partitions) {
  const auto over = [](const char* what, int64_t n, int32_t most) {
    return out_of_range("step staging: {} {} past the device's {}", n, what, most);
  };
  if (plan.num_rows() > cap.max_rows) return over("rows", plan.num_rows(), cap.max_rows);
  if (std::ssize(plan.seqs) > cap.max_seqs) return over("seqs", std::ssize(plan.seqs), cap.max_seqs);
  if (std::ssize(plan.outputs) > cap.max_outputs) {
    return over("outputs", std::ssize(plan.outputs), cap.max_outputs);
  }
  if (std::ssize(plan.banned) > cap.max_banned) return over("banned ids", std::ssize(plan.banned), cap.max_banned);
  if (table_entries > cap.max_table_entries) return over("block-table entries", table_entries, cap.max_table_entries);
  if (partitions > cap.max_partitions) return over("attention partitions", partitions, cap.max_partitions);
  return ok_status();
}

void pack_rows(const StepPlan& plan, const StagingLayout& layout, std::span<uint8_t> buffer, PackedHeader& header) {
  auto* tokens = section<int32_t>(buffer, layout.tokens);
  auto* feeds = section<int32_t>(buffer, layout.feeds);
  for (int32_t r = 0; r < plan.num_rows(); ++r) {
    const RowInput& input = plan.inputs[static_cast<size_t>(r)];
    if (const auto* fed = std::get_if<FeedFromRow>(&input)) {
      tokens[r] = 0;
      feeds[r] = fed->output_index;
      ++header.num_fed_rows;
    } else {
      tokens[r] = std::get<FeedToken>(input).id;
      feeds[r] = kNoFeed;
    }
  }
  if (!plan.positions.empty()) {  // data() of an empty vector may be null, which memcpy may not take
    std::memcpy(buffer.data() + layout.positions, plan.positions.data(), plan.positions.size() * sizeof(int32_t));
  }
  auto* row_seq = section<int32_t>(buffer, layout.row_seq);
  for (size_t s = 0; s < plan.seqs.size(); ++s) {
    const StepSeq& seq = plan.seqs[s];
    std::fill_n(row_seq + seq.row_begin, seq.num_rows, static_cast<int32_t>(s));
  }
}

void pack_seqs(const StepPlan& plan, const StagingLayout& layout, int32_t window, std::span<uint8_t> buffer,
               PackedHeader& header) {
  auto* seqs = section<PackedSeq>(buffer, layout.seqs);
  auto* tables = section<int32_t>(buffer, layout.tables);
  auto* partitions = section<PackedPartition>(buffer, layout.partitions);
  for (size_t s = 0; s < plan.seqs.size(); ++s) {
    const StepSeq& seq = plan.seqs[s];
    const PartitionSpan span = seq_partitions(seq, window);
    const int32_t len = seq.num_cached + seq.num_rows;
    const int32_t first_read = window > 0 ? std::max(0, seq.num_cached - window + 1) : 0;
    seqs[s] = PackedSeq{seq.row_begin,    seq.num_rows,           seq.num_cached,
                        header.num_table_entries, static_cast<int32_t>(seq.block_table.size()),
                        header.num_partitions, span.count, span.first};
    for (const BlockId block : seq.block_table) tables[header.num_table_entries++] = block.value();
    for (int32_t p = span.first; p < span.first + span.count; ++p) {
      partitions[header.num_partitions++] = PackedPartition{
          static_cast<int32_t>(s), p, std::max(p * kAttnPartitionTokens, first_read),
          std::min((p + 1) * kAttnPartitionTokens, len)};
    }
    header.max_seq_len = std::max(header.max_seq_len, len);
  }
  header.num_seqs = static_cast<int32_t>(plan.seqs.size());
}

void pack_outputs(const StepPlan& plan, const StagingLayout& layout, std::span<uint8_t> buffer,
                  PackedHeader& header) {
  auto* outputs = section<PackedOutput>(buffer, layout.outputs);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const OutputRow& out = plan.outputs[o];
    outputs[o] = PackedOutput{out.row, static_cast<int32_t>(out.kind), out.banned_begin, out.num_banned};
  }
  if (!plan.banned.empty()) {
    std::memcpy(buffer.data() + layout.banned, plan.banned.data(), plan.banned.size() * sizeof(TokenId));
  }
  header.num_outputs = static_cast<int32_t>(plan.outputs.size());
  header.num_banned = static_cast<int32_t>(plan.banned.size());
}

}  // namespace

StagingCapacity staging_capacity(const DeviceInfo& info, int32_t banned_per_output) {
  const int32_t context = std::max(info.max_context, 1);
  const int32_t block_tokens = std::max(info.kv_block_tokens, 1);
  return StagingCapacity{
      .max_rows = info.max_rows,
      .max_seqs = info.max_seqs,
      .max_outputs = info.max_outputs,
      .max_banned = info.max_outputs * banned_per_output,
      .max_table_entries = info.max_seqs * ceil_div(context, block_tokens),
      // A seq's rows read at most ceil(context / P) + 1 aligned partitions
      // (seqs may share cached blocks, so the pool's size bounds nothing).
      .max_partitions = info.max_seqs * (ceil_div(context, kAttnPartitionTokens) + 1),
  };
}

StagingLayout staging_layout(const StagingCapacity& cap) {
  StagingLayout layout;
  int64_t at = 0;
  const auto place = [&at](int64_t& offset, int64_t bytes) {
    offset = at;
    at = align_up(at + bytes);
  };
  const int64_t row_ints = int64_t{cap.max_rows} * static_cast<int64_t>(sizeof(int32_t));
  place(layout.header, sizeof(PackedHeader));
  place(layout.tokens, row_ints);
  place(layout.feeds, row_ints);
  place(layout.positions, row_ints);
  place(layout.row_seq, row_ints);
  place(layout.seqs, int64_t{cap.max_seqs} * static_cast<int64_t>(sizeof(PackedSeq)));
  place(layout.outputs, int64_t{cap.max_outputs} * static_cast<int64_t>(sizeof(PackedOutput)));
  place(layout.banned, int64_t{cap.max_banned} * static_cast<int64_t>(sizeof(int32_t)));
  place(layout.partitions, int64_t{cap.max_partitions} * static_cast<int64_t>(sizeof(PackedPartition)));
  place(layout.tables, int64_t{cap.max_table_entries} * static_cast<int64_t>(sizeof(int32_t)));
  layout.total_bytes = at;
  return layout;
}

PartitionSpan seq_partitions(const StepSeq& seq, int32_t window) {
  if (seq.num_rows <= 0) return {};
  const int32_t first_read = window > 0 ? std::max(0, seq.num_cached - window + 1) : 0;
  const int32_t last = seq.num_cached + seq.num_rows - 1;
  const int32_t first = first_read / kAttnPartitionTokens;
  return {first, last / kAttnPartitionTokens - first + 1};
}

int64_t packed_bytes(const StagingLayout& layout, const PackedHeader& header) {
  return layout.tables + int64_t{header.num_table_entries} * static_cast<int64_t>(sizeof(int32_t));
}

Result<PackedHeader> pack_plan(const StepPlan& plan, const StagingCapacity& capacity,
                               const StagingLayout& layout, int32_t window, std::span<uint8_t> buffer) {
  if (std::ssize(buffer) < layout.total_bytes) {
    return invalid_argument("step staging: a buffer of {} bytes, the layout needs {}", buffer.size(),
                            layout.total_bytes);
  }
  int64_t table_entries = 0, partitions = 0;
  for (const StepSeq& seq : plan.seqs) {
    table_entries += std::ssize(seq.block_table);
    partitions += seq_partitions(seq, window).count;
  }
  MET_RETURN_IF_ERROR(check_fits(plan, capacity, table_entries, partitions));
  PackedHeader header;
  header.num_rows = plan.num_rows();
  pack_rows(plan, layout, buffer, header);
  pack_seqs(plan, layout, window, buffer, header);
  pack_outputs(plan, layout, buffer, header);
  std::memcpy(buffer.data() + layout.header, &header, sizeof(header));
  return header;
}

Result<StagingRing> StagingRing::create(const StagingLayout& layout, int32_t depth, Allocate allocate,
                                        Deallocate deallocate) {
  if (depth <= 0) return invalid_argument("step staging: a ring of {} slots", depth);
  StagingRing ring(layout.total_bytes, std::move(deallocate));
  ring.slots_.resize(static_cast<size_t>(depth));
  for (Slot& slot : ring.slots_) {
    MET_ASSIGN_OR_RETURN(void* bytes, allocate(static_cast<size_t>(layout.total_bytes)));
    slot.bytes = static_cast<uint8_t*>(bytes);
  }
  return ring;
}

StagingRing::StagingRing(StagingRing&& other) noexcept
    : slot_bytes_(other.slot_bytes_), deallocate_(std::move(other.deallocate_)), slots_(std::move(other.slots_)) {
  other.slots_.clear();
}

StagingRing::~StagingRing() {
  for (const Slot& slot : slots_) {
    if (slot.bytes != nullptr) deallocate_(slot.bytes);
  }
}

Result<std::span<uint8_t>> StagingRing::acquire(Ticket ticket) {
  Slot& slot = slots_[ticket.value() % slots_.size()];
  if (slot.in_flight) {
    return internal_error("step staging: step {} needs slot {}, still held by step {} ({} steps in flight at most)",
                               ticket.value(), ticket.value() % slots_.size(), slot.ticket, slots_.size());
  }
  slot.in_flight = true;
  slot.ticket = ticket.value();
  return std::span<uint8_t>(slot.bytes, static_cast<size_t>(slot_bytes_));
}

void StagingRing::release(Ticket ticket) {
  Slot& slot = slots_[ticket.value() % slots_.size()];
  MET_DCHECK(slot.in_flight && slot.ticket == ticket.value(), "release of a slot not acquired");
  slot.in_flight = false;
}

}  // namespace met::cuda
