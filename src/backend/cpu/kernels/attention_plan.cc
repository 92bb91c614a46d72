// AttentionScratch: allocation for the largest step, and plan(), which cuts
// a step into work units (sequence x kv head x tile of rows), decides which
// units to split along their chunks, and orders the items largest first so
// the threads' dynamic pick balances. Also the chunk-kernel table per tier.
// The split decision changes only who computes a chunk, never a row's bits
// (see attention.h), so it is free to depend on the batch and thread count.
// Threading: see attention.h. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include <algorithm>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kernels/attention_state.h"
#include "backend/cpu/q8_keys.h"
#include "core/check.h"

namespace met::cpu {
namespace attn {

ChunkKernel chunk_kernel(Isa isa, GgmlType dtype) {
  struct Tier {
    ChunkKernel f32, f16, bf16, q8_0;
  };
  static constexpr Tier kScalar{scalar::chunk_f32, scalar::chunk_f16, scalar::chunk_bf16,
                                scalar::chunk_q8_0};
  static constexpr Tier kAvx2{avx2::chunk_f32, avx2::chunk_f16, avx2::chunk_bf16, avx2::chunk_q8_0};
  static constexpr Tier kAvx512{avx512::chunk_f32, avx512::chunk_f16, avx512::chunk_bf16,
                                avx512::chunk_q8_0};
  const Tier* tier = &kScalar;
  switch (isa) {
    case Isa::kScalar: tier = &kScalar; break;
    case Isa::kAvx2:
    case Isa::kAvxVnni: tier = &kAvx2; break;
    case Isa::kAvx512:
    case Isa::kAmx: tier = &kAvx512; break;
  }
  if (dtype == GgmlType::kF32) return tier->f32;
  if (dtype == GgmlType::kF16) return tier->f16;
  if (dtype == GgmlType::kBF16) return tier->bf16;
  if (dtype == GgmlType::kQ8_0) return tier->q8_0;
  return nullptr;
}

}  // namespace attn

namespace {

constexpr int32_t kTileQueries = 16;    // queries that share one pass over K and V
constexpr int64_t kItemsPerThread = 4;  // kAuto splits units above total / (4 nth)

Status check_seqs(std::span<const AttnSeq> seqs, int32_t max_rows) {
  int64_t end = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const AttnSeq& seq = seqs[i];
    if (seq.num_rows < 1 || seq.num_cached < 0) {
      return invalid_argument("attention: seq {} has {} rows after {} cached", i, seq.num_rows,
                              seq.num_cached);
    }
    if (seq.row_begin < end) {
      return invalid_argument(
          "attention: seq {} starts at row {}, before the previous seq's end {}", i, seq.row_begin,
          end);
    }
    end = int64_t{seq.row_begin} + seq.num_rows;
    if (end > max_rows) {
      return out_of_range("attention: seq {} ends at row {}, past the {} rows planned for", i, end,
                          max_rows);
    }
    const int64_t positions = int64_t{seq.num_cached} + seq.num_rows;
    if (static_cast<int64_t>(seq.block_table.size()) * kBlockTokens < positions) {
      return invalid_argument("attention: seq {} has {} blocks for {} positions", i,
                              seq.block_table.size(), positions);
    }
  }
  return ok_status();
}

void build_units(AttentionState& s) {
  for (size_t si = 0; si < s.seqs.size(); ++si) {
    const AttnSeq& seq = s.seqs[si];
    for (int32_t r0 = 0; r0 < seq.num_rows; r0 += s.rows_per_tile) {
      const int32_t n = std::min(s.rows_per_tile, seq.num_rows - r0);
      const int64_t first_len = row_read_end(seq, r0);
      const int64_t last_len = row_read_end(seq, r0 + n - 1);
      const int64_t cost =
          seq.causal ? s.group * (n * first_len + int64_t{n} * (n - 1) / 2) : s.group * n * first_len;
      const auto chunks =
          static_cast<int32_t>((last_len + kAttnChunkTokens - 1) / kAttnChunkTokens);
      for (int32_t kv = 0; kv < s.limits.num_kv_heads; ++kv) {
        s.units.push_back(AttnUnit{.seq = static_cast<int32_t>(si),
                                   .kv_head = kv,
                                   .row_begin = r0,
                                   .num_rows = n,
                                   .num_chunks = chunks,
                                   .cost = cost});
      }
    }
  }
}

// Splits the costliest units first while slots last.
void choose_splits(AttentionState& s, int32_t num_threads) {
  const SplitK policy = s.limits.split;
  if (policy == SplitK::kNever || (policy == SplitK::kAuto && num_threads <= 1)) return;
  int64_t total = 0;
  for (const AttnUnit& u : s.units) total += u.cost;
  const int64_t threshold = policy == SplitK::kAlways ? 0 : total / (num_threads * kItemsPerThread);
  for (size_t i = 0; i < s.units.size(); ++i) s.order.push_back(static_cast<int32_t>(i));
  std::sort(s.order.begin(), s.order.end(), [&](int32_t a, int32_t b) {
    return s.units[a].cost != s.units[b].cost ? s.units[a].cost > s.units[b].cost : a < b;
  });
  int64_t used = 0;
  for (int32_t index : s.order) {
    AttnUnit& u = s.units[static_cast<size_t>(index)];
    const int64_t need = int64_t{u.num_chunks} * s.queries(u);
    if (u.num_chunks < 2 || u.cost <= threshold || used + need > s.max_slots) continue;
    u.split = true;
    u.slot_base = used;
    used += need;
  }
}

int64_t item_cost(const AttnUnit& u) { return u.split ? u.cost / u.num_chunks : u.cost; }

// Each unit's group_cost: the largest item of the units of its sequence and
// kv head (a sequence's units are contiguous, kv head by kv head per tile).
void set_group_costs(AttentionState& s) {
  const auto kv_heads = static_cast<size_t>(s.limits.num_kv_heads);
  for (size_t first = 0; first < s.units.size();) {
    size_t end = first;
    while (end < s.units.size() && s.units[end].seq == s.units[first].seq) ++end;
    for (size_t kv = 0; kv < kv_heads; ++kv) {
      int64_t most = 0;
      for (size_t j = first + kv; j < end; j += kv_heads) most = std::max(most, item_cost(s.units[j]));
      for (size_t j = first + kv; j < end; j += kv_heads) s.units[j].group_cost = most;
    }
    first = end;
  }
}

// Items in groups of one sequence and kv head, the groups largest item
// first and each group's items largest first: the threads' dynamic pick
// balances as it would over items largest first, and the row tiles of a
// prefill, which read the same K and V, run one after another while those
// stay in cache (interleaving the kv heads streamed every chunk back from
// L3: 4-5% slower, met_attention_bench PrefillAttentionInline).
void build_items(AttentionState& s) {
  set_group_costs(s);
  for (size_t i = 0; i < s.units.size(); ++i) {
    const AttnUnit& u = s.units[i];
    const auto unit = static_cast<int32_t>(i);
    if (!u.split) {
      s.items.push_back(AttnItem{.unit = unit, .chunk = 0, .whole = true, .cost = u.cost});
      continue;
    }
    for (int32_t c = 0; c < u.num_chunks; ++c) {
      s.items.push_back(AttnItem{.unit = unit, .chunk = c, .whole = false, .cost = item_cost(u)});
    }
    for (int32_t q = 0; q < s.queries(u); ++q)
      s.merges.push_back(AttnMerge{.unit = unit, .query = q});
  }
  // A total order (std::sort allocates nothing, unlike std::stable_sort).
  std::sort(s.items.begin(), s.items.end(), [&s](const AttnItem& a, const AttnItem& b) {
    const AttnUnit& ua = s.units[static_cast<size_t>(a.unit)];
    const AttnUnit& ub = s.units[static_cast<size_t>(b.unit)];
    if (ua.group_cost != ub.group_cost) return ua.group_cost > ub.group_cost;
    if (ua.seq != ub.seq) return ua.seq < ub.seq;
    if (ua.kv_head != ub.kv_head) return ua.kv_head < ub.kv_head;
    if (a.cost != b.cost) return a.cost > b.cost;
    return a.unit != b.unit ? a.unit < b.unit : a.chunk < b.chunk;
  });
}

}  // namespace

AttentionScratch::AttentionScratch(const AttentionLimits& limits, Isa isa)
    : s_(std::make_unique<AttentionState>()) {
  MET_CHECK(limits.num_heads > 0 && limits.num_kv_heads > 0 &&
                limits.num_heads % limits.num_kv_heads == 0,
            "attention: {} heads over {} kv heads", limits.num_heads, limits.num_kv_heads);
  MET_CHECK(limits.head_dim > 0 && limits.max_rows > 0 && limits.num_threads > 0,
            "attention: head_dim {}, max_rows {}, threads {}", limits.head_dim, limits.max_rows,
            limits.num_threads);
  MET_CHECK(isa_supported(detect_cpu_features(), isa), "attention: this CPU cannot run {}",
            isa_name(isa));
  AttentionState& s = *s_;
  s.limits = limits;
  s.isa = isa;
  s.group = limits.num_heads / limits.num_kv_heads;
  s.rows_per_tile = std::max(1, kTileQueries / s.group);
  s.tile_queries = s.rows_per_tile * s.group;
  s.record_floats = attn::kRecordHeader + (limits.head_dim + 15) / 16 * 16;
  s.max_slots = limits.max_split_slots > 0
                    ? limits.max_split_slots
                    : int64_t{limits.num_threads} * std::max(limits.num_heads, 16) * 32;
  const int64_t max_units = int64_t{limits.max_rows} * limits.num_kv_heads;
  s.seqs.reserve(static_cast<size_t>(limits.max_rows));
  s.units.reserve(static_cast<size_t>(max_units));
  s.order.reserve(static_cast<size_t>(max_units));
  s.items.reserve(static_cast<size_t>(max_units + s.max_slots));
  s.merges.reserve(static_cast<size_t>(s.max_slots));
  s.slots = aligned_floats(s.max_slots * s.record_floats, /*zero=*/false);
  s.threads.resize(static_cast<size_t>(limits.num_threads));
  const auto tile = static_cast<size_t>(s.tile_queries);
  for (AttnThreadBuffers& t : s.threads) {
    t.scores = aligned_floats(int64_t{s.tile_queries} * attn::kChunkTokens, /*zero=*/true);
    t.total = aligned_floats(int64_t{s.tile_queries} * s.record_floats, /*zero=*/true);
    t.partial = aligned_floats(int64_t{s.tile_queries} * s.record_floats, /*zero=*/true);
    t.query_codes = aligned_floats(int64_t{s.tile_queries} * q8_query_bytes(limits.head_dim) / 4, /*zero=*/true);
    t.q.resize(tile);
    t.begin.resize(tile);
    t.len.resize(tile);
    t.start.resize(tile);
    t.limit.resize(tile);
    t.records.resize(tile);
  }
}

AttentionScratch::AttentionScratch() = default;
AttentionScratch::~AttentionScratch() = default;
AttentionScratch::AttentionScratch(AttentionScratch&&) noexcept = default;
AttentionScratch& AttentionScratch::operator=(AttentionScratch&&) noexcept = default;

const AttentionLimits& AttentionScratch::limits() const { return s_->limits; }
Isa AttentionScratch::isa() const { return s_->isa; }
int32_t AttentionScratch::num_items() const { return static_cast<int32_t>(s_->items.size()); }
int32_t AttentionScratch::num_split_units() const {
  return static_cast<int32_t>(
      std::count_if(s_->units.begin(), s_->units.end(), [](const AttnUnit& u) { return u.split; }));
}

Status AttentionScratch::plan(std::span<const AttnSeq> seqs) {
  MET_CHECK(s_ != nullptr, "attention: an empty AttentionScratch");
  AttentionState& s = *s_;
  s.seqs.clear();
  s.units.clear();
  s.order.clear();
  s.items.clear();
  s.merges.clear();
  MET_RETURN_IF_ERROR(check_seqs(seqs, s.limits.max_rows));
  s.seqs.assign(seqs.begin(), seqs.end());  // at most max_rows: each has a row of its own
  build_units(s);
  choose_splits(s, s.limits.num_threads);
  build_items(s);
  return ok_status();
}

void AttentionScratch::plan_for(std::span<const AttnSeq> seqs) {
  AttentionState& s = *s_;
  const auto same_shape = [](const AttnSeq& a, const AttnSeq& b) {
    return a.row_begin == b.row_begin && a.num_rows == b.num_rows && a.num_cached == b.num_cached &&
           a.causal == b.causal;
  };
  if (seqs.size() == s.seqs.size() &&
      std::equal(seqs.begin(), seqs.end(), s.seqs.begin(), same_shape)) {
    // Units depend on the shapes only; block tables are read through the spans.
    Status tables = check_seqs(seqs, s.limits.max_rows);
    MET_CHECK(tables.ok(), "{}", tables.to_string());
    std::copy(seqs.begin(), seqs.end(), s.seqs.begin());
    return;
  }
  const Status planned = plan(seqs);
  MET_CHECK(planned.ok(), "{}", planned.to_string());
}

}  // namespace met::cpu
