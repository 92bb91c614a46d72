// What the model tests share: a made model loaded, a CpuDevice sized for a test, one step run to
// its result, a fixed prompt, the logits at every position of one sequence
// fed in prefill chunks then one token per step, and the error measure the
// tolerances are stated in; a GGUF copied with one tensor dropped or
// replaced; the checks that a recurrent model's prefill does not depend on
// how it is cut into steps and that its steps rewound through the decode
// rollback ring are exact.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <span>
#include <vector>

#include "backend/device.h"
#include "model/cpu_device.h"
#include "model/model.h"
#include "model/random_model.h"
#include "testing/temp_dir.h"

namespace met::testing {

// make_random_model(spec) as dir/m.gguf, loaded; null (and a failed
// EXPECT) when either step fails.
std::unique_ptr<Model> make_and_load(const RandomModelSpec& spec, const TempDir& dir);

// A small model of `arch` (2 layers, width 256, 4 heads, 2 KV heads, FFN
// 512, vocab 600, seed 11): the reference tests' shape.
RandomModelSpec small_model_spec(Arch arch, GgmlType dtype);

// A small qwen35-family model with one MTP block (qwen35moe, qwen3next:
// with 4 experts, 2 used, and a shared expert), seed 17.
RandomModelSpec hybrid_spec(Arch arch, GgmlType dtype, uint32_t vocab);

// Block ids first, first + 1, …, first + n - 1.
std::vector<BlockId> block_range(int32_t first, int32_t n);

struct TestDeviceOptions {
  int num_threads = 2;
  int32_t num_kv_blocks = 16;
  GgmlType kv_dtype = GgmlType::kF32;
  ForwardLimits limits{.max_rows = 64, .max_outputs = 32, .max_seqs = 8};
  ForwardOptions forward{};
  int32_t state_rollback = 0;  // CpuDeviceOptions::state_rollback
  int32_t state_drafts = 0;    // CpuDeviceOptions::state_drafts
  int32_t num_adapter_slots = 0;  // CpuDeviceOptions::num_adapter_slots (forward.max_lora_rank sets the rank)
};

// EXPECTs that creation succeeds.
std::unique_ptr<CpuDevice> make_test_device(const Model& model, const TestDeviceOptions& options = {});

// Launches `plan` and awaits it, EXPECTing both to succeed.
StepResult run_step(Device& dev, const StepPlan& plan);

// Tokens (i * 37 + 5) % vocab, a prompt every test model accepts.
std::vector<TokenId> fixed_prompt(size_t n, uint32_t vocab);

// The logits after each of `tokens`: the first `prefill` go in chunks of
// `chunk` rows (an output per row), the rest one per step; the sequence
// reads and writes `table`, and state slot 0 when the device keeps
// recurrent state; it runs with `adapter_slot`'s adapter.
std::vector<std::vector<float>> logits_at_every_position(Device& dev, std::span<const TokenId> tokens,
                                                         int32_t prefill, int32_t chunk,
                                                         std::span<const BlockId> table,
                                                         int32_t adapter_slot = kNoAdapterSlot);

// Copies the GGUF `from` to `to`, leaving out tensor `drop` and writing
// `replace` (if named) as zero bytes of `replace_type` and shape `shape`.
void rewrite_gguf(const std::string& from, const std::string& to, const std::string& drop,
                  const std::string& replace = "", const std::vector<uint64_t>& shape = {},
                  GgmlType replace_type = GgmlType::kF32);

// Copies the GGUF `from` to `to` with metadata `key` set to `value`.
void rewrite_gguf_metadata(const std::string& from, const std::string& to, const std::string& key,
                           const GgufValue& value);

// A recurrent model's logits for a 45-token prompt whose first 37 tokens are
// prefilled in one chunk, in chunks of 8 and of 5, and one token per step:
// the same bits with the default (recurrent) forms, within float rounding
// (2e-5) of those with `chunked` (its chunked prefill forms on), and within
// 1e-4 of the double-precision reference either way.
void expect_prefill_chunkings_agree(const Model& model, const ForwardOptions& chunked);

// A recurrent model on a device keeping `rollback` >= 2 older state versions:
// a sequence that ran two tokens past position p (an over-run) and is run
// again from p gives, bit for bit, the logits of a device that never ran
// past p; a step from a position the ring no longer holds fails at await,
// naming it.
void expect_rewound_steps_are_exact(const Model& model, int32_t rollback);

// A recurrent model on a device keeping states for `drafts` drafts: a
// verify step of drafts + 1 rows (StepSeq::state_checkpoints) gives at each
// row, bit for bit, the logits of decoding those tokens one step at a time,
// and a sequence continued after any accepted prefix of them (a step from
// each position it covers, replaying the logged rows) gives the logits of a
// device that decoded only that prefix, as does its spill image that
// device's state, and a verify step from such a prefix (drafts >= 3) is
// itself exact after its own accepted prefix; a verify step with one draft
// more is refused, naming the limit.
void expect_verify_steps_rewind_exactly(const Model& model, int32_t drafts);

// max |ref - got| / max |ref|.
double relative_error(std::span<const float> ref, std::span<const float> got);
double relative_error(std::span<const double> ref, std::span<const float> got);

// EXPECTs every position's relative_error below `tolerance`, skipping the
// positions whose routing margin (ReferenceForward's, when `margins` is
// given) is below `min_margin`: near-ties a quantized path may break the
// other way. How many positions were compared, and the worst error.
struct LogitsAgreement {
  int compared = 0;
  double worst = 0;
};
LogitsAgreement expect_logits_agree(const std::vector<std::vector<float>>& ref,
                                    const std::vector<std::vector<float>>& got, double tolerance,
                                    std::span<const double> margins = {}, double min_margin = 0);

}  // namespace met::testing
