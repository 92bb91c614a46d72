// The prefill ceiling `met bench` gives beside its prefill figure on the CPU
// device: a token's matmul MACs by weight type (matmul_macs_per_token)
// over the peak rate of the instruction each type's kernels are built on
// (backend/cpu/compute_peak.h), measured now on the bench's threads. It
// leaves out attention, norms and the rest, so it is a bound the figure
// approaches; for the batch-1 decode figures the bound is memory's.
// Threading: one call at a time (the measurement spawns its own threads).
// Tested by tests/cli/bench_command_test.cc.
#pragma once

#include <span>
#include <string>

#include "gguf/gguf_file.h"
#include "model/hparams.h"

namespace met {

struct PrefillBound {
  double macs_per_token = 0;
  double ceiling_tok_s = 0;  // 0: no peak on this tier (scalar)
  // The instruction behind most of the MACs and its measured rate.
  std::string instruction;
  double mac_rate = 0;
};

PrefillBound cpu_prefill_bound(std::span<const GgufTensorInfo> tensors, const ModelHParams& hparams,
                               int num_threads);

}  // namespace met
