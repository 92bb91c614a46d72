// Shared-input weight products. Tested through tests/model/cpu_device_test.cc.
#include "model/linear.h"

#include <algorithm>

#include "core/check.h"

namespace met {

size_t max_activation_row_bytes(int64_t cols) {
  size_t bytes = 0;
  const int64_t padded = (cols + 255) / 256 * 256;
  for (GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0,
                     GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kMXFP4}) {
    bytes = std::max(bytes, cpu::activation_row_bytes(t, padded));
  }
  return bytes;
}

ActivationBuffers::ActivationBuffers(int64_t max_rows, int64_t max_cols)
    : slots_(kMaxSlots, std::vector<uint8_t>(max_activation_row_bytes(max_cols) * static_cast<size_t>(max_rows))) {}

void linear(cpu::ThreadCtx& ctx, const float* x, int64_t rows, int64_t cols, std::span<const Product> products,
            ActivationBuffers& act) {
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
  ctx.barrier();
  for (size_t j = 0; j < products.size(); ++j) {
    const cpu::WeightMatrix& w = *products[j].w;
    const auto [n0, n1] = ctx.split(w.rows, cpu::matmul_column_tile(w.type));
    if (n0 < n1) cpu::matmul(w, act.slot(slot_of[j]), rows, products[j].y, w.rows, n0, n1);
  }
  ctx.barrier();
}

}  // namespace met
