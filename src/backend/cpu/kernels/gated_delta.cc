// gated_delta.h's two forms: the recurrent one loops over the selected
// tier's step; the chunked one is the UT transform of the delta rule, per
// chunk of n rows (t, s < n), with G_t = sum_{s <= t} g_s and the state
// S0 at the chunk's start (held untransposed, S[i][j], for the whole call):
//   A[t][s] = beta_t e^(G_t - G_s) k_t.k_s (s < t),  T = (I + A)^-1,
//   U = T diag(beta) V - T diag(beta e^G) K S0       (the rows' deltas),
//   out_t = scale (e^G_t q_t S0 + sum_{s <= t} e^(G_t - G_s) (q_t.k_s) U_s),
//   S = e^G_(n-1) S0 + sum_s e^(G_(n-1) - G_s) k_s^T U_s.
// The products (T too, a row at a time) go through the tier's gemm; G, the
// decays, the Gram scalings and the transposes are scalar here. Every
// e^(G_t - G_s) <= 1 since g <= 0; it is e^G_t e^-G_s when the chunk's
// total decay stays above e^-80 (no overflow), one exp per pair otherwise.
// Scratch use is in gated_delta.h; nothing is allocated per call.
// Threading: pure functions; the selected table is built once
// (function-local static). Tested by tests/backend/gated_delta_test.cc.
#include "backend/cpu/kernels/gated_delta.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/gated_delta_kernels.h"
#include "backend/cpu/kernels/reference/gated_delta_ref.h"
#include "core/check.h"

namespace met::cpu {
namespace {

constexpr GatedDeltaKernels kGatedDeltaReference{ref::gated_delta_step, ref::gated_delta_gemm};
constexpr GatedDeltaKernels kGatedDeltaAvx2{avx2::gated_delta_step, avx2::gated_delta_gemm};
constexpr GatedDeltaKernels kGatedDeltaAvx512{avx512::gated_delta_step, avx512::gated_delta_gemm};

GatedDeltaKernels build_selected_gated_delta(Isa selected) {
  GatedDeltaKernels out = kGatedDeltaReference;
  for (Isa tier : {Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    if (tier > selected) break;
    const GatedDeltaKernels k = gated_delta_kernels_for_isa(tier);
    if (k.step != nullptr) out.step = k.step;
    if (k.gemm != nullptr) out.gemm = k.gemm;
  }
  return out;
}

int64_t padded16(int64_t n) { return (n + 15) / 16 * 16; }

float gdn_scale(int32_t head_dim) { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }

// The chunk of rows [row0, row0 + n) of a call, and where its arrays live.
struct GdnChunk {
  const GatedDeltaRows* rows;
  int64_t row0;
  int64_t n;
  int64_t d;
  int64_t ldn;  // leading dimension of the [.][max_chunk] arrays
  const float* q() const { return rows->q + row0 * rows->q_stride; }
  const float* k() const { return rows->k + row0 * rows->k_stride; }
  const float* v(int64_t t) const { return rows->v + (row0 + t) * rows->v_stride; }
  float g(int64_t t) const { return rows->g[(row0 + t) * rows->gb_stride]; }
  float beta(int64_t t) const { return rows->beta[(row0 + t) * rows->gb_stride]; }
  float* out() const { return rows->out + row0 * rows->out_stride; }
};

// e^(G_t - G_s) for s <= t, from the chunk's cumulative decays.
class ChunkDecay {
 public:
  ChunkDecay(const float* cum, int64_t n, float* exp_pos, float* exp_neg)
      : cum_(cum), exp_pos_(exp_pos), exp_neg_(exp_neg), split_(cum[n - 1] >= -80.0f) {
    for (int64_t t = 0; t < n; ++t) {
      exp_pos_[t] = std::exp(cum[t]);
      exp_neg_[t] = split_ ? std::exp(-cum[t]) : 0.0f;
    }
  }
  float between(int64_t t, int64_t s) const {
    return split_ ? exp_pos_[t] * exp_neg_[s] : std::exp(cum_[t] - cum_[s]);
  }
  float from_start(int64_t t) const { return exp_pos_[t]; }

 private:
  const float* cum_;
  float* exp_pos_;
  float* exp_neg_;
  bool split_;
};

// t = (I + A)^-1 from neg_a = -A, strictly lower triangular (rows of ld
// floats; the rest is not read), by rows: t_r = e_r - A_r t = e_r +
// sum_{x < r} neg_a[r][x] t_x, one row of gemm each. Writes all n columns
// of t's n rows (zero above the diagonal).
void invert_unit_lower(const GatedDeltaKernels& kern, const float* neg_a, int64_t n, int64_t ld, float* t) {
  for (int64_t r = 0; r < n; ++r) {
    float* row = t + r * ld;
    std::fill(row, row + n, 0.0f);
    if (r > 0) kern.gemm(1, r, r, neg_a + r * ld, ld, t, ld, row, ld, false, false);
    row[r] = 1.0f;
  }
}

// out[c * ld_out + r] = in[r * ld_in + c], in 16 x 16 tiles: a column of
// writes 512 bytes apart would keep landing in the same few L1 sets.
void transpose_tiles(const float* in, int64_t ld_in, int64_t rows, int64_t cols, float* out, int64_t ld_out) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) out[c * ld_out + r] = in[r * ld_in + c];
      }
    }
  }
}

// The scratch arrays of one call (GatedDeltaScratch's, see gated_delta.h).
struct GdnArrays {
  float* s;
  float* kt;
  float* gram_k;
  float* gram_q;
  float* t;
  float* bv;
  float* bk;
  float* u;
  float* w;
  float* cum;
  float* exp_g;
  float* exp_neg_g;
};

// G, k^T and the Gram matrices k_t.k_s and q_t.k_s of the chunk.
void chunk_prepare(const GatedDeltaKernels& kern, const GdnChunk& c, const GdnArrays& a) {
  double cum = 0.0;
  for (int64_t t = 0; t < c.n; ++t) {
    MET_DCHECK(c.g(t) <= 0.0f, "gated_delta_chunked: log decay {} > 0 at row {}", c.g(t), c.row0 + t);
    cum += c.g(t);
    a.cum[t] = static_cast<float>(cum);
  }
  const float* k = c.k();
  transpose_tiles(k, c.rows->k_stride, c.n, c.d, a.kt, c.ldn);
  kern.gemm(c.n, c.n, c.d, k, c.rows->k_stride, a.kt, c.ldn, a.gram_k, c.ldn, false, false);
  kern.gemm(c.n, c.n, c.d, c.q(), c.rows->q_stride, a.kt, c.ldn, a.gram_q, c.ldn, false, false);
}

// U = T (beta V) - T (beta e^G K) S0 into a.u, T = (I + A)^-1 (gram_k
// becomes -A).
void chunk_values(const GatedDeltaKernels& kern, const GdnChunk& c, const GdnArrays& a, const ChunkDecay& decay) {
  for (int64_t t = 0; t < c.n; ++t) {
    const float beta = c.beta(t);
    for (int64_t s = 0; s < t; ++s) a.gram_k[t * c.ldn + s] *= -beta * decay.between(t, s);
    const float* v = c.v(t);
    const float* k = c.k() + t * c.rows->k_stride;
    const float kscale = -beta * decay.from_start(t);
    for (int64_t j = 0; j < c.d; ++j) {
      a.bv[t * c.d + j] = beta * v[j];
      a.bk[t * c.d + j] = kscale * k[j];
    }
  }
  invert_unit_lower(kern, a.gram_k, c.n, c.ldn, a.t);
  kern.gemm(c.n, c.d, c.n, a.t, c.ldn, a.bv, c.d, a.u, c.d, false, true);
  kern.gemm(c.n, c.d, c.n, a.t, c.ldn, a.bk, c.d, a.w, c.d, false, true);
  kern.gemm(c.n, c.d, c.d, a.w, c.d, a.s, c.d, a.u, c.d, true, false);
}

// out_t = scale (e^G_t q_t S0 + sum_{s <= t} e^(G_t - G_s) (q_t.k_s) U_s).
void chunk_output(const GatedDeltaKernels& kern, const GdnChunk& c, const GdnArrays& a, const ChunkDecay& decay,
                  float scale) {
  float* out = c.out();
  const int64_t ldo = c.rows->out_stride;
  kern.gemm(c.n, c.d, c.d, c.q(), c.rows->q_stride, a.s, c.d, out, ldo, false, false);
  for (int64_t t = 0; t < c.n; ++t) {
    const float row_scale = scale * decay.from_start(t);
    for (int64_t j = 0; j < c.d; ++j) out[t * ldo + j] *= row_scale;
    for (int64_t s = 0; s <= t; ++s) a.gram_q[t * c.ldn + s] *= scale * decay.between(t, s);
  }
  kern.gemm(c.n, c.d, c.n, a.gram_q, c.ldn, a.u, c.d, out, ldo, true, true);
}

// S = e^G_(n-1) S0 + sum_s e^(G_(n-1) - G_s) k_s^T U_s.
void chunk_state(const GatedDeltaKernels& kern, const GdnChunk& c, const GdnArrays& a, const ChunkDecay& decay) {
  const int64_t last = c.n - 1;
  for (int64_t i = 0; i < c.d; ++i) {
    for (int64_t s = 0; s < c.n; ++s) a.kt[i * c.ldn + s] *= decay.between(last, s);
  }
  const float total = decay.from_start(last);
  for (int64_t x = 0; x < c.d * c.d; ++x) a.s[x] *= total;
  kern.gemm(c.d, c.d, c.n, a.kt, c.ldn, a.u, c.d, a.s, c.d, true, false);
}

}  // namespace

GatedDeltaKernels gated_delta_kernels_for_isa(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return kGatedDeltaReference;
    case Isa::kAvx2:
      return kGatedDeltaAvx2;
    case Isa::kAvxVnni:
      return {};  // AVX2's serve
    case Isa::kAvx512:
      return kGatedDeltaAvx512;
    case Isa::kAmx:
      return {};  // AVX-512's serve
  }
  return {};
}

const GatedDeltaKernels& selected_gated_delta_kernels() {
  static const GatedDeltaKernels kernels = build_selected_gated_delta(selected_isa());
  return kernels;
}

GatedDeltaScratch::GatedDeltaScratch(int32_t max_chunk, int32_t max_head_dim)
    : max_chunk_(max_chunk), max_head_dim_(max_head_dim) {
  MET_CHECK(max_chunk > 0 && max_head_dim > 0, "GatedDeltaScratch({}, {})", max_chunk, max_head_dim);
  const int64_t n = max_chunk, d = max_head_dim;
  const int64_t sizes[] = {d * d, d * n, n * n, n * n, n * n, n * d, n * d, n * d, n * d, n, n, n};
  int64_t total = 0;
  for (const int64_t s : sizes) total += padded16(s);
  buffer_.assign(static_cast<size_t>(total), 0.0f);
  float* p = buffer_.data();
  float** slots[] = {&s_, &kt_, &gram_k_, &gram_q_, &t_, &bv_, &bk_, &u_, &w_, &g_, &exp_g_, &exp_neg_g_};
  for (size_t i = 0; i < std::size(slots); ++i) {
    *slots[i] = p;
    p += padded16(sizes[i]);
  }
}

void gated_delta_recurrent_with(const GatedDeltaKernels& kernels, const GatedDeltaRows& rows, int64_t num_rows,
                                int32_t head_dim, float* state) {
  const float scale = gdn_scale(head_dim);
  for (int64_t r = 0; r < num_rows; ++r) {
    const float decay = std::exp(rows.g[r * rows.gb_stride]);
    kernels.step(rows.q + r * rows.q_stride, rows.k + r * rows.k_stride, rows.v + r * rows.v_stride, decay,
                 rows.beta[r * rows.gb_stride], scale, head_dim, state, rows.out + r * rows.out_stride);
  }
}

void gated_delta_chunked_with(const GatedDeltaKernels& kernels, const GatedDeltaRows& rows, int64_t num_rows,
                              int32_t head_dim, float* state, GatedDeltaScratch& scratch) {
  MET_CHECK(head_dim > 0 && head_dim <= scratch.max_head_dim_, "gated_delta_chunked: head_dim {}, scratch for {}",
            head_dim, scratch.max_head_dim_);
  if (num_rows <= 0) return;
  const GdnArrays a{scratch.s_,  scratch.kt_, scratch.gram_k_, scratch.gram_q_, scratch.t_,     scratch.bv_,
                    scratch.bk_, scratch.u_,  scratch.w_,      scratch.g_,      scratch.exp_g_, scratch.exp_neg_g_};
  const int64_t d = head_dim;
  const float scale = gdn_scale(head_dim);
  transpose_tiles(state, d, d, d, a.s, d);
  for (int64_t row0 = 0; row0 < num_rows; row0 += scratch.max_chunk_) {
    const GdnChunk c{&rows, row0, std::min<int64_t>(scratch.max_chunk_, num_rows - row0), d, scratch.max_chunk_};
    chunk_prepare(kernels, c, a);
    const ChunkDecay decay(a.cum, c.n, a.exp_g, a.exp_neg_g);
    chunk_values(kernels, c, a, decay);
    chunk_output(kernels, c, a, decay, scale);
    chunk_state(kernels, c, a, decay);
  }
  transpose_tiles(a.s, d, d, d, state, d);
}

void gated_delta_recurrent(const GatedDeltaRows& rows, int64_t num_rows, int32_t head_dim, float* state) {
  gated_delta_recurrent_with(selected_gated_delta_kernels(), rows, num_rows, head_dim, state);
}

void gated_delta_chunked(const GatedDeltaRows& rows, int64_t num_rows, int32_t head_dim, float* state,
                         GatedDeltaScratch& scratch) {
  gated_delta_chunked_with(selected_gated_delta_kernels(), rows, num_rows, head_dim, state, scratch);
}

}  // namespace met::cpu
