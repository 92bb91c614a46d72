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

// The products' output columns end to end, as one run of rows for
// ThreadCtx::claim_range: ranges of whole claim tiles of the kernels
// (cpu::matmul_claim_tile against `rows` activation rows), cut at each
// product's end, so every range streams whole packed groups of one product.
class OutputRows {
 public:
  OutputRows(std::span<const Product> products, int64_t rows) : products_(products) {
    for (const Product& p : products) {
      total_ += p.w->rows;
      tile_ = std::max(tile_, cpu::matmul_claim_tile(*p.w, rows));
    }
  }
  int64_t total() const { return total_; }
  int64_t tile() const { return tile_; }
  // Where row `at` of the run lies: its product and that product's first row in the run.
  struct Place {
    size_t product;
    int64_t first;
  };
  Place place(int64_t at) const {
    Place p{0, 0};
    while (at >= p.first + products_[p.product].w->rows) p.first += products_[p.product++].w->rows;
    return p;
  }

 private:
  std::span<const Product> products_;
  int64_t total_ = 0;
  int64_t tile_ = 16;
};

}  // namespace

void linear(cpu::ThreadCtx& ctx, const float* x, int64_t rows, int64_t cols, std::span<const Product> products,
            ActivationBuffers& act, const LoraCall& lora, const cpu::CallSite& where) {
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
  const OutputRows out(products, rows);
  const auto product_end = [&](int64_t at) {
    const OutputRows::Place p = out.place(at);
    return p.first + products[p.product].w->rows;
  };
  for (;;) {
    const auto [begin, end] = ctx.claim_range(out.total(), out.tile(), product_end);
    if (begin == end) break;
    const auto [j, first] = out.place(begin);
    const cpu::WeightMatrix& w = *products[j].w;
    cpu::matmul(w, act.slot(slot_of[j]), rows, products[j].y, w.rows, begin - first, end - first);
    if (adapted && products[j].lora != LoraTarget::kNone) {
      lora_expand_columns(products[j], j, lora, begin - first, end - first);
    }
  }
  ctx.barrier(where);
}

}  // namespace met
