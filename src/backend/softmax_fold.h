// The merge of two softmax partials (m = max score, l = sum exp(score - m),
// acc = sum exp(score - m) * v) and the division that ends one: the one
// definition that the CPU's paged attention (cpu/kernels/attention.cc) and
// the CUDA backend's split-KV merge both run, element by element, so a row's
// attention folds its partitions with the same arithmetic on either device.
// Every step is written out (exp, then an fma of the product): no
// contraction changes it between compilers.
// Threading: pure functions. Tested by tests/backend/softmax_fold_test.cc and
// through attention_test.cc.
#pragma once

#include <cmath>

#include "backend/hd.h"

namespace met {

// What total (+) part scales each side by, and the merged max.
struct FoldWeights {
  float m = 0.0f;
  float total_scale = 0.0f;  // exp(total.m - m)
  float part_scale = 0.0f;   // exp(part.m - m)
};

MET_HD inline FoldWeights fold_weights(float total_m, float part_m) {
  const float m = total_m < part_m ? part_m : total_m;  // std::max's choice
  return {m, std::exp(total_m - m), std::exp(part_m - m)};
}

// One term of the fold: total's l, or one element of its acc.
MET_HD inline float fold_term(float total, float part, const FoldWeights& w) {
  return std::fma(total, w.total_scale, part * w.part_scale);
}

// A folded total with one more logit, `sink`, in the softmax (gpt-oss's
// attention sinks): it joins the max and the denominator and has no value.
// out[d] = acc[d] * acc_scale / l.
struct SinkWeights {
  float acc_scale = 0.0f;
  float l = 0.0f;
};

MET_HD inline SinkWeights sink_weights(float total_m, float total_l, float sink) {
  const float m = total_m < sink ? sink : total_m;
  const float a = std::exp(total_m - m);
  return {a, std::fma(total_l, a, std::exp(sink - m))};
}

}  // namespace met
