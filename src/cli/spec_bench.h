// SpecBench: `met bench --spec`'s batch-1 figures for speculative decoding,
// as a client sees them (no HTTP): one request at a time, greedy, on two
// engines over the same model, one without speculation and one with the
// engine flags' (prompt lookup, a draft model, the draft budget). Per
// workload: decode tok/s of each (the output's tokens after the first over
// the time from the first to the last), their ratio, and the drafts verified
// and accepted. Workloads:
//  - free: a random prompt, the model's own continuation (a draft model,
//    or prompt lookup on what the output repeats);
//  - predicted: OpenAI's Predicted Outputs, the prediction being the plain
//    engine's output for the same prompt (accepted whole);
//  - edited: that prediction with `edits` tokens replaced, evenly spaced
//    (OpenAI's case of rewriting a text with a few changes);
//  - quoted: no prediction; the prompt is the random prompt, its plain
//    output and the random prompt again, so a model whose next token follows
//    its last ones (`make-model --branch-scale`, or a trained model asked to
//    repeat a text) quotes its prompt: prompt lookup's workload. The figure
//    says how many of the output's first tokens are the quoted ones. Where
//    its prompt and output would not fit the context, it is skipped, saying
//    so (the other workloads stand).
// Each workload runs plain then speculative, `repeats` times interleaved, and
// keeps the median of each. The speculative output must be the plain one,
// token for token; a difference is an error (nothing is reported).
// Threading: the caller's. Tested by tests/cli/bench_command_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/cpu_engine.h"

namespace met {

struct SpecBenchOptions {
  int32_t prompt_tokens = 64;
  int32_t gen_tokens = 256;
  int32_t edits = 3;
  int32_t repeats = 1;
  uint64_t seed = 1;
};

struct SpecWorkloadFigures {
  std::string name;
  int64_t output_tokens = 0;
  double plain_tok_s = 0;
  double spec_tok_s = 0;
  int64_t drafted = 0;   // drafts verified (the last repeat)
  int64_t accepted = 0;  // of them, accepted
  int64_t quoted_prefix = -1;  // quoted: the output's first tokens that are the quoted text's; else -1
};

struct SpecReport {
  std::vector<SpecWorkloadFigures> workloads;
  std::string skipped;  // why the quoted workload did not run (it needs 2 x prompt + 2 x output tokens), or empty
};

// Checks the options alone; messages name the flag and the value.
Status validate_spec_bench(const SpecBenchOptions& o);

Result<SpecReport> run_spec_bench(CpuEngine& plain, CpuEngine& spec, const SpecBenchOptions& o);

nlohmann::json spec_report_json(const SpecReport& r);
// One line per workload.
std::string spec_report_table(const SpecReport& r);

}  // namespace met
