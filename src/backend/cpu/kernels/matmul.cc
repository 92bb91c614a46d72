// matmul.h's entry points and matmul_dispatch.h's tables and driver.
// Prepared activation rows are padded to 64 bytes (zeroed), so rows of an
// aligned buffer stay cache-line aligned.
// Threading: pure functions; the selected table is built once (function-local
// static) and read-only after. Tested by tests/backend/matmul_test.cc.
#include "backend/cpu/kernels/matmul.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

#include "backend/cpu/kernels/matmul_dispatch.h"
#include "backend/cpu/kernels/packed_weights.h"
#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "core/check.h"
#include "core/isa_table.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/row_kernels.h"

namespace met::cpu {
namespace {

constexpr size_t kRowAlignBytes = 64;
// Activation bytes one kernel call should keep hot: about half a core's L2,
// leaving the rest for the weight rows being reused across activation rows.
constexpr size_t kActivationBlockBytes = 768 * 1024;

// Activation preparation through src/tensor's selected quantizers (bit for
// bit its references, so the same bytes as ref::prepare_*).
void prepare_bf16_fast(const float* x, int64_t cols, uint8_t* out) {
  selected_row_kernels(GgmlType::kBF16).quantize(x, out, cols);
}

void prepare_q8_0_fast(const float* x, int64_t cols, uint8_t* out) {
  selected_row_kernels(GgmlType::kQ8_0).quantize(x, out, cols);
  const int64_t num_blocks = cols / kQk;
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(out);
  uint8_t* sums = out + num_blocks * sizeof(BlockQ8_0);
  uint8_t* tails = sums + num_blocks * (kQk / 4) * sizeof(int16_t);
  for (int64_t b = 0; b < num_blocks; ++b) {
    int16_t lane_sums[kQk / 4];
    const int8_t* q = blocks[b].qs;
    int32_t block_sum = 0;
    for (int lane = 0; lane < kQk / 4; ++lane, q += 4) {
      lane_sums[lane] = static_cast<int16_t>(q[0] + q[1] + q[2] + q[3]);
      block_sum += lane_sums[lane];
    }
    std::memcpy(sums + sizeof(lane_sums) * static_cast<size_t>(b), lane_sums, sizeof(lane_sums));
    const ActQ8_0Tail tail{-128 * block_sum, fp16_to_f32(blocks[b].d)};
    std::memcpy(tails + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), &tail, sizeof(tail));
  }
}

struct Entry {
  GgmlType type;
  MatmulKernels kernels;
};

constexpr Entry kReference[] = {
    {GgmlType::kF32, {ref::prepare_f32, ref::matmul_f32}},
    {GgmlType::kF16, {ref::prepare_f32, ref::matmul_f16}},
    {GgmlType::kBF16, {ref::prepare_bf16, ref::matmul_bf16}},
    {GgmlType::kQ8_0, {ref::prepare_q8_0, ref::matmul_q8_0}},
    {GgmlType::kQ4_0, {ref::prepare_q8_0, ref::matmul_q4_0}},
    {GgmlType::kMXFP4, {ref::prepare_q8_0, ref::matmul_mxfp4}},
    {GgmlType::kQ4_K, {ref::prepare_q8_k, ref::matmul_q4_k}},
    {GgmlType::kQ5_K, {ref::prepare_q8_k, ref::matmul_q5_k}},
    {GgmlType::kIQ4_NL, {ref::prepare_q8_0, ref::matmul_iq4_nl}},
    {GgmlType::kQ5_0, {ref::prepare_q8_0, ref::matmul_q5_0}},
    {GgmlType::kQ4_1, {ref::prepare_q8_0, ref::matmul_q4_1}},
    {GgmlType::kQ5_1, {ref::prepare_q8_0, ref::matmul_q5_1}},
    {GgmlType::kIQ4_XS, {ref::prepare_q8_k, ref::matmul_iq4_xs}},
    {GgmlType::kQ6_K, {ref::prepare_q8_k, ref::matmul_q6_k}},
    {GgmlType::kQ2_K, {ref::prepare_q8_k, ref::matmul_q2_k}},
    {GgmlType::kQ3_K, {ref::prepare_q8_k, ref::matmul_q3_k}},
};

constexpr Entry kAvx2[] = {
    {GgmlType::kF32, {nullptr, avx2::matmul_f32}},
    {GgmlType::kF16, {nullptr, avx2::matmul_f16, avx2::matmul_f16x16}},
    {GgmlType::kBF16, {prepare_bf16_fast, avx2::matmul_bf16, avx2::matmul_bf16x16}},
    {GgmlType::kQ8_0, {prepare_q8_0_fast, avx2::matmul_q8_0, avx2::matmul_q8_0x16}},
    {GgmlType::kQ4_0, {prepare_q8_0_fast, avx2::matmul_q4_0, avx2::matmul_q4_0x16}},
    {GgmlType::kMXFP4, {prepare_q8_0_fast, avx2::matmul_mxfp4, avx2::matmul_mxfp4x16}},
    {GgmlType::kQ4_K, {avx2::prepare_q8_k, avx2::matmul_q4_k, avx2::matmul_q4_kx16}},
    {GgmlType::kQ5_K, {avx2::prepare_q8_k, avx2::matmul_q5_k, avx2::matmul_q5_kx16}},
    {GgmlType::kIQ4_NL, {prepare_q8_0_fast, avx2::matmul_iq4_nl, avx2::matmul_iq4_nlx16}},
    {GgmlType::kQ5_0, {prepare_q8_0_fast, avx2::matmul_q5_0, avx2::matmul_q5_0x16}},
    {GgmlType::kQ4_1, {prepare_q8_0_fast, avx2::matmul_q4_1, avx2::matmul_q4_1x16}},
    {GgmlType::kQ5_1, {prepare_q8_0_fast, avx2::matmul_q5_1, avx2::matmul_q5_1x16}},
    {GgmlType::kIQ4_XS, {avx2::prepare_q8_k, avx2::matmul_iq4_xs, avx2::matmul_iq4_xsx16}},
    {GgmlType::kQ6_K, {avx2::prepare_q8_k, avx2::matmul_q6_k, avx2::matmul_q6_kx16}},
    {GgmlType::kQ2_K, {avx2::prepare_q8_k, avx2::matmul_q2_k, avx2::matmul_q2_kx16}},
    {GgmlType::kQ3_K, {avx2::prepare_q8_k, avx2::matmul_q3_k, avx2::matmul_q3_kx16}},
};

// The AVX-VNNI tier: vpdpbusd on ymm for the packed integer layouts;
// activations, row-major and float kernels (and Q3_K, Q2_K) are AVX2's.
constexpr Entry kAvxVnni[] = {
    {GgmlType::kQ8_0, {nullptr, nullptr, avxvnni::matmul_q8_0x16}},
    {GgmlType::kQ4_0, {nullptr, nullptr, avxvnni::matmul_q4_0x16}},
    {GgmlType::kMXFP4, {nullptr, nullptr, avxvnni::matmul_mxfp4x16}},
    {GgmlType::kIQ4_NL, {nullptr, nullptr, avxvnni::matmul_iq4_nlx16}},
    {GgmlType::kQ5_0, {nullptr, nullptr, avxvnni::matmul_q5_0x16}},
    {GgmlType::kQ4_1, {nullptr, nullptr, avxvnni::matmul_q4_1x16}},
    {GgmlType::kQ5_1, {nullptr, nullptr, avxvnni::matmul_q5_1x16}},
    {GgmlType::kQ4_K, {nullptr, nullptr, avxvnni::matmul_q4_kx16}},
    {GgmlType::kQ5_K, {nullptr, nullptr, avxvnni::matmul_q5_kx16}},
    {GgmlType::kQ6_K, {nullptr, nullptr, avxvnni::matmul_q6_kx16}},
    {GgmlType::kIQ4_XS, {nullptr, nullptr, avxvnni::matmul_iq4_xsx16}},
};

constexpr Entry kAvx512[] = {
    {GgmlType::kF32, {nullptr, avx512::matmul_f32}},
    {GgmlType::kF16, {nullptr, avx512::matmul_f16, avx512::matmul_f16x16}},
    {GgmlType::kBF16, {prepare_bf16_fast, avx512::matmul_bf16, avx512::matmul_bf16x16}},
    {GgmlType::kQ8_0, {prepare_q8_0_fast, avx512::matmul_q8_0, avx512::matmul_q8_0x16}},
    {GgmlType::kQ4_0, {prepare_q8_0_fast, avx512::matmul_q4_0, avx512::matmul_q4_0x16}},
    {GgmlType::kMXFP4, {prepare_q8_0_fast, avx512::matmul_mxfp4, avx512::matmul_mxfp4x16}},
    {GgmlType::kQ4_K, {avx512::prepare_q8_k, avx512::matmul_q4_k, avx512::matmul_q4_kx16}},
    {GgmlType::kQ5_K, {avx512::prepare_q8_k, avx512::matmul_q5_k, avx512::matmul_q5_kx16}},
    {GgmlType::kIQ4_NL, {prepare_q8_0_fast, avx512::matmul_iq4_nl, avx512::matmul_iq4_nlx16}},
    {GgmlType::kQ5_0, {prepare_q8_0_fast, avx512::matmul_q5_0, avx512::matmul_q5_0x16}},
    {GgmlType::kQ4_1, {prepare_q8_0_fast, avx512::matmul_q4_1, avx512::matmul_q4_1x16}},
    {GgmlType::kQ5_1, {prepare_q8_0_fast, avx512::matmul_q5_1, avx512::matmul_q5_1x16}},
    {GgmlType::kIQ4_XS, {avx512::prepare_q8_k, avx512::matmul_iq4_xs, avx512::matmul_iq4_xsx16}},
    {GgmlType::kQ6_K, {avx512::prepare_q8_k, avx512::matmul_q6_k, avx512::matmul_q6_kx16}},
    {GgmlType::kQ2_K, {avx512::prepare_q8_k, avx512::matmul_q2_k, avx512::matmul_q2_kx16}},
    {GgmlType::kQ3_K, {avx512::prepare_q8_k, avx512::matmul_q3_k, avx512::matmul_q3_kx16}},
};

// The AMX tier: the tile unit for the 16-row packed layouts with ActQ8_0
// activations and for the packed K-quants; every other kernel (F16, BF16,
// row-major) is AVX-512's (overlay_isa_tiers).
constexpr Entry kAmx[] = {
    {GgmlType::kQ8_0, {nullptr, nullptr, amx::matmul_q8_0x16}},
    {GgmlType::kQ4_0, {nullptr, nullptr, amx::matmul_q4_0x16}},
    {GgmlType::kMXFP4, {nullptr, nullptr, amx::matmul_mxfp4x16}},
    {GgmlType::kIQ4_NL, {nullptr, nullptr, amx::matmul_iq4_nlx16}},
    {GgmlType::kQ5_0, {nullptr, nullptr, amx::matmul_q5_0x16}},
    {GgmlType::kQ4_1, {nullptr, nullptr, amx::matmul_q4_1x16}},
    {GgmlType::kQ5_1, {nullptr, nullptr, amx::matmul_q5_1x16}},
    {GgmlType::kQ4_K, {nullptr, nullptr, amx::matmul_q4_kx16}},
    {GgmlType::kQ5_K, {nullptr, nullptr, amx::matmul_q5_kx16}},
    {GgmlType::kQ6_K, {nullptr, nullptr, amx::matmul_q6_kx16}},
    {GgmlType::kQ3_K, {nullptr, nullptr, amx::matmul_q3_kx16}},
    {GgmlType::kIQ4_XS, {nullptr, nullptr, amx::matmul_iq4_xsx16}},
    {GgmlType::kQ2_K, {nullptr, nullptr, amx::matmul_q2_kx16}},
};

std::span<const Entry> tier_entries(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return kReference;
    case Isa::kAvx2:
      return kAvx2;
    case Isa::kAvxVnni:
      return kAvxVnni;
    case Isa::kAvx512:
      return kAvx512;
    case Isa::kAmx:
      return kAmx;
  }
  return {};
}

constexpr size_t kMaxTypeId = 64;  // above every GgmlType id
using Table = std::array<MatmulKernels, kMaxTypeId>;

Table build_selected_table(Isa selected) {
  return overlay_isa_tiers<MatmulKernels, kMaxTypeId>(detect_cpu_features(), selected, tier_entries,
                                                      [](MatmulKernels& slot, const MatmulKernels& tier) {
    if (tier.prepare != nullptr) slot.prepare = tier.prepare;
    if (tier.matmul != nullptr) slot.matmul = tier.matmul;
    if (tier.matmul_packed != nullptr) slot.matmul_packed = tier.matmul_packed;
  });
}

// Content bytes of a prepared row, before padding.
size_t activation_content_bytes(GgmlType weight_type, int64_t cols) {
  const auto n = static_cast<size_t>(cols);
  if (weight_type == GgmlType::kF32 || weight_type == GgmlType::kF16) return n * sizeof(float);
  if (weight_type == GgmlType::kBF16) return n * sizeof(uint16_t);
  if (weight_type == GgmlType::kQ8_0 || weight_type == GgmlType::kQ4_0 || weight_type == GgmlType::kMXFP4 ||
      weight_type == GgmlType::kIQ4_NL || weight_type == GgmlType::kQ5_0 || weight_type == GgmlType::kQ4_1 ||
      weight_type == GgmlType::kQ5_1) {
    return n / kQk * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t) + sizeof(ActQ8_0Tail));
  }
  if (weight_type == GgmlType::kQ2_K || weight_type == GgmlType::kQ3_K || weight_type == GgmlType::kQ4_K ||
      weight_type == GgmlType::kQ5_K || weight_type == GgmlType::kQ6_K || weight_type == GgmlType::kIQ4_XS) {
    return n / kQkK * sizeof(BlockQ8_K);
  }
  MET_CHECK(false, "matmul: no activation format for {}", ggml_type_name(weight_type));
  return 0;
}

}  // namespace

MatmulKernels matmul_kernels_for_isa(GgmlType type, Isa isa) {
  for (const Entry& entry : tier_entries(isa)) {
    if (entry.type == type) return entry.kernels;
  }
  return {};
}

const MatmulKernels& selected_matmul_kernels(GgmlType type) {
  static const Table table = build_selected_table(selected_isa());
  static const MatmulKernels kNone{};
  const auto id = static_cast<size_t>(type);
  return id < kMaxTypeId ? table[id] : kNone;
}

bool matmul_supports(GgmlType type, int64_t cols) {
  if (cols <= 0 || selected_matmul_kernels(type).matmul == nullptr) return false;
  return cols % ggml_type_traits(type).block_size == 0;
}

size_t activation_row_bytes(GgmlType weight_type, int64_t cols) {
  const size_t content = activation_content_bytes(weight_type, cols);
  return (content + kRowAlignBytes - 1) / kRowAlignBytes * kRowAlignBytes;
}

void prepare_activations_with(const MatmulKernels& kernels, GgmlType weight_type, const float* x,
                              int64_t x_stride, int64_t cols, int64_t row_begin, int64_t row_end,
                              uint8_t* out) {
  MET_DCHECK(kernels.prepare != nullptr);
  const size_t row_bytes = activation_row_bytes(weight_type, cols);
  const size_t content = activation_content_bytes(weight_type, cols);
  for (int64_t i = row_begin; i < row_end; ++i) {
    uint8_t* row = out + static_cast<size_t>(i) * row_bytes;
    kernels.prepare(x + i * x_stride, cols, row);
    std::memset(row + content, 0, row_bytes - content);
  }
}

void prepare_activations(GgmlType weight_type, const float* x, int64_t x_stride, int64_t cols,
                         int64_t row_begin, int64_t row_end, uint8_t* out) {
  MET_DCHECK(matmul_supports(weight_type, cols));
  prepare_activations_with(selected_matmul_kernels(weight_type), weight_type, x, x_stride, cols,
                           row_begin, row_end, out);
}

void matmul_with(const MatmulKernels& kernels, const WeightMatrix& w, const uint8_t* act, int64_t m,
                 float* y, int64_t y_stride, int64_t n_begin, int64_t n_end) {
  const bool packed = w.layout != WeightLayout::kRows;
  const MatmulKernelFn kernel = packed ? kernels.matmul_packed : kernels.matmul;
  MET_DCHECK(kernel != nullptr);
  MET_DCHECK(0 <= n_begin && n_begin <= n_end && n_end <= w.rows);
  if (m <= 0 || n_begin == n_end) return;
  MatmulTask task;
  task.weights = w.data;
  task.weight_row_bytes = layout_group_stride(w);
  task.cols = w.cols;
  task.act_row_bytes = activation_row_bytes(w.type, w.cols);
  task.y_stride = y_stride;
  task.n_begin = n_begin;
  task.n_end = n_end;
  // Activation rows per call: as many as stay in cache, in multiples of 16
  // (the AMX kernels' row tiles; the vector kernels' divide 16).
  const int64_t rows_per_block = std::max<int64_t>(
      16, static_cast<int64_t>(kActivationBlockBytes / task.act_row_bytes) / 16 * 16);
  for (int64_t i0 = 0; i0 < m; i0 += rows_per_block) {
    task.act = act + static_cast<size_t>(i0) * task.act_row_bytes;
    task.y = y + i0 * y_stride;
    task.m = std::min(rows_per_block, m - i0);
    kernel(task);
  }
}

void matmul(const WeightMatrix& w, const uint8_t* act, int64_t m, float* y, int64_t y_stride,
            int64_t n_begin, int64_t n_end) {
  matmul_with(selected_matmul_kernels(w.type), w, act, m, y, y_stride, n_begin, n_end);
}

void for_each_tile(const MatmulTask& task, const TileTable& table) {
  for (int64_t n0 = task.n_begin; n0 < task.n_end; n0 += table.max_cols) {
    const int64_t cols = std::min<int64_t>(table.max_cols, task.n_end - n0);
    for (int64_t i0 = 0; i0 < task.m; i0 += table.max_rows) {
      const int64_t rows = std::min<int64_t>(table.max_rows, task.m - i0);
      table.fns[(rows - 1) * table.max_cols + (cols - 1)](task, i0, n0);
    }
  }
}

int64_t matmul_column_tile(GgmlType type) {
  (void)type;
  return 16;  // every kernel's column tile divides 16; 16 floats fill a cache line of y
}

int64_t matmul_claim_tile(const WeightMatrix& w, int64_t m) {
  // Measured at batch 1 on gpt-oss medium (MXFP4 experts, Q8_0 attention;
  // 2 threads, the variants alternated step by step in one process, both
  // orders): 16-column claims, whose calls of 9-35 KB streamed at 11-17
  // GB/s a thread against 25 for calls past 256 KB, cost about 2% a step
  // against 64 KiB ones; 32 and 128 KiB measured the same as 64.
  constexpr int64_t kStreamingRows = 4;
  constexpr int64_t kClaimBytes = int64_t{64} << 10;
  const int64_t tile = matmul_column_tile(w.type);
  if (m > kStreamingRows) {
    // The float and Q4_K / Q5_K layouts' AVX-512 kernels walk groups in
    // pairs at these m (matmul_fx16_avx512.cc, matmul_kx16_avx512.cc); a
    // one-group claim would get the lone group's slower tiles.
    const bool paired = w.layout == WeightLayout::kF16x16 || w.layout == WeightLayout::kBf16x16 ||
                        w.layout == WeightLayout::kQ4_Kx16 || w.layout == WeightLayout::kQ5_Kx16;
    return paired ? 2 * tile : tile;
  }
  const auto tile_bytes = static_cast<int64_t>(w.row_bytes) * tile;
  return std::max<int64_t>(1, (kClaimBytes + tile_bytes - 1) / tile_bytes) * tile;
}

}  // namespace met::cpu
