// `met run MODEL.gguf --prompt "…"`: one prompt, straight on a CpuDevice (no
// engine yet): the continuation goes to stdout and nothing else; prefill and
// decode speeds go to stderr. Tested by tests/cli/run_command_test.cc.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/parallel_for.h"
#include "model/cpu_device.h"
#include "sampling/sampler.h"
#include "tokenizer/incremental_detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace met {
namespace {

struct RunOptions {
  std::string model_path;
  std::string prompt;
  int32_t num_predict = 128;
  SamplingParams sampling{.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .seed = 0};
  int threads = 0;
  std::string kv_dtype = "f16";
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs the prompt through the device in chunks; returns the last row's logits.
Status prefill(Device& dev, const std::vector<TokenId>& prompt, const std::vector<BlockId>& blocks,
               int32_t max_rows, StepResult& result) {
  StepPlan plan;
  for (size_t begin = 0; begin < prompt.size(); begin += static_cast<size_t>(max_rows)) {
    const size_t end = std::min(prompt.size(), begin + static_cast<size_t>(max_rows));
    plan.clear();
    for (size_t i = begin; i < end; ++i) {
      plan.inputs.push_back(FeedToken{prompt[i]});
      plan.positions.push_back(static_cast<int32_t>(i));
    }
    plan.seqs.push_back(StepSeq{0, static_cast<int32_t>(end - begin), static_cast<int32_t>(begin), blocks});
    plan.outputs.push_back(OutputRow{static_cast<int32_t>(end - begin - 1), OutputKind::kLogits});
    MET_ASSIGN_OR_RETURN(Ticket t, dev.launch(plan));
    MET_RETURN_IF_ERROR(dev.await_result(t, result));
  }
  return ok_status();
}

Status run(const RunOptions& o) {
  MET_RETURN_IF_ERROR(validate_sampling(o.sampling));
  if (o.num_predict < 0) return invalid_argument("-n {} must be >= 0", o.num_predict);
  std::optional<GgmlType> kv_dtype = parse_ggml_type(o.kv_dtype);
  if (!kv_dtype) return invalid_argument("--kv-dtype '{}' is not a type", o.kv_dtype);
  MET_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::load(o.model_path));
  MET_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(model->file().metadata()));
  std::vector<TokenId> prompt = tok.encode(o.prompt, EncodeOptions{.add_special = true});
  if (prompt.empty()) return invalid_argument("the prompt is empty and the model adds no BOS");
  const int64_t total = static_cast<int64_t>(prompt.size()) + o.num_predict;
  const int64_t ctx = model->hparams().context_length;
  if (ctx > 0 && total > ctx) {
    return invalid_argument("prompt ({} tokens) + -n {} exceeds the model's context of {}",
                            prompt.size(), o.num_predict, ctx);
  }
  CpuDeviceOptions dopt;
  dopt.num_threads = o.threads > 0 ? o.threads : default_num_threads();
  dopt.kv_dtype = *kv_dtype;
  dopt.num_kv_blocks = static_cast<int32_t>((total + kKvBlockTokens - 1) / kKvBlockTokens);
  dopt.limits = ForwardLimits{.max_rows = 512, .max_outputs = 1, .max_seqs = 1};
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuDevice> dev, CpuDevice::create(*model, dopt));
  std::vector<BlockId> blocks;
  for (int32_t b = 0; b < dopt.num_kv_blocks; ++b) blocks.emplace_back(b);

  StepResult result;
  const auto t0 = Clock::now();
  MET_RETURN_IF_ERROR(prefill(*dev, prompt, blocks, dopt.limits.max_rows, result));
  const double prefill_s = seconds_since(t0);

  Sampler sampler(o.sampling);
  IncrementalDetokenizer detok(tok, DetokenizerOptions{});
  StepPlan plan;
  int32_t generated = 0;
  const auto t1 = Clock::now();
  for (int32_t pos = static_cast<int32_t>(prompt.size()); generated < o.num_predict; ++pos) {
    const TokenId next = sampler.sample(std::span<const float>(result.logits.data(), result.vocab_size));
    ++generated;
    if (tok.vocab().is_eog(next)) break;
    std::cout << detok.push(next).text << std::flush;
    if (generated == o.num_predict) break;
    plan.clear();
    plan.inputs.push_back(FeedToken{next});
    plan.positions.push_back(pos);
    plan.seqs.push_back(StepSeq{0, 1, pos, blocks});
    plan.outputs.push_back(OutputRow{0, OutputKind::kLogits});
    MET_ASSIGN_OR_RETURN(Ticket t, dev->launch(plan));
    MET_RETURN_IF_ERROR(dev->await_result(t, result));
  }
  std::cout << detok.finish().text << std::flush;
  const double decode_s = seconds_since(t1);
  std::fprintf(stderr, "\nmet run: prefill %zu tokens in %.3f s (%.1f tok/s); decode %d tokens in %.3f s (%.1f tok/s)\n",
               prompt.size(), prefill_s, static_cast<double>(prompt.size()) / prefill_s, generated,
               decode_s, generated > 0 ? generated / decode_s : 0.0);
  return ok_status();
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Continue a prompt with a model (text to stdout)");
  cmd->add_option("model", o->model_path, "GGUF model")->required();
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text (BOS added as the model says)");
  cmd->add_option("-n,--n-predict", o->num_predict, "Tokens to generate")->capture_default_str();
  cmd->add_option("--temp", o->sampling.temperature, "Temperature; 0 is greedy")->capture_default_str();
  cmd->add_option("--top-k", o->sampling.top_k, "Top-k; 0 is off")->capture_default_str();
  cmd->add_option("--top-p", o->sampling.top_p, "Top-p; 1 is off")->capture_default_str();
  cmd->add_option("--seed", o->sampling.seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Compute threads (default: all cores)");
  cmd->add_option("--kv-dtype", o->kv_dtype, "KV cache type: f16, bf16, f32 or q8_0")->capture_default_str();
  cmd->callback([o] { exit_on_error("run", run(*o)); });
}

}  // namespace met
