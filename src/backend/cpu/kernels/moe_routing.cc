// Mixture-of-experts routing, grouping and combining.
// Tested by tests/backend/moe_routing_test.cc.
#include "backend/cpu/kernels/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/check.h"

namespace met::cpu {
namespace {

// F16's smallest normal: llama.cpp clamps the weight sum to it.
constexpr float kMinWeightSum = 6.103515625e-5f;

// The k largest of values (largest first, the lower index on ties) into
// ids and weights.
void take_top_k(const float* values, int32_t n, int32_t k, int32_t* ids, float* weights) {
  bool taken[kMaxExperts] = {};
  for (int32_t j = 0; j < k; ++j) {
    int32_t best = -1;
    for (int32_t e = 0; e < n; ++e) {
      if (!taken[e] && (best < 0 || values[e] > values[best])) best = e;
    }
    taken[best] = true;
    ids[j] = best;
    weights[j] = values[best];
  }
}

}  // namespace

void route_top_k(const float* logits, int32_t num_experts, int32_t k, bool normalize, int32_t* ids,
                 float* weights) {
  MET_DCHECK(1 <= k && k <= num_experts && num_experts <= kMaxExperts);
  float probs[kMaxExperts];
  float mx = logits[0];
  for (int32_t e = 1; e < num_experts; ++e) mx = std::max(mx, logits[e]);
  float sum = 0.0f;
  for (int32_t e = 0; e < num_experts; ++e) sum += (probs[e] = std::exp(logits[e] - mx));
  const float inv = 1.0f / sum;
  for (int32_t e = 0; e < num_experts; ++e) probs[e] *= inv;
  take_top_k(probs, num_experts, k, ids, weights);
  if (!normalize) return;
  float wsum = 0.0f;
  for (int32_t j = 0; j < k; ++j) wsum += weights[j];
  const float winv = 1.0f / std::max(wsum, kMinWeightSum);
  for (int32_t j = 0; j < k; ++j) weights[j] *= winv;
}

void route_top_k_softmax(const float* logits, int32_t num_experts, int32_t k, int32_t* ids, float* weights) {
  MET_DCHECK(1 <= k && k <= num_experts && num_experts <= kMaxExperts);
  take_top_k(logits, num_experts, k, ids, weights);
  const float mx = weights[0];  // the largest, taken first
  float sum = 0.0f;
  for (int32_t j = 0; j < k; ++j) sum += (weights[j] = std::exp(weights[j] - mx));
  const float inv = 1.0f / sum;
  for (int32_t j = 0; j < k; ++j) weights[j] *= inv;
}

void group_by_expert(const int32_t* ids, int64_t rows, int32_t k, int32_t num_experts, int32_t* offsets,
                     int32_t* slot_row, int32_t* pair_slot) {
  std::fill(offsets, offsets + num_experts + 1, 0);
  const int64_t pairs = rows * k;
  for (int64_t p = 0; p < pairs; ++p) {
    MET_DCHECK(0 <= ids[p] && ids[p] < num_experts);
    ++offsets[ids[p] + 1];
  }
  for (int32_t e = 0; e < num_experts; ++e) offsets[e + 1] += offsets[e];
  // offsets[e] now runs as expert e's next free slot; restored below.
  for (int64_t p = 0; p < pairs; ++p) {
    const int32_t slot = offsets[ids[p]]++;
    slot_row[slot] = static_cast<int32_t>(p / k);
    pair_slot[p] = slot;
  }
  for (int32_t e = num_experts; e > 0; --e) offsets[e] = offsets[e - 1];
  offsets[0] = 0;
}

void gather_rows(const uint8_t* src, size_t row_bytes, const int32_t* slot_row, int64_t s_begin,
                 int64_t s_end, uint8_t* dst) {
  for (int64_t s = s_begin; s < s_end; ++s) {
    std::memcpy(dst + static_cast<size_t>(s) * row_bytes, src + static_cast<size_t>(slot_row[s]) * row_bytes,
                row_bytes);
  }
}

void combine_experts(const float* expert_out, int64_t width, const int32_t* slots, const float* weights,
                     int32_t k, float* out) {
  const float* first = expert_out + static_cast<int64_t>(slots[0]) * width;
  for (int64_t i = 0; i < width; ++i) out[i] = weights[0] * first[i];
  for (int32_t j = 1; j < k; ++j) {
    const float* row = expert_out + static_cast<int64_t>(slots[j]) * width;
    const float w = weights[j];
    for (int64_t i = 0; i < width; ++i) out[i] += w * row[i];
  }
}

}  // namespace met::cpu
