// Sampling flags shared by the commands that generate (`met run`, and the
// defaults of `met serve`): every field of SamplingParams that takes a plain
// value, named as llama.cpp's and vLLM's flags are. Checked by
// validate_sampling when the command runs.
// Threading: CLI setup only. Tested by tests/cli/sampling_flags_test.cc.
#pragma once

#include <CLI/CLI.hpp>

#include "sampling/sampling_params.h"

namespace met {

// Registers the flags on `cmd`; they write into `p`, which outlives it.
void add_sampling_flags(CLI::App& cmd, SamplingParams& p);

}  // namespace met
