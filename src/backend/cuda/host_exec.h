// HostExec: the grid forward pass's executor on the host (forward_program.h):
// for_each loops over the indices, matmul sums each product in float with
// fmaf in column order (as the CUDA GEMV's lanes do within their stride,
// though not in the same order). It runs the very ops a GPU runs, so the
// grid program is tested on any machine.
// Threading: one caller. Tested by tests/model/grid_device_test.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cuda/forward_program.h"

namespace met::cuda {

class HostExec {
 public:
  template <class Op>
  void for_each(int64_t n, const Op& op) {
    for (int64_t i = 0; i < n; ++i) op(i);
  }

  // Each weight row is decoded once and used for every activation row.
  void matmul(const MatrixRef& w, const float* x, int64_t rows, float* y) {
    decoded_.resize(static_cast<size_t>(w.cols));
    for (int64_t j = 0; j < w.rows; ++j) {
      const uint8_t* row = w.data + j * w.row_bytes;
      for (int64_t c = 0; c < w.cols; ++c) decoded_[static_cast<size_t>(c)] = weight_element(w.type, row, c);
      for (int64_t r = 0; r < rows; ++r) {
        float sum = 0.0f;
        for (int64_t c = 0; c < w.cols; ++c) sum = std::fma(decoded_[static_cast<size_t>(c)], x[r * w.cols + c], sum);
        y[r * w.rows + j] = sum;
      }
    }
  }

 private:
  std::vector<float> decoded_;
};

}  // namespace met::cuda
