// Mamba2's selective scan (ggml_ssm_scan with a scalar A per head) for one
// head of one sequence: a recurrent form (token by token: decode, and the
// definition) and the SSD chunked form for prefill. Per row t, with x the
// head's head_dim values, B and C its group's d_state values and A <= 0:
//   dt = softplus(dt_raw + dt_bias)  (v above 20, else log1p(e^v); ggml
//        takes log(1 + e^v), which is 0 in float below about v = -17),
//   S[p][n] <- e^(dt A) S[p][n] + dt x[p] B[n],
//   y[p] = sum_n S[p][n] C[n] + D x[p],
// for p < head_dim, n < d_state. The state is ggml's layout, d_state
// fastest: state[p * d_state + n] = S[p][n] (one head's slice of
// {d_state, head_dim, n_head}). The D skip (llama.cpp's graph adds x * D
// after ggml_ssm_scan) is in here: D = 0 leaves the scan alone.
// Head h reads group ssm_group_of_head(h) = h / (n_head / n_group): runs of
// consecutive heads share a group (ggml's repeat_interleave; not the modulo
// the gated delta rule uses). The rest of the layer is the forward pass's:
// llama.cpp gates first, y * silu(z), then RMS-normalises each group's
// d_inner / n_group values (ssm_norm), then ssm_out.
// Invariants: both forms compute the same function up to float rounding;
// the state after a call is the state after its last row, so a sequence
// may be cut into calls anywhere. Bit for bit: the recurrent form wherever
// it is cut; the chunked form when cut at multiples of its chunk size
// (elsewhere the chunks differ, and so does the rounding). y must not
// overlap any input.
// Threading: pure functions over the head given (heads are independent:
// threads split by head); an SsmScanScratch belongs to one thread at a time.
// No allocation after the scratch is built.
// Tested by tests/backend/ssm_scan_test.cc.
#pragma once

#include <cstdint>
#include <vector>

namespace met::cpu {

// The group of B and C that head `head` of `num_heads` reads, of `num_groups`.
// REQUIRES: num_heads % num_groups == 0.
constexpr int32_t ssm_group_of_head(int32_t head, int32_t num_heads, int32_t num_groups) {
  return head / (num_heads / num_groups);
}

// One head's rows of a sequence; pointers already at that head's slice.
struct SsmScanRows {
  const float* x = nullptr;  // row r at x + r*x_stride: head_dim floats (xBC after conv and SiLU)
  int64_t x_stride = 0;
  const float* b = nullptr;  // row r at b + r*b_stride: d_state floats of the head's group
  int64_t b_stride = 0;
  const float* c = nullptr;  // row r at c + r*c_stride: d_state floats of the head's group
  int64_t c_stride = 0;
  const float* dt = nullptr;  // dt[r*dt_stride]: the projection's dt, before dt_bias
  int64_t dt_stride = 0;
  float dt_bias = 0.0f;  // ssm_dt.bias[h]
  float a = 0.0f;        // ssm_a[h] = -exp(A_log), <= 0
  float d = 0.0f;        // ssm_d[h]: y += d * x
  float* y = nullptr;    // row r at y + r*y_stride, head_dim floats
  int64_t y_stride = 0;
};

// The same rows from row r on.
inline SsmScanRows rows_from(SsmScanRows rows, int64_t r) {
  rows.x += r * rows.x_stride;
  rows.b += r * rows.b_stride;
  rows.c += r * rows.c_stride;
  rows.dt += r * rows.dt_stride;
  rows.y += r * rows.y_stride;
  return rows;
}

// Token by token. state: head_dim*d_state floats as above, updated in place.
void ssm_scan_recurrent(const SsmScanRows& rows, int64_t num_rows, int32_t head_dim, int32_t d_state, float* state);

struct SsmScanKernels;  // ssm_scan_kernels.h

// Working memory of the chunked form, sized once for chunks of at most
// max_chunk rows and heads of at most max_head_dim x max_d_state; one per
// thread. Chunks of 32 to 64 rows are the fastest for Mamba2's heads (64 x
// 128): the Gram matrix C B^T costs chunk x d_state per row.
class SsmScanScratch {
 public:
  SsmScanScratch(int32_t max_chunk, int32_t max_head_dim, int32_t max_d_state);
  // Moves keep buffer_'s storage (and so the array pointers); a copy would not.
  SsmScanScratch(SsmScanScratch&&) noexcept = default;
  SsmScanScratch& operator=(SsmScanScratch&&) noexcept = default;
  SsmScanScratch(const SsmScanScratch&) = delete;
  SsmScanScratch& operator=(const SsmScanScratch&) = delete;

  int32_t max_chunk() const { return max_chunk_; }
  int32_t max_head_dim() const { return max_head_dim_; }
  int32_t max_d_state() const { return max_d_state_; }

 private:
  friend void ssm_scan_chunked_with(const SsmScanKernels& kernels, const SsmScanRows& rows, int64_t num_rows,
                                    int32_t head_dim, int32_t d_state, float* state, SsmScanScratch& scratch);

  int32_t max_chunk_;
  int32_t max_head_dim_;
  int32_t max_d_state_;
  std::vector<float> buffer_;  // the float arrays below, each padded to 16 floats
  std::vector<double> cum_;    // [max_chunk]: cumulative log decay L_t = sum_{s <= t} dt_s A within the chunk,
                               // in double: e^(L_t - L_s) of two large L would lose digits in float
  float* st_;      // [d_state][head_dim]: the state transposed, S[p][n] at st_[n * head_dim + p]
  float* bt_;      // [d_state][max_chunk]: the chunk's B transposed, then scaled for the state update
  float* gram_;    // [max_chunk][max_chunk]: C_t . B_s, then the output's mixing matrix
  float* dt_;      // [max_chunk]: softplus'd dt per row
  float* exp_l_;      // [max_chunk]: e^L_t
  float* exp_neg_l_;  // [max_chunk]: e^-L_t (when it cannot overflow)
  float* weight_;     // [max_chunk]: e^(L_(n-1) - L_s) dt_s, B^T's column scales for the state
};

// Chunked (SSD) form for prefill, chunks of at most scratch.max_chunk()
// rows; the recurrent form's results up to float rounding, state carried
// across calls. REQUIRES: head_dim <= scratch.max_head_dim(), d_state <=
// scratch.max_d_state().
void ssm_scan_chunked(const SsmScanRows& rows, int64_t num_rows, int32_t head_dim, int32_t d_state, float* state,
                      SsmScanScratch& scratch);

}  // namespace met::cpu
