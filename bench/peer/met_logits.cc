// met_logits: met's half of bench/peer/crosscheck.sh. Loads a GGUF with
// Model::load, runs the given token ids as one sequence at positions 0, 1, …
// on a CpuDevice (one step, or steps of --rows-per-step rows; logits for every
// row) and writes them as raw little-endian float32, row after row
// (tokens × vocab), the layout bench/peer/llama_logits.cc writes for llama.cpp.
//   met_logits MODEL.gguf --tokens 1,2,3 --threads 2 --kv-dtype f16 -o met.f32
// No BOS is added and no tokenizer is used: the ids go in as given.
// Threading: the main thread; the device runs the steps on its own threads.
// Tested by use (bench/peer/crosscheck.sh); a manual tool, not part of CI's checks.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backend/cpu/block_tokens.h"
#include "core/cpu_features.h"
#include "gguf/ggml_type.h"
#include "model/cpu_device.h"

namespace met::bench {
namespace {

struct Options {
  std::string model_path;
  std::vector<int32_t> tokens;
  std::string output_path;
  int threads = 2;
  std::string kv_dtype = "f16";
  int32_t rows_per_step = 0;  // 0: all tokens in one step
  std::string isa;            // empty: the best the CPU has
};

// The steps of one sequence over `tokens` at positions 0, 1, …: chunks of up
// to `rows_per_step` rows (the last chunk may be shorter), every row's logits
// back.
// With recurrent state (hybrid models), the sequence's is in slot 0.
std::vector<StepPlan> prefill_plans(const std::vector<int32_t>& tokens, int32_t rows_per_step, bool recurrent) {
  const int32_t n = static_cast<int32_t>(tokens.size());
  std::vector<BlockId> blocks;
  for (int32_t b = 0; b < (n + cpu::kBlockTokens - 1) / cpu::kBlockTokens; ++b) blocks.emplace_back(b);
  std::vector<StepPlan> plans;
  for (int32_t begin = 0; begin < n; begin += rows_per_step) {
    StepPlan plan;
    const int32_t rows = std::min(rows_per_step, n - begin);
    for (int32_t i = 0; i < rows; ++i) {
      plan.inputs.push_back(FeedToken{TokenId{tokens[static_cast<size_t>(begin + i)]}});
      plan.positions.push_back(begin + i);
      plan.outputs.push_back(OutputRow{i, OutputKind::kLogits});
    }
    plan.seqs.push_back(StepSeq{0, rows, begin, blocks, recurrent ? std::optional(StateSlotId(0)) : std::nullopt});
    plans.push_back(std::move(plan));
  }
  return plans;
}

Status run(const Options& o) {
  if (o.tokens.empty()) return invalid_argument("--tokens is empty");
  if (!o.isa.empty()) {
    const std::optional<Isa> isa = parse_isa(o.isa);
    if (!isa) return invalid_argument("--isa {} is not scalar, avx2, avxvnni, avx512 or amx", o.isa);
    MET_CHECK(set_isa_cap(*isa), "the ISA was fixed before main");
  }
  const std::optional<GgmlType> kv_dtype = parse_ggml_type(o.kv_dtype);
  if (!kv_dtype) return invalid_argument("--kv-dtype {} is not a GGML type name", o.kv_dtype);
  MET_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::load(o.model_path));
  const int32_t vocab = static_cast<int32_t>(model->hparams().vocab_size);
  for (int32_t t : o.tokens) {
    if (t < 0 || t >= vocab) return invalid_argument("token {} is outside the vocabulary of {}", t, vocab);
  }
  const int32_t n = static_cast<int32_t>(o.tokens.size());
  if (o.rows_per_step < 0) return invalid_argument("--rows-per-step must be >= 0");
  const int32_t rows_per_step = o.rows_per_step == 0 ? n : std::min(o.rows_per_step, n);
  CpuDeviceOptions dopt;
  dopt.num_threads = o.threads;
  dopt.kv_dtype = *kv_dtype;
  dopt.num_kv_blocks = (n + cpu::kBlockTokens - 1) / cpu::kBlockTokens;
  dopt.limits = ForwardLimits{.max_rows = rows_per_step, .max_outputs = rows_per_step, .max_seqs = 1};
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuDevice> dev, CpuDevice::create(*model, dopt));
  std::vector<float> logits;
  StepResult result;
  for (const StepPlan& plan : prefill_plans(o.tokens, rows_per_step, dev->info().num_state_slots > 0)) {
    MET_ASSIGN_OR_RETURN(Ticket ticket, dev->launch(plan));
    MET_RETURN_IF_ERROR(dev->await_result(ticket, result));
    logits.insert(logits.end(), result.logits.begin(),
                  result.logits.begin() + static_cast<ptrdiff_t>(plan.outputs.size()) * vocab);
  }
  std::FILE* f = std::fopen(o.output_path.c_str(), "wb");
  if (f == nullptr) return invalid_argument("cannot open {} for writing", o.output_path);
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(vocab);
  const size_t written = std::fwrite(logits.data(), sizeof(float), count, f);
  const bool closed = std::fclose(f) == 0;
  if (written != count || !closed) return invalid_argument("short write to {}", o.output_path);
  return ok_status();
}

}  // namespace
}  // namespace met::bench

int main(int argc, char** argv) {
  met::bench::Options o;
  CLI::App app{"met's logits for every position of a token list, as raw float32"};
  app.add_option("model", o.model_path, "GGUF model")->required();
  app.add_option("--tokens", o.tokens, "Token ids, comma-separated")->delimiter(',')->required();
  app.add_option("-o,--output", o.output_path, "Output file (tokens × vocab float32)")->required();
  app.add_option("--threads", o.threads, "Compute threads")->capture_default_str();
  app.add_option("--rows-per-step", o.rows_per_step,
                 "Rows per forward step (1: token by token, as decode runs); 0: all in one step")
      ->capture_default_str();
  app.add_option("--isa", o.isa, "Cap the kernels' ISA tier (scalar, avx2, avxvnni, avx512, amx), as met's --isa does");
  app.add_option("--kv-dtype", o.kv_dtype, "KV cache type: f16, bf16, f32 or q8_0")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const met::Status s = met::bench::run(o);
  if (!s.ok()) {
    std::fprintf(stderr, "met_logits: %s\n", s.to_string().c_str());
    return 1;
  }
  return 0;
}
