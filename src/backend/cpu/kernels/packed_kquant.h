// Packing and unpacking of the K-quant layouts WeightLayout::kQ4_Kx16,
// kQ5_Kx16, kQ6_Kx16, kIq4XsX16 and kQ3_Kx16 (packed_weights.h describes them; kquant_x16_layout.h holds the
// offsets): plain scalar copies, run once per matrix at load.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/kernels/matmul.h"

namespace met::cpu {

// Bytes of one 16-row group of Q4_Kx16 / Q5_Kx16 / Q6_Kx16 / Iq4XsX16 / Q3_Kx16 with `cols` inputs (a
// multiple of 256).
size_t q4_kx16_group_bytes(int64_t cols);
size_t q5_kx16_group_bytes(int64_t cols);
size_t q6_kx16_group_bytes(int64_t cols);
size_t iq4_xsx16_group_bytes(int64_t cols);
size_t q3_kx16_group_bytes(int64_t cols);
size_t q2_kx16_group_bytes(int64_t cols);

// Packs group g of row-major Q4_K (Q5_K, Q6_K, IQ4_XS, Q3_K) `w` into `group` (zeroed
// beforehand: padding rows stay zero).
void pack_q4_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group);
void pack_q5_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group);
void pack_q6_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group);
void pack_iq4_xsx16_group(const WeightMatrix& w, int64_t g, uint8_t* group);
void pack_q3_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group);
void pack_q2_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group);

// Writes row n of packed `w` as its GGUF row bytes to `out`.
void unpack_q4_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out);
void unpack_q5_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out);
void unpack_q6_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out);
void unpack_iq4_xsx16_row(const WeightMatrix& w, int64_t n, uint8_t* out);
void unpack_q3_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out);
void unpack_q2_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out);

}  // namespace met::cpu
