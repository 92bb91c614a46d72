// Scalar reference of paged attention: the plain definition, for tests and
// nothing else. For each row and query head, every score q . k * scale of
// the positions the row sees, a two-pass softmax and the weighted sum of V,
// all in double; K and V come out of the cache through KvCache::load (the
// scalar reference dequantizers), so the kernels and this read the same
// values and differ only in arithmetic. Over Q8_0 keys the kernels attend
// with the query quantized to Q8_0 (q8_keys.h), and so does this.
// Threading: pure function of its inputs, any thread. Allocates.
// Tested by tests/backend/attention_test.cc (and checked by hand there on a
// one-position case).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kv_cache.h"

namespace met::cpu::ref {

// The query, head_dim floats, as the kernels attend with it over `cache`:
// q itself, or through Q8_0 and back for Q8_0 keys.
std::vector<float> attended_query(const KvCache& cache, const float* q);

// Same contract as cpu::paged_attention, for seqs given directly.
void paged_attention(const KvCache& cache, int32_t layer, std::span<const AttnSeq> seqs,
                     const float* q, int64_t q_stride, int32_t num_heads, float scale, float* out,
                     int64_t out_stride);

}  // namespace met::cpu::ref
