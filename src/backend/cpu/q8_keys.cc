// Q8_0 keys, tokens in lanes. Tested by tests/backend/kv_cache_test.cc.
#include "backend/cpu/q8_keys.h"

#include <cstring>

#include "core/check.h"
#include "tensor/half.h"
#include "tensor/row_kernels.h"

namespace met::cpu {
namespace {

constexpr int32_t kMaxQueryBlocks = kMaxQ8QueryDims / kQk;

int64_t scale_at(int32_t head_dim, int32_t block, int32_t slot) {
  return q8_key_scales_offset(head_dim) + 2 * (int64_t{block} * kBlockTokens + slot);
}

}  // namespace

void put_q8_key(const BlockQ8_0* row, int32_t head_dim, int32_t slot, uint8_t* head) {
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    std::memcpy(head + scale_at(head_dim, b, slot), &row[b].d, sizeof(row[b].d));
    for (int32_t i = 0; i < kQk; ++i) {
      const int32_t dim = b * kQk + i;
      head[int64_t{dim / 4} * kQ8KeyQuadBytes + 4 * slot + dim % 4] = static_cast<uint8_t>(row[b].qs[i] + 128);
    }
  }
}

void get_q8_key(const uint8_t* head, int32_t head_dim, int32_t slot, BlockQ8_0* row) {
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    std::memcpy(&row[b].d, head + scale_at(head_dim, b, slot), sizeof(row[b].d));
    for (int32_t i = 0; i < kQk; ++i) {
      const int32_t dim = b * kQk + i;
      row[b].qs[i] = static_cast<int8_t>(head[int64_t{dim / 4} * kQ8KeyQuadBytes + 4 * slot + dim % 4] - 128);
    }
  }
}

void copy_q8_key_slots(const uint8_t* from, int32_t head_dim, int32_t num_slots, uint8_t* to) {
  for (int32_t j = 0; j < head_dim / 4; ++j) {
    std::memcpy(to + int64_t{j} * kQ8KeyQuadBytes, from + int64_t{j} * kQ8KeyQuadBytes,
                static_cast<size_t>(4 * num_slots));
  }
  const int64_t scales = q8_key_scales_offset(head_dim);
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    const int64_t at = scales + 2 * int64_t{b} * kBlockTokens;
    std::memcpy(to + at, from + at, static_cast<size_t>(2 * num_slots));
  }
}

QueryQ8 quantize_query_q8(const float* q, int32_t head_dim, uint8_t* out) {
  const int32_t blocks = head_dim / kQk;
  MET_CHECK(head_dim % kQk == 0 && blocks <= kMaxQueryBlocks, "a Q8_0 query of {} dims", head_dim);
  // The selected tier's quantizer: the reference's bytes (tensor/row_kernels.h).
  static const ::met::ref::QuantizeRowFn quantize = selected_row_kernels(GgmlType::kQ8_0).quantize;
  BlockQ8_0 row[kMaxQueryBlocks];
  quantize(q, reinterpret_cast<uint8_t*>(row), head_dim);
  auto* codes = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + head_dim);
  auto* bias = reinterpret_cast<int32_t*>(out + head_dim + 4 * blocks);  // as q8_query_at reads them
  for (int32_t b = 0; b < blocks; ++b) {
    int32_t sum = 0;
    for (int32_t i = 0; i < kQk; ++i) {
      codes[b * kQk + i] = row[b].qs[i];
      sum += row[b].qs[i];
    }
    d[b] = fp16_to_f32(row[b].d);
    bias[b] = 128 * sum;
  }
  return q8_query_at(out, head_dim);
}

}  // namespace met::cpu
