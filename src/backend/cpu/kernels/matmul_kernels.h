// The matmul kernels behind matmul.h, per weight type and ISA tier, and the
// prepared-activation formats they share with the scalar reference:
//   F32, F16 weights   -> activations stay f32 (cols floats)
//   BF16 weights       -> activations rounded to bf16 (as llama.cpp does)
//   Q8_0, Q4_0, MXFP4 -> ActQ8_0 row: Q8_0 blocks, then per block 8 int16
//                         sums of its codes 4l .. 4l+3 (l < 8): a 4-byte int8
//                         dot lane's share, so kernels that feed offset
//                         (unsigned) weight codes to vpdpbusd/vpmaddubsw can
//                         take the offset back out of each lane exactly;
//                         then per block an ActQ8_0Tail (its whole-block
//                         offset and its scale as a float, for kernels whose
//                         int32 lanes are output rows, not parts of a block)
//   Q2_K..Q6_K, IQ4_XS weights -> Q8_K blocks (codes, float scale, sums per 16)
// Every tier's kernel consumes the same prepared bytes, so integer paths
// differ from the reference only in the order floats are summed.
// Declarations only: no intrinsics and no inline code, so the per-tier
// translation units (built with wider -march flags) may include it without
// emitting a copy of anything baseline code also uses.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace met::cpu {

// One call's work: y[i * y_stride + n] for i < m and n in [n_begin, n_end).
struct MatmulTask {
  // Row n at weights + n * weight_row_bytes; for a packed layout, group g
  // at weights + g * weight_row_bytes.
  const uint8_t* weights = nullptr;
  size_t weight_row_bytes = 0;
  int64_t cols = 0;
  const uint8_t* act = nullptr;  // prepared row i at act + i * act_row_bytes
  size_t act_row_bytes = 0;
  int64_t m = 0;
  float* y = nullptr;
  int64_t y_stride = 0;
  int64_t n_begin = 0;
  int64_t n_end = 0;
};

using MatmulKernelFn = void (*)(const MatmulTask& task);

// The third section of an ActQ8_0 row, one per block, at byte 50 * blocks
// (only 2-byte aligned for odd block counts: read it with memcpy).
struct ActQ8_0Tail {
  // -128 * (sum of the block's 32 codes): starts a vpdpbusd accumulator over
  // weight codes stored offset by +128 so that it ends at the signed dot.
  int32_t offset_bias;
  float d;  // the block's fp16 scale, widened
};

// How far ahead of the block being read a kernel prefetches each weight
// row. A tile reads several rows side by side, which the hardware
// prefetchers follow poorly: at m = 1 software prefetch doubles the DRAM
// rate of the quantized kernels (Q4_K 5.4 -> 12 GB/s per core here). The
// distance covers a DRAM latency (~100 ns) at a decode block's pace (~7 ns
// per Q4_K super-block and thread): 2 KiB ahead instead of 768 bytes gave,
// alternating the two builds on the medium files, batch-1 decode Q4_K_M 95
// -> 106 tok/s (medians of 6), Q5_K_M 81 -> 89, IQ4_XS 93 -> 108, Q8_0 83
// -> 94, with prefill unchanged (324 -> 334).
inline constexpr int kPrefetchBytes = 2048;
// The 16-row float layouts (F16x16, Bf16x16) are the exception: a group is
// one sequential run of 64-byte lines, which the hardware prefetchers
// follow, and at 1 or 2 activation rows software prefetch slowed the stream
// (2 threads, 4096 x 1024 copies from DRAM, the two alternated every pass
// in one process, Zen 5; GB/s with / without, means of 30 passes: AVX-512
// F16 m = 1 43.5 / 50.4, BF16 50.0 / 59.0; m = 2 F16 35.7 / 39.1, BF16
// 40.8 / 49.5; AVX2 m = 1 F16 44.1 / 50.3, BF16 42.6 / 48.1). At 3 rows it
// was mixed (F16 35.3 / 32.5, BF16 39.9 / 42.4) and from 4 on it pays
// (AVX-512 F16 40.2 / 31.9, BF16 52.3 / 40.3), so their first row tile
// prefetches only when the task has at least this many rows.
inline constexpr int64_t kFloatPrefetchMinRows = 3;
// Prepares one activation row of `cols` floats into `out`.
using PrepareRowFn = void (*)(const float* x, int64_t cols, uint8_t* out);

struct MatmulKernels {
  PrepareRowFn prepare = nullptr;
  MatmulKernelFn matmul = nullptr;         // weights in WeightLayout::kRows
  MatmulKernelFn matmul_packed = nullptr;  // in the type's packed layout, if it has one
};

// A tile kernel computes y for activation rows [i0, i0 + R) and weight rows
// [n0, n0 + C), R and C fixed per function.
using TileFn = void (*)(const MatmulTask& task, int64_t i0, int64_t n0);

// Tile kernels of every shape up to max_rows x max_cols: fns[(R - 1) *
// max_cols + (C - 1)] computes an R x C tile.
struct TileTable {
  int max_rows = 0;
  int max_cols = 0;
  const TileFn* fns = nullptr;
};

// Covers the task with tiles, weight-column tiles outermost (each weight tile
// is loaded once from memory and reused from cache by every row tile). Built
// for baseline x86-64-v3 in matmul.cc; the per-tier kernels call it.
void for_each_tile(const MatmulTask& task, const TileTable& table);

// Per-tier kernels, one translation unit per family and tier.
namespace avx2 {
// matmul_float_avx2.cc
void matmul_f32(const MatmulTask& task);
void matmul_f16(const MatmulTask& task);
void matmul_bf16(const MatmulTask& task);
// matmul_quant_avx2.cc
void matmul_q8_0(const MatmulTask& task);
void matmul_q4_0(const MatmulTask& task);
void matmul_mxfp4(const MatmulTask& task);
void matmul_iq4_nl(const MatmulTask& task);
void matmul_q5_0(const MatmulTask& task);
void matmul_q4_1(const MatmulTask& task);
void matmul_q5_1(const MatmulTask& task);
// matmul_x16_avx2.cc: weights in WeightLayout::kQ8_0x16, kMxfp4x16, kIq4NlX16, kQ4_0x16,
// kQ5_0x16, kQ4_1x16, kQ5_1x16 (task.weights is the packed matrix; weight_row_bytes its group stride)
void matmul_q8_0x16(const MatmulTask& task);
void matmul_mxfp4x16(const MatmulTask& task);
void matmul_iq4_nlx16(const MatmulTask& task);
void matmul_q4_0x16(const MatmulTask& task);
void matmul_q5_0x16(const MatmulTask& task);
void matmul_q4_1x16(const MatmulTask& task);
void matmul_q5_1x16(const MatmulTask& task);
// matmul_fx16_avx2.cc: weights in WeightLayout::kF16x16, kBf16x16
void matmul_f16x16(const MatmulTask& task);
void matmul_bf16x16(const MatmulTask& task);
// matmul_kx16_avx2.cc: weights in WeightLayout::kQ4_Kx16, kQ5_Kx16, kQ6_Kx16, kIq4XsX16,
// kQ3_Kx16, kQ2_Kx16
void matmul_q4_kx16(const MatmulTask& task);
void matmul_q5_kx16(const MatmulTask& task);
void matmul_q6_kx16(const MatmulTask& task);
void matmul_iq4_xsx16(const MatmulTask& task);
void matmul_q3_kx16(const MatmulTask& task);
void matmul_q2_kx16(const MatmulTask& task);
// matmul_kquant_avx2.cc
void matmul_q4_k(const MatmulTask& task);
void matmul_q5_k(const MatmulTask& task);
void matmul_iq4_xs(const MatmulTask& task);
void prepare_q8_k(const float* x, int64_t cols, uint8_t* out);
// matmul_kquant16_avx2.cc
void matmul_q2_k(const MatmulTask& task);
void matmul_q3_k(const MatmulTask& task);
void matmul_q6_k(const MatmulTask& task);
}  // namespace avx2

// The AVX-VNNI tier (AVX2 + vpdpbusd on ymm): its own kernels for the packed
// integer layouts most files use; the rest are AVX2's.
namespace avxvnni {
// matmul_x16_avxvnni.cc: weights in WeightLayout::kQ8_0x16, kMxfp4x16, kIq4NlX16, kQ4_0x16,
// kQ5_0x16, kQ4_1x16, kQ5_1x16
void matmul_q8_0x16(const MatmulTask& task);
void matmul_mxfp4x16(const MatmulTask& task);
void matmul_iq4_nlx16(const MatmulTask& task);
void matmul_q4_0x16(const MatmulTask& task);
void matmul_q5_0x16(const MatmulTask& task);
void matmul_q4_1x16(const MatmulTask& task);
void matmul_q5_1x16(const MatmulTask& task);
// matmul_kx16_avxvnni.cc: weights in WeightLayout::kQ4_Kx16, kQ5_Kx16, kQ6_Kx16, kIq4XsX16
void matmul_q4_kx16(const MatmulTask& task);
void matmul_q5_kx16(const MatmulTask& task);
void matmul_q6_kx16(const MatmulTask& task);
void matmul_iq4_xsx16(const MatmulTask& task);
}  // namespace avxvnni

namespace avx512 {
// matmul_float_avx512.cc
void matmul_f32(const MatmulTask& task);
void matmul_f16(const MatmulTask& task);
void matmul_bf16(const MatmulTask& task);
// matmul_quant_avx512.cc
void matmul_q8_0(const MatmulTask& task);
void matmul_q4_0(const MatmulTask& task);
void matmul_mxfp4(const MatmulTask& task);
void matmul_iq4_nl(const MatmulTask& task);
void matmul_q5_0(const MatmulTask& task);
void matmul_q4_1(const MatmulTask& task);
void matmul_q5_1(const MatmulTask& task);
// matmul_x16_avx512.cc: weights in WeightLayout::kQ8_0x16, kMxfp4x16, kIq4NlX16,
// kQ4_0x16, kQ5_0x16, kQ4_1x16, kQ5_1x16 (task.weights is the packed matrix; weight_row_bytes its group
// stride)
void matmul_q8_0x16(const MatmulTask& task);
void matmul_mxfp4x16(const MatmulTask& task);
void matmul_iq4_nlx16(const MatmulTask& task);
void matmul_q4_0x16(const MatmulTask& task);
void matmul_q5_0x16(const MatmulTask& task);
void matmul_q4_1x16(const MatmulTask& task);
void matmul_q5_1x16(const MatmulTask& task);
// matmul_fx16_avx512.cc: weights in WeightLayout::kF16x16, kBf16x16
void matmul_f16x16(const MatmulTask& task);
void matmul_bf16x16(const MatmulTask& task);
// matmul_kx16_avx512.cc: weights in WeightLayout::kQ4_Kx16, kQ5_Kx16, kQ6_Kx16, kIq4XsX16,
// kQ3_Kx16, kQ2_Kx16
void matmul_q4_kx16(const MatmulTask& task);
void matmul_q5_kx16(const MatmulTask& task);
void matmul_q6_kx16(const MatmulTask& task);
void matmul_iq4_xsx16(const MatmulTask& task);
void matmul_q3_kx16(const MatmulTask& task);
void matmul_q2_kx16(const MatmulTask& task);
// matmul_kquant_avx512.cc
void matmul_q4_k(const MatmulTask& task);
void matmul_q5_k(const MatmulTask& task);
void matmul_iq4_xs(const MatmulTask& task);
void prepare_q8_k(const float* x, int64_t cols, uint8_t* out);
// matmul_kquant16_avx512.cc
void matmul_q2_k(const MatmulTask& task);
void matmul_q3_k(const MatmulTask& task);
void matmul_q6_k(const MatmulTask& task);
}  // namespace avx512

// matmul_x16_amx.cc: the AMX tier's kernels for the layouts of
// matmul_x16_avx512.cc and for the packed K-quants (whole tiles of 16 activation rows on the tile unit,
// the rest on the AVX-512 kernel; bit-identical to it). Only where
// best_isa() is kAmx.
namespace amx {
void matmul_q8_0x16(const MatmulTask& task);
void matmul_mxfp4x16(const MatmulTask& task);
void matmul_iq4_nlx16(const MatmulTask& task);
void matmul_q4_0x16(const MatmulTask& task);
void matmul_q5_0x16(const MatmulTask& task);
void matmul_q4_1x16(const MatmulTask& task);
void matmul_q5_1x16(const MatmulTask& task);
void matmul_q4_kx16(const MatmulTask& task);
void matmul_q5_kx16(const MatmulTask& task);
void matmul_q6_kx16(const MatmulTask& task);
void matmul_q3_kx16(const MatmulTask& task);
void matmul_iq4_xsx16(const MatmulTask& task);
void matmul_q2_kx16(const MatmulTask& task);
}  // namespace amx

// matmul_x16_amx_emulated.cc: the same driver on the tile unit's scalar
// emulation (amx_tiles.h's EmulatedTiles), for tests on CPUs without AMX.
// Where best_isa() is at least kAvx512.
namespace amx_emulated {
void matmul_q8_0x16(const MatmulTask& task);
void matmul_mxfp4x16(const MatmulTask& task);
void matmul_iq4_nlx16(const MatmulTask& task);
void matmul_q4_0x16(const MatmulTask& task);
void matmul_q5_0x16(const MatmulTask& task);
void matmul_q4_1x16(const MatmulTask& task);
void matmul_q5_1x16(const MatmulTask& task);
void matmul_q4_kx16(const MatmulTask& task);
void matmul_q5_kx16(const MatmulTask& task);
void matmul_q6_kx16(const MatmulTask& task);
void matmul_q3_kx16(const MatmulTask& task);
void matmul_iq4_xsx16(const MatmulTask& task);
void matmul_q2_kx16(const MatmulTask& task);
}  // namespace amx_emulated

}  // namespace met::cpu
