// The gated delta rule of Qwen3.5-class linear-attention layers, for one
// value head of one sequence: a recurrent form (token by token: decode, and
// the definition) and a chunked (WY / UT-transform) form for prefill.
// Per row, with q and k L2-normalised, g <= 0 the log decay and beta in
// (0, 1], the head_dim x head_dim state S (key i, value j) evolves as
//   S <- exp(g) S;  kv[j] = sum_i S[i][j] k[i];  delta[j] = beta (v[j] - kv[j]);
//   S[i][j] += k[i] delta[j];  out[j] = scale sum_i S[i][j] q[i],
// scale = 1 / sqrt(head_dim). The state is stored transposed, as ggml does:
// state[j * head_dim + i] = S[i][j] (row j contiguous over keys).
// Which key head a value head reads (h % num_k_heads) is the caller's.
// Invariants: both forms compute the same function up to float rounding;
// the state after a call is the state after its last row, so a sequence
// may be cut into calls anywhere. Bit for bit: the recurrent form wherever
// it is cut; the chunked form when cut at multiples of its chunk size
// (elsewhere the chunks differ, and so does the rounding). out must not
// overlap any input.
// Threading: pure functions over the head given; a GatedDeltaScratch
// belongs to one thread at a time. No allocation after the scratch is built.
// Tested by tests/backend/gated_delta_test.cc.
#pragma once

#include <cstdint>
#include <vector>

namespace met::cpu {

// One value head's rows of a sequence; pointers already at that head's slice.
struct GatedDeltaRows {
  const float* q = nullptr;  // row r at q + r*q_stride (head_dim floats, L2-normalised, unscaled)
  int64_t q_stride = 0;
  const float* k = nullptr;
  int64_t k_stride = 0;
  const float* v = nullptr;
  int64_t v_stride = 0;
  const float* g = nullptr;  // g[r*gb_stride]: log decay, <= 0
  const float* beta = nullptr;  // beta[r*gb_stride]: post-sigmoid
  int64_t gb_stride = 0;
  float* out = nullptr;  // row r at out + r*out_stride, head_dim floats
  int64_t out_stride = 0;
};

// The same rows from row r on.
inline GatedDeltaRows rows_from(GatedDeltaRows rows, int64_t r) {
  rows.q += r * rows.q_stride;
  rows.k += r * rows.k_stride;
  rows.v += r * rows.v_stride;
  rows.g += r * rows.gb_stride;
  rows.beta += r * rows.gb_stride;
  rows.out += r * rows.out_stride;
  return rows;
}

// Token by token. state: head_dim*head_dim floats, transposed as above,
// updated in place.
void gated_delta_recurrent(const GatedDeltaRows& rows, int64_t num_rows, int32_t head_dim, float* state);

struct GatedDeltaKernels;  // gated_delta_kernels.h

// Working memory of the chunked form, sized once for chunks of at most
// max_chunk rows and heads of at most max_head_dim; one per thread.
class GatedDeltaScratch {
 public:
  GatedDeltaScratch(int32_t max_chunk, int32_t max_head_dim);
  // Moves keep buffer_'s storage (and so the array pointers); a copy would not.
  GatedDeltaScratch(GatedDeltaScratch&&) noexcept = default;
  GatedDeltaScratch& operator=(GatedDeltaScratch&&) noexcept = default;
  GatedDeltaScratch(const GatedDeltaScratch&) = delete;
  GatedDeltaScratch& operator=(const GatedDeltaScratch&) = delete;

  int32_t max_chunk() const { return max_chunk_; }
  int32_t max_head_dim() const { return max_head_dim_; }

 private:
  friend void gated_delta_chunked_with(const GatedDeltaKernels& kernels, const GatedDeltaRows& rows,
                                       int64_t num_rows, int32_t head_dim, float* state,
                                       GatedDeltaScratch& scratch);

  int32_t max_chunk_;
  int32_t max_head_dim_;
  std::vector<float> buffer_;  // the arrays below, each padded to 16 floats
  float* s_;       // [head_dim][head_dim]: the state untransposed, S[i][j]
  float* kt_;      // [head_dim][max_chunk]: the chunk's keys, transposed
  float* gram_k_;  // [max_chunk][max_chunk]: k_t . k_s, then -A of the solve
  float* gram_q_;  // [max_chunk][max_chunk]: q_t . k_s, then the output's P
  float* t_;       // [max_chunk][max_chunk]: (I + A)^-1
  float* bv_;      // [max_chunk][head_dim]: beta_t v_t
  float* bk_;      // [max_chunk][head_dim]: -beta_t e^G_t k_t
  float* u_;       // [max_chunk][head_dim]: T bv, then the new values U
  float* w_;       // [max_chunk][head_dim]: T bk
  float* g_;       // [max_chunk]: cumulative log decay G_t within the chunk
  float* exp_g_;      // [max_chunk]: e^G_t
  float* exp_neg_g_;  // [max_chunk]: e^-G_t (when it cannot overflow)
};

// Chunked form for prefill, chunks of at most scratch.max_chunk() rows;
// the recurrent form's results up to float rounding, state carried across
// calls. REQUIRES: head_dim <= scratch.max_head_dim().
void gated_delta_chunked(const GatedDeltaRows& rows, int64_t num_rows, int32_t head_dim, float* state,
                         GatedDeltaScratch& scratch);

}  // namespace met::cpu
