// Q8_0 values, token pairs in lanes. Tested by tests/backend/kv_cache_test.cc.
#include "backend/cpu/q8_values.h"

#include <cmath>
#include <cstring>

namespace met::cpu {
namespace {

int64_t value_scale_at(int32_t head_dim, int32_t block, int32_t slot) {
  return q8_value_scales_offset(head_dim) + 2 * (int64_t{block} * kBlockTokens + slot);
}

// Byte of code `i` (0..31) of block `block` of slot `slot`.
int64_t value_code_at(int32_t block, int32_t slot, int32_t i) {
  return int64_t{block} * kQ8ValueBlockBytes + (slot / 2) * kQ8ValueLineBytes + 2 * i + slot % 2;
}

}  // namespace

void put_q8_value(const BlockQ8_0* row, int32_t head_dim, int32_t slot, uint8_t* head) {
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    std::memcpy(head + value_scale_at(head_dim, b, slot), &row[b].d, sizeof(row[b].d));
    for (int32_t i = 0; i < kQk; ++i) head[value_code_at(b, slot, i)] = static_cast<uint8_t>(row[b].qs[i]);
  }
}

void get_q8_value(const uint8_t* head, int32_t head_dim, int32_t slot, BlockQ8_0* row) {
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    std::memcpy(&row[b].d, head + value_scale_at(head_dim, b, slot), sizeof(row[b].d));
    for (int32_t i = 0; i < kQk; ++i) row[b].qs[i] = static_cast<int8_t>(head[value_code_at(b, slot, i)]);
  }
}

// Whole slot pairs are copied as runs; an odd last slot byte by byte, so
// slot num_slots of `to` (the pair's other half) keeps its bytes.
void copy_q8_value_slots(const uint8_t* from, int32_t head_dim, int32_t num_slots, uint8_t* to) {
  const int32_t pairs = num_slots / 2;
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    const int64_t at = int64_t{b} * kQ8ValueBlockBytes;
    std::memcpy(to + at, from + at, static_cast<size_t>(pairs) * kQ8ValueLineBytes);
    if (num_slots % 2 == 0) continue;
    for (int32_t i = 0; i < kQk; ++i) to[value_code_at(b, num_slots - 1, i)] = from[value_code_at(b, num_slots - 1, i)];
  }
  const int64_t scales = q8_value_scales_offset(head_dim);
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    const int64_t at = scales + 2 * int64_t{b} * kBlockTokens;
    std::memcpy(to + at, from + at, static_cast<size_t>(2 * num_slots));
  }
}

int16_t q8_value_weight_code(float x) {
  if (!(std::fabs(x) < kQ8ValueWeightMax + 0.5f)) return 0;  // the largest weight's x may pass 32767 by an ulp
  return static_cast<int16_t>(std::nearbyint(x));
}

}  // namespace met::cpu
