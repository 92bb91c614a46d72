// Shared-input weight products. Tested through tests/model/cpu_device_test.cc.
#include "model/linear.h"

#include <algorithm>

#include "backend/cpu/kernels/lora.h"
#include "core/check.h"

namespace met {

size_t max_activation_row_bytes(int64_t cols) {
  size_t bytes = 0;
  const int64_t padded = (cols + 255) / 256 * 256;
  for (GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0,
                     GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kMXFP4,
                     GgmlType::kIQ4_NL, GgmlType::kIQ4_XS, GgmlType::kQ5_0, GgmlType::kQ4_1, GgmlType::kQ5_1}) {
    bytes = std::max(bytes, cpu::activation_row_bytes(t, padded));
  }
  return bytes;
}

ActivationBuffers::ActivationBuffers(int64_t max_rows, int64_t max_cols)
    : slots_(kMaxSlots, std::vector<uint8_t>(max_activation_row_bytes(max_cols) * static_cast<size_t>(max_rows))) {}

namespace {

// x·Aᵀ of this thread's share of (group, product, block of 4 of A's rows):
// each item streams its 4 rows of A once for all of the group's rows.
void lora_shrink_share(cpu::ThreadCtx& ctx, const float* x, int64_t cols, std::span<const Product> products,
                       const LoraCall& lora) {
  const auto num_products = static_cast<int64_t>(products.size());
  const int64_t blocks = (lora.t_stride + 3) / 4;  // of the largest rank
  const auto num_segments = static_cast<int64_t>(lora.rows->segments.size());
  const auto [i0, i1] = ctx.split(num_segments * num_products * blocks);
  for (int64_t i = i0; i < i1; ++i) {
    const LoraRows::Segment& s = lora.rows->segments[static_cast<size_t>(i / (num_products * blocks))];
    const auto j = static_cast<size_t>(i / blocks % num_products);
    const auto k0 = static_cast<int32_t>(i % blocks * 4);
    const LoraPair* p = s.adapter->find(lora.layer, products[j].lora);
    if (p == nullptr || k0 >= p->rank) continue;
    const void* a = p->f16 ? static_cast<const void*>(p->a16.data() + int64_t{k0} * cols)
                           : static_cast<const void*>(p->a.data() + int64_t{k0} * cols);
    cpu::lora_shrink(a, p->f16, std::min(4, p->rank - k0), cols, x, cols,
                     lora.rows->indices(s), lora.t + static_cast<int64_t>(j) * lora.t_product_stride + k0,
                     lora.t_stride);
  }
}

// Adds B's part to columns [n0, n1) of product j, group by group.
void lora_expand_columns(const Product& p, size_t j, const LoraCall& lora, int64_t n0, int64_t n1) {
  for (const LoraRows::Segment& s : lora.rows->segments) {
    const LoraPair* pair = s.adapter->find(lora.layer, p.lora);
    if (pair == nullptr) continue;
    cpu::lora_expand(pair->bp_data(), pair->f16, pair->rank, p.w->rows, pair->scale,
                     lora.t + static_cast<int64_t>(j) * lora.t_product_stride, lora.t_stride,
                     lora.rows->indices(s), p.y, p.w->rows, n0, n1);
  }
}

// The products' output columns cut into chunks, product by product, for
// threads to claim (ThreadCtx::next_claim): about 8 per thread over all the
// products, in multiples of the kernels' column tile, so a thread the host
// slows takes fewer while each chunk still streams whole packed groups.
class OutputChunks {
 public:
  struct Chunk {
    size_t product;
    int64_t n0, n1;
  };

  OutputChunks(std::span<const Product> products, int nth) : products_(products) {
    int64_t total = 0;
    int64_t tile = 16;
    for (const Product& p : products) {
      total += p.w->rows;
      tile = std::max(tile, cpu::matmul_column_tile(p.w->type));
    }
    const int64_t wanted = total / (8 * static_cast<int64_t>(nth));
    chunk_rows_ = std::clamp<int64_t>((wanted + tile - 1) / tile * tile, tile, 32 * tile);
    for (const Product& p : products) count_ += (p.w->rows + chunk_rows_ - 1) / chunk_rows_;
  }
  int64_t count() const { return count_; }
  // Chunk c (< count()).
  Chunk at(int64_t c) const {
    size_t j = 0;
    for (;; ++j) {
      const int64_t here = (products_[j].w->rows + chunk_rows_ - 1) / chunk_rows_;
      if (c < here) break;
      c -= here;
    }
    const int64_t n0 = c * chunk_rows_;
    return {j, n0, std::min(products_[j].w->rows, n0 + chunk_rows_)};
  }

 private:
  std::span<const Product> products_;
  int64_t chunk_rows_ = 16;
  int64_t count_ = 0;
};

}  // namespace

void linear(cpu::ThreadCtx& ctx, const float* x, int64_t rows, int64_t cols, std::span<const Product> products,
            ActivationBuffers& act, const LoraCall& lora) {
  GgmlType slot_type[ActivationBuffers::kMaxSlots];
  int slot_of[8];
  MET_DCHECK(products.size() <= 8);
  int num_slots = 0;
  for (size_t j = 0; j < products.size(); ++j) {
    const GgmlType t = products[j].w->type;
    int s = 0;
    while (s < num_slots && slot_type[s] != t) ++s;
    if (s == num_slots) {
      MET_CHECK(num_slots < ActivationBuffers::kMaxSlots, "more weight types than activation slots");
      slot_type[num_slots++] = t;
    }
    slot_of[j] = s;
  }
  const auto [r0, r1] = ctx.split(rows);
  for (int s = 0; s < num_slots; ++s) cpu::prepare_activations(slot_type[s], x, cols, cols, r0, r1, act.slot(s));
  if (ctx.ith() == 0) ctx.reset_claims();  // claimed after the barrier below
  const bool adapted = lora.rows != nullptr;
  if (adapted) {
    MET_DCHECK(products.size() <= static_cast<size_t>(LoraStep::kMaxProducts) && lora.rows->num_indices == rows);
    lora_shrink_share(ctx, x, cols, products, lora);
  }
  ctx.barrier();
  const OutputChunks chunks(products, ctx.nth());
  for (int64_t c = ctx.first_claim(); c < chunks.count(); c = ctx.next_claim()) {
    const auto [j, n0, n1] = chunks.at(c);
    const cpu::WeightMatrix& w = *products[j].w;
    cpu::matmul(w, act.slot(slot_of[j]), rows, products[j].y, w.rows, n0, n1);
    if (adapted && products[j].lora != LoraTarget::kNone) lora_expand_columns(products[j], j, lora, n0, n1);
  }
  ctx.barrier();
}

}  // namespace met
