// ssm_scan.h's two forms: the recurrent one computes each block's dt and
// decays here and runs the selected tier's block kernel over it; the
// chunked one is the SSD (state space duality) form, per chunk of n rows
// (t, s < n), with a_t = dt_t A, L_t = sum_{s <= t} a_s and the state S0 at
// the chunk's start (held transposed, St[n][p], for the whole call):
//   M[t][s] = (C_t . B_s) e^(L_t - L_s) dt_s   (s <= t),
//   Y = diag(e^L) C St + M X + d X                 (the rows' outputs),
//   St = e^L_(n-1) St + B^T diag(e^(L_(n-1) - L_s) dt_s) X.
// The products go through the tier's gemm; dt, L, the decays, the scalings
// and the transposes are scalar here, shared by every tier. Every
// e^(L_t - L_s) <= 1 since A <= 0; it is e^L_t e^-L_s when the chunk's
// total decay stays above e^-80 (no overflow), one exp per pair otherwise.
// Scratch use is in ssm_scan.h; nothing is allocated per call.
// Threading: pure functions; the selected table is built once
// (function-local static). Tested by tests/backend/ssm_scan_test.cc.
#include "backend/cpu/kernels/ssm_scan.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/reference/gated_delta_ref.h"
#include "backend/cpu/kernels/reference/ssm_scan_ref.h"
#include "backend/cpu/kernels/ssm_scan_kernels.h"
#include "core/check.h"

namespace met::cpu {
namespace {

// Rows per block of the recurrent form: their dt and decays live on the
// stack, and their B and C rows stay in L1 while each state row runs over them.
constexpr int64_t kSsmRowBlock = 32;

constexpr SsmScanKernels kSsmScanReference{ref::ssm_scan_block, ref::gated_delta_gemm};
constexpr SsmScanKernels kSsmScanAvx2{avx2::ssm_scan_block, avx2::gated_delta_gemm};
constexpr SsmScanKernels kSsmScanAvx512{avx512::ssm_scan_block, avx512::gated_delta_gemm};

SsmScanKernels build_selected_ssm_scan(Isa selected) {
  SsmScanKernels out = kSsmScanReference;
  for (Isa tier : {Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    if (tier > selected) break;
    const SsmScanKernels k = ssm_scan_kernels_for_isa(tier);
    if (k.block != nullptr) out.block = k.block;
    if (k.gemm != nullptr) out.gemm = k.gemm;
  }
  return out;
}

int64_t ssm_padded16(int64_t n) { return (n + 15) / 16 * 16; }

// out[c * ld_out + r] = in[r * ld_in + c], in 16 x 16 tiles (a column of
// writes a row's width apart would keep landing in the same few L1 sets),
// each element times col_scale[r] when one is given.
void ssm_transpose(const float* in, int64_t ld_in, int64_t rows, int64_t cols, float* out, int64_t ld_out,
                   const float* col_scale = nullptr) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) {
          out[c * ld_out + r] = col_scale != nullptr ? in[r * ld_in + c] * col_scale[r] : in[r * ld_in + c];
        }
      }
    }
  }
}

// e^(L_t - L_s) for s <= t, from the chunk's cumulative log decays (in
// double, so each factor is within a float rounding of exact).
class SsmChunkDecay {
 public:
  SsmChunkDecay(const double* cum, int64_t n, float* exp_pos, float* exp_neg)
      : cum_(cum), exp_pos_(exp_pos), exp_neg_(exp_neg), split_(cum[n - 1] >= -80.0) {
    for (int64_t t = 0; t < n; ++t) {
      exp_pos_[t] = static_cast<float>(std::exp(cum[t]));
      exp_neg_[t] = split_ ? static_cast<float>(std::exp(-cum[t])) : 0.0f;
    }
  }
  float between(int64_t t, int64_t s) const {
    return split_ ? exp_pos_[t] * exp_neg_[s] : static_cast<float>(std::exp(cum_[t] - cum_[s]));
  }
  float from_start(int64_t t) const { return exp_pos_[t]; }

 private:
  const double* cum_;
  float* exp_pos_;
  float* exp_neg_;
  bool split_;
};

// The chunk of rows [row0, row0 + n) of a call, and the sizes of its arrays.
struct SsmChunk {
  const SsmScanRows* rows;
  int64_t row0;
  int64_t n;
  int64_t head_dim;
  int64_t d_state;
  int64_t ldn;  // leading dimension of the [.][max_chunk] arrays
  const float* x() const { return rows->x + row0 * rows->x_stride; }
  const float* b() const { return rows->b + row0 * rows->b_stride; }
  const float* c() const { return rows->c + row0 * rows->c_stride; }
  float* y() const { return rows->y + row0 * rows->y_stride; }
};

// The scratch arrays of one call (SsmScanScratch's, see ssm_scan.h).
struct SsmArrays {
  float* st;
  float* bt;
  float* gram;
  float* dt;
  double* cum;
  float* exp_l;
  float* exp_neg_l;
  float* weight;
};

// dt, L, B^T and the Gram matrix C_t . B_s of the chunk.
void ssm_chunk_prepare(const SsmScanKernels& kern, const SsmChunk& ch, const SsmArrays& a) {
  const SsmScanRows& rows = *ch.rows;
  MET_DCHECK(rows.a <= 0.0f, "ssm_scan_chunked: A = {} > 0", rows.a);
  double cum = 0.0;
  for (int64_t t = 0; t < ch.n; ++t) {
    a.dt[t] = ssm_softplus(rows.dt[(ch.row0 + t) * rows.dt_stride] + rows.dt_bias);
    cum += static_cast<double>(a.dt[t]) * rows.a;
    a.cum[t] = cum;
  }
  ssm_transpose(ch.b(), rows.b_stride, ch.n, ch.d_state, a.bt, ch.ldn);
  kern.gemm(ch.n, ch.n, ch.d_state, ch.c(), rows.c_stride, a.bt, ch.ldn, a.gram, ch.ldn, false, false);
}

// Y = diag(e^L) C St + M X + d X, M = the Gram matrix scaled in place.
void ssm_chunk_output(const SsmScanKernels& kern, const SsmChunk& ch, const SsmArrays& a,
                      const SsmChunkDecay& decay) {
  const SsmScanRows& rows = *ch.rows;
  float* y = ch.y();
  const int64_t ldy = rows.y_stride;
  kern.gemm(ch.n, ch.head_dim, ch.d_state, ch.c(), rows.c_stride, a.st, ch.head_dim, y, ldy, false, false);
  for (int64_t t = 0; t < ch.n; ++t) {
    const float row_scale = decay.from_start(t);
    for (int64_t p = 0; p < ch.head_dim; ++p) y[t * ldy + p] *= row_scale;
    for (int64_t s = 0; s <= t; ++s) a.gram[t * ch.ldn + s] *= decay.between(t, s) * a.dt[s];
  }
  kern.gemm(ch.n, ch.head_dim, ch.n, a.gram, ch.ldn, ch.x(), rows.x_stride, y, ldy, true, true);
  for (int64_t t = 0; t < ch.n; ++t) {
    const float* x = ch.x() + t * rows.x_stride;
    for (int64_t p = 0; p < ch.head_dim; ++p) y[t * ldy + p] += rows.d * x[p];
  }
}

// St = e^L_(n-1) St + B^T diag(e^(L_(n-1) - L_s) dt_s) X.
void ssm_chunk_state(const SsmScanKernels& kern, const SsmChunk& ch, const SsmArrays& a,
                     const SsmChunkDecay& decay) {
  const int64_t last = ch.n - 1;
  // B^T's column s scaled (the Gram matrix is done with the plain one).
  for (int64_t s = 0; s < ch.n; ++s) a.weight[s] = decay.between(last, s) * a.dt[s];
  for (int64_t i = 0; i < ch.d_state; ++i) {
    for (int64_t s = 0; s < ch.n; ++s) a.bt[i * ch.ldn + s] *= a.weight[s];
  }
  const float total = decay.from_start(last);
  for (int64_t i = 0; i < ch.d_state * ch.head_dim; ++i) a.st[i] *= total;
  kern.gemm(ch.d_state, ch.head_dim, ch.n, a.bt, ch.ldn, ch.x(), ch.rows->x_stride, a.st, ch.head_dim, true,
            false);
}

}  // namespace

float ssm_softplus(float v) { return v > 20.0f ? v : std::log1p(std::exp(v)); }

SsmScanKernels ssm_scan_kernels_for_isa(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return kSsmScanReference;
    case Isa::kAvx2:
      return kSsmScanAvx2;
    case Isa::kAvxVnni:
      return {};  // AVX2's serve
    case Isa::kAvx512:
      return kSsmScanAvx512;
    case Isa::kAmx:
      return {};  // AVX-512's serve
  }
  return {};
}

const SsmScanKernels& selected_ssm_scan_kernels() {
  static const SsmScanKernels kernels = build_selected_ssm_scan(selected_isa());
  return kernels;
}

SsmScanScratch::SsmScanScratch(int32_t max_chunk, int32_t max_head_dim, int32_t max_d_state)
    : max_chunk_(max_chunk), max_head_dim_(max_head_dim), max_d_state_(max_d_state) {
  MET_CHECK(max_chunk > 0 && max_head_dim > 0 && max_d_state > 0, "SsmScanScratch({}, {}, {})", max_chunk,
            max_head_dim, max_d_state);
  const int64_t n = max_chunk, p = max_head_dim, s = max_d_state;
  const int64_t sizes[] = {s * p, s * n, n * n, n, n, n, n};
  int64_t total = 0;
  for (const int64_t size : sizes) total += ssm_padded16(size);
  buffer_.assign(static_cast<size_t>(total), 0.0f);
  cum_.assign(static_cast<size_t>(max_chunk), 0.0);
  float* at = buffer_.data();
  float** slots[] = {&st_, &bt_, &gram_, &dt_, &exp_l_, &exp_neg_l_, &weight_};
  for (size_t i = 0; i < std::size(slots); ++i) {
    *slots[i] = at;
    at += ssm_padded16(sizes[i]);
  }
}

void ssm_scan_recurrent_with(const SsmScanKernels& kernels, const SsmScanRows& rows, int64_t num_rows,
                             int32_t head_dim, int32_t d_state, float* state) {
  float dt[kSsmRowBlock], decay[kSsmRowBlock];
  for (int64_t row0 = 0; row0 < num_rows; row0 += kSsmRowBlock) {
    const int64_t n = std::min(kSsmRowBlock, num_rows - row0);
    for (int64_t t = 0; t < n; ++t) {
      dt[t] = ssm_softplus(rows.dt[(row0 + t) * rows.dt_stride] + rows.dt_bias);
      decay[t] = std::exp(dt[t] * rows.a);
    }
    const SsmScanBlock block{rows.x + row0 * rows.x_stride, rows.x_stride, rows.b + row0 * rows.b_stride,
                             rows.b_stride, rows.c + row0 * rows.c_stride, rows.c_stride, dt, decay, rows.d,
                             rows.y + row0 * rows.y_stride, rows.y_stride, n};
    kernels.block(block, head_dim, d_state, state);
  }
}

void ssm_scan_chunked_with(const SsmScanKernels& kernels, const SsmScanRows& rows, int64_t num_rows,
                           int32_t head_dim, int32_t d_state, float* state, SsmScanScratch& scratch) {
  MET_CHECK(head_dim > 0 && head_dim <= scratch.max_head_dim_ && d_state > 0 && d_state <= scratch.max_d_state_,
            "ssm_scan_chunked: head_dim {}, d_state {}; scratch for {}, {}", head_dim, d_state,
            scratch.max_head_dim_, scratch.max_d_state_);
  if (num_rows <= 0) return;
  const SsmArrays a{scratch.st_,         scratch.bt_,    scratch.gram_,      scratch.dt_,
                    scratch.cum_.data(), scratch.exp_l_, scratch.exp_neg_l_, scratch.weight_};
  ssm_transpose(state, d_state, head_dim, d_state, a.st, head_dim);
  for (int64_t row0 = 0; row0 < num_rows; row0 += scratch.max_chunk_) {
    const SsmChunk ch{&rows, row0, std::min<int64_t>(scratch.max_chunk_, num_rows - row0), head_dim, d_state,
                      scratch.max_chunk_};
    ssm_chunk_prepare(kernels, ch, a);
    const SsmChunkDecay decay(a.cum, ch.n, a.exp_l, a.exp_neg_l);
    ssm_chunk_output(kernels, ch, a, decay);
    ssm_chunk_state(kernels, ch, a, decay);
  }
  ssm_transpose(a.st, head_dim, d_state, head_dim, state, d_state);
}

void ssm_scan_recurrent(const SsmScanRows& rows, int64_t num_rows, int32_t head_dim, int32_t d_state,
                        float* state) {
  ssm_scan_recurrent_with(selected_ssm_scan_kernels(), rows, num_rows, head_dim, d_state, state);
}

void ssm_scan_chunked(const SsmScanRows& rows, int64_t num_rows, int32_t head_dim, int32_t d_state, float* state,
                      SsmScanScratch& scratch) {
  ssm_scan_chunked_with(selected_ssm_scan_kernels(), rows, num_rows, head_dim, d_state, state, scratch);
}

}  // namespace met::cpu
