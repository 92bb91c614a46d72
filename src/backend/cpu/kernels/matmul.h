// Weight × activation products, the bulk of a forward pass:
//   y[i][n] = sum_k W[n][k] * x[i][k]   for activation rows i < m
// with W a GGUF weight matrix (row n = output n, `cols` inputs, any of F32,
// F16, BF16, Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, MXFP4, IQ4_NL, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K, IQ4_XS) read in place from the mmap, or from a
// copy packed once at load into a kernel's layout (packed_weights.h), and x
// float activations. Integer paths first quantize the activations to 8 bits
// per block (Q8_0 blocks for the 32-element types, Q8_K for the K-quants and IQ4_XS), as
// llama.cpp does; float paths convert them to the form the kernel wants. prepare_activations does that
// once per step, split by rows;
// matmul then splits the output columns n between threads, so every weight
// row is read once per step for the whole batch (decode is memory-bound).
// Kernels are chosen once from selected_isa() (AMX, AVX-512 VNNI/BF16, AVX2),
// each checked against the scalar reference in kernels/reference/.
// Threading: pure functions over disjoint ranges; any thread.
// Tested by tests/backend/matmul_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met::cpu {

// How a weight matrix's bytes are ordered.
enum class WeightLayout : uint8_t {
  kRows,      // GGUF order: row n at data + n * row_bytes
  kQ8_0x16,   // Q8_0 packed 16 rows at a time (packed_weights.h)
  kMxfp4x16,  // MXFP4 packed 16 rows at a time (packed_weights.h)
  kIq4NlX16,  // IQ4_NL packed 16 rows at a time (packed_weights.h)
  kF16x16,    // F16 packed 16 rows at a time (packed_weights.h)
  kBf16x16,   // BF16 packed 16 rows at a time (packed_weights.h)
  kQ4_Kx16,   // Q4_K packed 16 rows at a time (packed_weights.h)
  kQ6_Kx16,   // Q6_K packed 16 rows at a time (packed_weights.h)
  kQ5_Kx16,   // Q5_K packed 16 rows at a time (packed_weights.h)
  kQ4_0x16,   // Q4_0 packed 16 rows at a time (packed_weights.h)
  kIq4XsX16,  // IQ4_XS packed 16 rows at a time (packed_weights.h)
  kQ3_Kx16,   // Q3_K packed 16 rows at a time (packed_weights.h)
  kQ5_0x16,   // Q5_0 packed 16 rows at a time (packed_weights.h)
  kQ4_1x16,   // Q4_1 packed 16 rows at a time (packed_weights.h)
  kQ5_1x16,   // Q5_1 packed 16 rows at a time (packed_weights.h)
  kQ2_Kx16,   // Q2_K packed 16 rows at a time (packed_weights.h)
};

struct WeightMatrix {
  GgmlType type = GgmlType::kF32;
  const uint8_t* data = nullptr;  // rows × row_bytes in `layout`
  int64_t rows = 0;               // outputs (n)
  int64_t cols = 0;               // inputs (k)
  size_t row_bytes = 0;           // of one GGUF row, whatever the layout
  WeightLayout layout = WeightLayout::kRows;
};

// Whether matmul supports weights of `type` with `cols` inputs (cols must be
// a multiple of the type's block).
bool matmul_supports(GgmlType type, int64_t cols);

// Bytes of one prepared activation row for weights of `weight_type`.
size_t activation_row_bytes(GgmlType weight_type, int64_t cols);

// Prepares activation rows [row_begin, row_end) of x (row i at x + i*x_stride,
// `cols` floats) into `out` (row i at out + i*activation_row_bytes).
void prepare_activations(GgmlType weight_type, const float* x, int64_t x_stride, int64_t cols,
                         int64_t row_begin, int64_t row_end, uint8_t* out);

// y[i*y_stride + n] for i < m and n in [n_begin, n_end), from prepared rows.
void matmul(const WeightMatrix& w, const uint8_t* act, int64_t m, float* y, int64_t y_stride,
            int64_t n_begin, int64_t n_end);

// The granularity threads should split n by (a kernel's column tile).
int64_t matmul_column_tile(GgmlType type);

// The granularity of guided claims (ThreadCtx::claim_range) of w's outputs
// against m activation rows: the column tile (two, for the F16 and BF16
// layouts, whose kernels walk groups in pairs); or, at m <= 4, where a call
// streams its weights from memory at a rate set by how long its stream runs
// (batch-1 decode, a MoE expert's few rows), enough whole tiles that a claim
// reads at least 64 KiB of weights.
int64_t matmul_claim_tile(const WeightMatrix& w, int64_t m);

}  // namespace met::cpu
