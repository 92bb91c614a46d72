// The GEMV (see gemv.h).
#include "backend/cuda/gemv.h"

#include <cuda_fp16.h>

#include "backend/cuda/cuda_buffer.h"

namespace met::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 128;  // 4 warps a block
constexpr int kWarpsPerBlock = kThreads / kWarp;

__device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

// --- The tiled path -------------------------------------------------------
// A layout says, for a warp tile of kCols columns (kBytes of a row), what
// lane `lane` loads (Raw: kUnroll tiles of each row are loaded before any
// is used), what it decodes once per tile (Scales), which activations it
// multiplies (column: the first of element quad `quad`'s four, contiguous)
// and the weight of element e (< kElems), each the float
// weight_element gives for that column.

__device__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__device__ uint32_t word(const uint2& v, int i) { return i == 0 ? v.x : v.y; }
__device__ float half_at(uint32_t w, int i) { return __half2float(__ushort_as_half(static_cast<uint16_t>(w >> (16 * i)))); }

struct NoScales {};

// 16 bytes = 4 float32: lane l holds columns 4l .. 4l + 3.
struct F32Tile {
  static constexpr int kCols = 128, kBytes = 512, kElems = 4, kUnroll = 2;
  using Raw = uint4;
  using Scales = NoScales;
  __device__ static Raw load(const uint8_t* tile, int lane) { return __ldg(reinterpret_cast<const uint4*>(tile) + lane); }
  __device__ static Scales scales(const Raw&, int) { return {}; }
  __device__ static int column(int lane, int quad) { return 4 * lane + 4 * quad; }
  __device__ static float weight(const Raw& r, const Scales&, int e) { return __uint_as_float(word(r, e)); }
};

// 16 bytes = 8 halves (F16 or BF16): lane l holds columns 8l .. 8l + 7.
template <bool kBf16>
struct HalfTile {
  static constexpr int kCols = 256, kBytes = 512, kElems = 8, kUnroll = 2;
  using Raw = uint4;
  using Scales = NoScales;
  __device__ static Raw load(const uint8_t* tile, int lane) { return __ldg(reinterpret_cast<const uint4*>(tile) + lane); }
  __device__ static Scales scales(const Raw&, int) { return {}; }
  __device__ static int column(int lane, int quad) { return 8 * lane + 4 * quad; }
  __device__ static float weight(const Raw& r, const Scales&, int e) {
    const auto bits = static_cast<uint16_t>(word(r, e / 2) >> (16 * (e % 2)));
    return kBf16 ? __uint_as_float(static_cast<uint32_t>(bits) << 16) : __half2float(__ushort_as_half(bits));
  }
};

// Tiled Q8_0 (dequant_hd.h): lane l's 16 int8 are columns 128m + 4l + j at
// byte 4m + j, with the scales of blocks 4m + l / 8 in one 8-byte load.
struct Q8Tile {
  static constexpr int kCols = kHdQ8TileCols, kBytes = kHdQ8TileBytes, kElems = 16, kUnroll = 2;
  struct Raw {
    uint4 q;
    uint2 scales;
  };
  struct Scales {
    float d[4];
  };
  __device__ static Raw load(const uint8_t* tile, int lane) {
    return {__ldg(reinterpret_cast<const uint4*>(tile) + lane),
            __ldg(reinterpret_cast<const uint2*>(tile + kHdQ8TileCols) + lane / 8)};
  }
  __device__ static Scales scales(const Raw& r, int) {
    return {{half_at(r.scales.x, 0), half_at(r.scales.x, 1), half_at(r.scales.y, 0), half_at(r.scales.y, 1)}};
  }
  __device__ static int column(int lane, int quad) { return 128 * quad + 4 * lane; }
  __device__ static float weight(const Raw& r, const Scales& s, int e) {
    const auto q = static_cast<int8_t>(word(r.q, e / 4) >> (8 * (e % 4)));
    return static_cast<float>(q) * s.d[e / 4];
  }
};

// Tiled Q4_K (dequant_hd.h): lane l's 32 nibbles, its group's scale and
// min bytes, every super-block's d and dmin: three 16-byte loads.
struct Q4KTile {
  static constexpr int kCols = kHdKTileCols, kBytes = kHdQ4KTileBytes, kElems = 32, kUnroll = 1;
  struct Raw {
    uint4 q;
    uint4 scale_min;
    uint4 d_dmin;
  };
  struct Scales {
    float d[8];
    float min[8];
  };
  __device__ static Raw load(const uint8_t* tile, int lane) {
    const auto* v = reinterpret_cast<const uint4*>(tile);
    return {__ldg(v + lane), __ldg(v + 32 + lane / 8), __ldg(v + 36)};
  }
  __device__ static Scales scales(const Raw& r, int) {
    Scales s;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t sd = word(r.d_dmin, m / 2);
      const auto scale = static_cast<float>((word(r.scale_min, m / 4) >> (8 * (m % 4))) & 0xFF);
      const auto min = static_cast<float>((word(r.scale_min, 2 + m / 4) >> (8 * (m % 4))) & 0xFF);
      s.d[m] = half_at(sd, 0) * scale;
      s.min[m] = half_at(sd, 1) * min;
    }
    return s;
  }
  __device__ static int column(int lane, int quad) { return 128 * quad + 4 * lane; }
  __device__ static float weight(const Raw& r, const Scales& s, int e) {
    const auto code = static_cast<float>((word(r.q, e / 8) >> (4 * (e % 8))) & 0x0F);
    return s.d[e / 4] * code - s.min[e / 4];
  }
};

// Tiled Q6_K (dequant_hd.h): lane l's 32 low nibbles, 32 high bit pairs,
// its group's 8 scales, every super-block's d.
struct Q6KTile {
  static constexpr int kCols = kHdKTileCols, kBytes = kHdQ6KTileBytes, kElems = 32, kUnroll = 1;
  struct Raw {
    uint4 low;
    uint2 high;
    uint2 scales;
    uint2 d;
  };
  struct Scales {
    float d[8];
  };
  __device__ static Raw load(const uint8_t* tile, int lane) {
    const auto* v = reinterpret_cast<const uint2*>(tile);
    return {__ldg(reinterpret_cast<const uint4*>(tile) + lane), __ldg(v + 64 + lane), __ldg(v + 96 + lane / 4),
            __ldg(v + 104)};
  }
  __device__ static Scales scales(const Raw& r, int) {
    Scales s;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const auto scale = static_cast<int8_t>(word(r.scales, m / 4) >> (8 * (m % 4)));
      s.d[m] = half_at(word(r.d, m / 4), (m / 2) % 2) * static_cast<float>(scale);
    }
    return s;
  }
  __device__ static int column(int lane, int quad) { return 128 * quad + 4 * lane; }
  __device__ static float weight(const Raw& r, const Scales& s, int e) {
    const uint32_t low = (word(r.low, e / 8) >> (4 * (e % 8))) & 0x0F;
    const uint32_t high = (word(r.high, e / 16) >> (2 * (e % 16))) & 3;
    return s.d[e / 4] * static_cast<float>(static_cast<int>(low | (high << 4)) - 32);
  }
};

// `split` warps (1 or kWarpsPerBlock) per kRows weight rows, kBatch
// activation rows: warp part p of a group takes the tiles
// [p * tiles / split, (p + 1) * tiles / split). Every lane loads its bytes
// of kUnroll tiles of each row first (kUnroll * kRows loads in flight),
// decodes each row's scales once a tile, then a quad of elements at a
// time decodes their weights and, for each activation row, loads their 4
// activations (a float4) once for all kRows rows. Element e of a tile adds
// to the lane's sum in e order, tiles in order; the warp reduces by
// shuffles, and a split group's parts add in part order. `split` depends
// on the matrix alone (gemv_split), so a row's bits do not depend on the
// batch.
// One tile of every row (its raw bytes in `raw`) into the lane's sums:
// the row's scales once, then a quad of elements at a time, each
// activation row's float4 once for all kRows rows.
template <class Tile, int kRows, int kBatch>
__device__ void accumulate_tile(const typename Tile::Raw (&raw)[kRows], int lane, const float* xt, int64_t cols,
                                float (&acc)[kRows][kBatch]) {
  typename Tile::Scales scales[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) scales[r] = Tile::scales(raw[r], lane);
#pragma unroll
  for (int quad = 0; quad < Tile::kElems / 4; ++quad) {
    float w[kRows][4];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int j = 0; j < 4; ++j) w[r][j] = Tile::weight(raw[r], scales[r], 4 * quad + j);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(xt + b * cols + Tile::column(lane, quad)));
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        acc[r][b] = fmaf(w[r][0], v.x, acc[r][b]);
        acc[r][b] = fmaf(w[r][1], v.y, acc[r][b]);
        acc[r][b] = fmaf(w[r][2], v.z, acc[r][b]);
        acc[r][b] = fmaf(w[r][3], v.w, acc[r][b]);
      }
    }
  }
}

// The lanes' sums of rows first.. into y: a warp's by shuffles; a split
// group's parts (`part` of `split`) through shared memory, added in part
// order by a thread per output.
template <int kRows, int kBatch>
__device__ void write_sums(float (&acc)[kRows][kBatch], int lane, int part, int split, int64_t first,
                           int64_t out_rows, float* y) {
  __shared__ float parts[kWarpsPerBlock][kRows][kBatch];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const float sum = warp_sum(acc[r][b]);
      if (lane != 0 || first + r >= out_rows) continue;
      if (split == 1) {
        y[b * out_rows + first + r] = sum;
      } else {
        parts[part][r][b] = sum;
      }
    }
  }
  if (split == 1) return;
  __syncthreads();
  const int i = static_cast<int>(threadIdx.x);
  if (i >= kRows * kBatch || first + i / kBatch >= out_rows) return;
  float sum = parts[0][i / kBatch][i % kBatch];
  for (int p = 1; p < split; ++p) sum += parts[p][i / kBatch][i % kBatch];
  y[(i % kBatch) * out_rows + first + i / kBatch] = sum;
}

template <class Tile, int kRows, int kBatch>
__global__ void __launch_bounds__(kThreads) gemv_tiled_kernel(const uint8_t* weights, int64_t out_rows, int64_t cols,
                                                              int64_t row_bytes, int split, const float* __restrict__ x,
                                                              float* y) {
  const int lane = static_cast<int>(threadIdx.x % kWarp), warp = static_cast<int>(threadIdx.x / kWarp);
  const int groups_per_block = kWarpsPerBlock / split, part = warp % split;
  const int64_t first = (int64_t{blockIdx.x} * groups_per_block + warp / split) * kRows;
  const int64_t tiles = cols / Tile::kCols;
  const int64_t tile_begin = part * tiles / split, tile_end = (part + 1) * tiles / split;
  const uint8_t* rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = weights + (first + r < out_rows ? first + r : 0) * row_bytes;
  float acc[kRows][kBatch] = {};
  constexpr int kUnroll = Tile::kUnroll;
  for (int64_t t = tile_begin; t < tile_end && first < out_rows; t += kUnroll) {
    typename Tile::Raw raw[kUnroll][kRows];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (t + u >= tile_end) break;
#pragma unroll
      for (int r = 0; r < kRows; ++r) raw[u][r] = Tile::load(rows[r] + (t + u) * Tile::kBytes, lane);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (t + u < tile_end) accumulate_tile<Tile, kRows, kBatch>(raw[u], lane, x + (t + u) * Tile::kCols, cols, acc);
    }
  }
  write_sums<kRows, kBatch>(acc, lane, part, split, first, out_rows, y);
}

// Warps per row group: a matrix of few rows (a decode step's K/V, Q and
// output projections) splits its columns over a block's warps, so it
// fills the GPU; one of many rows (the FFN, the output head) does not.
// The matrix's shape alone decides.
int gemv_split(int64_t out_rows) { return out_rows <= 8192 ? kWarpsPerBlock : 1; }

template <class Tile, int kBatch>
void launch_tiled(const uint8_t* w, int64_t out_rows, int64_t cols, int64_t row_bytes, const float* x, float* y,
                  cudaStream_t stream) {
  // Two rows a warp while the activations are few; four when each weight
  // load meets more of them (more reuse of each activation load).
  constexpr int kRows = kBatch <= 2 ? 2 : 4;
  static_assert(kRows * kBatch <= kThreads, "a thread per output adds a split group's parts");
  const int split = gemv_split(out_rows);
  const int64_t groups = (out_rows + kRows - 1) / kRows, groups_per_block = kWarpsPerBlock / split;
  const auto blocks = static_cast<unsigned>((groups + groups_per_block - 1) / groups_per_block);
  gemv_tiled_kernel<Tile, kRows, kBatch><<<blocks, kThreads, 0, stream>>>(w, out_rows, cols, row_bytes, split, x, y);
}

template <class Tile>
void launch_tiled(int32_t batch, const uint8_t* w, int64_t out_rows, int64_t cols, int64_t row_bytes,
                  const float* x, float* y, cudaStream_t stream) {
  switch (batch) {
    case 1: return launch_tiled<Tile, 1>(w, out_rows, cols, row_bytes, x, y, stream);
    case 2: return launch_tiled<Tile, 2>(w, out_rows, cols, row_bytes, x, y, stream);
    case 3: return launch_tiled<Tile, 3>(w, out_rows, cols, row_bytes, x, y, stream);
    case 4: return launch_tiled<Tile, 4>(w, out_rows, cols, row_bytes, x, y, stream);
    case 5: return launch_tiled<Tile, 5>(w, out_rows, cols, row_bytes, x, y, stream);
    case 6: return launch_tiled<Tile, 6>(w, out_rows, cols, row_bytes, x, y, stream);
    case 7: return launch_tiled<Tile, 7>(w, out_rows, cols, row_bytes, x, y, stream);
    default: return launch_tiled<Tile, 8>(w, out_rows, cols, row_bytes, x, y, stream);
  }
}
static_assert(kMaxGemvBatch == 8, "launch_tiled instantiates batches 1..8");

// The columns of a warp tile of `type` on the tiled path, or 0.
int tile_cols(HdWeightType type) {
  switch (type) {
    case HdWeightType::kF32: return F32Tile::kCols;
    case HdWeightType::kF16:
    case HdWeightType::kBF16: return HalfTile<true>::kCols;
    case HdWeightType::kQ8_0Tiled: return Q8Tile::kCols;
    case HdWeightType::kQ4_KTiled:
    case HdWeightType::kQ6_KTiled: return kHdKTileCols;
    default: return 0;
  }
}

// --- By groups ------------------------------------------------------------
// A warp per output row: each lane takes groups of 32 columns (dot_group:
// a block's scales decoded once) in a stride of the warp, then the warp
// reduces by shuffles. Columns past the last whole group (float types
// only) go element by element.
__global__ void gemv_by_groups_kernel(HdWeightType type, const uint8_t* weights, int64_t out_rows, int64_t cols,
                                      int64_t row_bytes, const float* x, int32_t batch, float* y) {
  const int64_t row = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (row >= out_rows) return;
  const uint8_t* w = weights + row * row_bytes;
  float acc[kMaxGemvBatch] = {};
  const int64_t groups = cols / kHdGroup;
  for (int64_t g = lane; g < groups; g += kWarp) {
    for (int32_t b = 0; b < batch; ++b) acc[b] += dot_group(type, w, g, x + b * cols + g * kHdGroup);
  }
  for (int64_t c = groups * kHdGroup + lane; c < cols; c += kWarp) {
    const float v = weight_element(type, w, c);
    for (int32_t b = 0; b < batch; ++b) acc[b] = fmaf(v, x[b * cols + c], acc[b]);
  }
  for (int32_t b = 0; b < batch; ++b) {
    const float sum = warp_sum(acc[b]);
    if (lane == 0) y[b * out_rows + row] = sum;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool gemv_is_tiled(HdWeightType type, const uint8_t* weights, int64_t cols, int64_t row_bytes, const float* x) {
  const int tile = tile_cols(type);
  return tile > 0 && cols % tile == 0 && row_bytes % 16 == 0 && aligned16(weights) && aligned16(x);
}

Status gemv(HdWeightType type, const uint8_t* weights, int64_t out_rows, int64_t cols, int64_t row_bytes,
            const float* x, int32_t batch, float* y, cudaStream_t stream) {
  if (batch < 1 || batch > kMaxGemvBatch) {
    return invalid_argument("gemv: batch {} outside 1..{}", batch, kMaxGemvBatch);
  }
  if (out_rows == 0) return ok_status();
  if (gemv_is_tiled(type, weights, cols, row_bytes, x)) {
    switch (type) {
      case HdWeightType::kF32: launch_tiled<F32Tile>(batch, weights, out_rows, cols, row_bytes, x, y, stream); break;
      case HdWeightType::kF16:
        launch_tiled<HalfTile<false>>(batch, weights, out_rows, cols, row_bytes, x, y, stream);
        break;
      case HdWeightType::kBF16:
        launch_tiled<HalfTile<true>>(batch, weights, out_rows, cols, row_bytes, x, y, stream);
        break;
      case HdWeightType::kQ4_KTiled:
        launch_tiled<Q4KTile>(batch, weights, out_rows, cols, row_bytes, x, y, stream);
        break;
      case HdWeightType::kQ6_KTiled:
        launch_tiled<Q6KTile>(batch, weights, out_rows, cols, row_bytes, x, y, stream);
        break;
      default: launch_tiled<Q8Tile>(batch, weights, out_rows, cols, row_bytes, x, y, stream); break;
    }
    return cuda_status(cudaGetLastError(), "gemv launch");
  }
  const int64_t blocks = (out_rows * kWarp + 255) / 256;
  gemv_by_groups_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(type, weights, out_rows, cols, row_bytes,
                                                                          x, batch, y);
  return cuda_status(cudaGetLastError(), "gemv launch");
}

}  // namespace met::cuda
