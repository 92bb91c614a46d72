// The Device conformance suite: one driver that runs the same kind of
// random mixed plans on any Device (CpuDevice, FakeDevice, CudaDevice), and
// the checks every device must pass. A run interleaves sequences joining at
// different steps, prompts fed in chunks of different sizes, decode rows
// fed by the host or from the previous step's argmax (FeedFromRow, the step
// launched before that one is awaited, as the pipelined lane does), outputs
// of both kinds, and banned ids. Checked on every output as it comes back:
// the argmax is never banned, a logits row reads -inf at every banned id and
// its argmax is the logits' first maximum. Then, across runs: each sequence
// replayed alone (same chunks, tokens given explicitly) gives the same
// outputs (batch invariance, and FeedFromRow equal to feeding the token);
// two devices give the same outputs within a tolerance (0: bit for bit);
// a sequence's KV blocks read from one device and written into another at
// other block ids decode on as they do where they were.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/device.h"

namespace met::testing {

struct ConformanceOptions {
  int32_t num_seqs = 6;
  int32_t max_prompt = 40;
  int32_t max_chunk = 9;
  int32_t decode_steps = 10;
  int32_t extra_positions = 8;  // table room past the run, for expect_kv_moves_between_devices
  uint32_t seed = 1;
};

struct ConformanceOutput {
  int32_t position = 0;
  OutputKind kind = OutputKind::kLogits;
  std::vector<TokenId> banned;
  TokenId argmax = 0;
  std::vector<float> logits;  // kLogits only
};

struct ConformanceSeq {
  std::vector<BlockId> table;
  std::vector<TokenId> tokens;     // the input at each position, fed ones resolved
  std::vector<int32_t> chunks;     // rows it ran in each step it took part in
  std::vector<ConformanceOutput> outputs;
};

struct ConformanceRun {
  std::vector<ConformanceSeq> seqs;
  int64_t steps = 0;
  int64_t fed_rows = 0;     // rows fed from the previous step's argmax
  int64_t mixed_steps = 0;  // steps with prefill and decode rows together
};

// Runs random mixed plans on `dev` (a fresh one: block ids from 0 up),
// checking every output; the record of what ran and came back.
ConformanceRun run_mixed_plans(Device& dev, const ConformanceOptions& options);

// Each sequence of `run` alone on `dev` (fresh): its chunks, its tokens
// given, its outputs' kinds and bans; the record of that.
ConformanceRun replay_each_alone(Device& dev, const ConformanceRun& run);

// Every output of `a` and `b` agrees: the argmax always, the logits bit for
// bit when `tolerance` is 0, else within it (relative_error over the row).
void expect_same_outputs(const ConformanceRun& a, const ConformanceRun& b, double tolerance);

// Sequence 0 of `run` (run on `from`): its KV blocks are read from `from`
// and written into `to` at other block ids; `steps` more decode rows on
// each agree (as expect_same_outputs with `tolerance`).
void expect_kv_moves_between_devices(Device& from, Device& to, const ConformanceRun& run, int32_t steps,
                                     double tolerance);

}  // namespace met::testing
