// The host-side steps of a mixture-of-experts FFN, around the matmuls:
//   route_top_k      softmax over one token's router logits, the k largest
//                    probabilities (largest first, the lower expert on ties),
//                    renormalised to sum 1 when asked (the sum clamped below
//                    at 2^-14, as llama.cpp's build_moe_ffn does);
//   route_top_k_softmax  gpt-oss's order: the k largest logits, then a
//                    softmax over those k (llama.cpp's SOFTMAX_WEIGHT);
//   group_by_expert  a stable counting sort of the (token, choice) pairs by
//                    expert, so each expert runs one matmul over the
//                    contiguous group of its tokens, in token order;
//   gather_rows      copies rows into group order;
//   combine_experts  a token's output: its k expert outputs scaled by their
//                    weights and summed in choice order.
// All write into caller-provided buffers: nothing allocates. Scalar by
// design (a few flops per token beside the expert matmuls); each is checked
// against a brute-force definition.
// Threading: pure functions over the ranges given; any thread.
// Tested by tests/backend/moe_routing_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace met::cpu {

// llama.cpp's LLAMA_MAX_EXPERTS.
inline constexpr int32_t kMaxExperts = 512;

// REQUIRES: 1 <= k <= num_experts <= kMaxExperts.
void route_top_k(const float* logits, int32_t num_experts, int32_t k, bool normalize, int32_t* ids,
                 float* weights);

// REQUIRES: 1 <= k <= num_experts <= kMaxExperts.
void route_top_k_softmax(const float* logits, int32_t num_experts, int32_t k, int32_t* ids, float* weights);

// ids: rows × k expert ids. Writes offsets (num_experts + 1: expert e's
// group is slots [offsets[e], offsets[e + 1])), slot_row (rows × k: the
// token row of each slot) and pair_slot (rows × k: the slot of choice j of
// row r at r * k + j). Within a group, slots are in (row, choice) order.
void group_by_expert(const int32_t* ids, int64_t rows, int32_t k, int32_t num_experts, int32_t* offsets,
                     int32_t* slot_row, int32_t* pair_slot);

// dst row s = src row slot_row[s], for s in [s_begin, s_end); rows of
// row_bytes bytes.
void gather_rows(const uint8_t* src, size_t row_bytes, const int32_t* slot_row, int64_t s_begin,
                 int64_t s_end, uint8_t* dst);

// out[i] = sum over j < k of weights[j] * expert_out[slots[j] * width + i],
// accumulated in j order (slots, weights: one token's k choices).
void combine_experts(const float* expert_out, int64_t width, const int32_t* slots, const float* weights,
                     int32_t k, float* out);

}  // namespace met::cpu
