// `met bench MODEL.gguf`: prefill and decode speed of the CPU device on its
// own (no engine, no HTTP): prefill tok/s for one prompt, decode tok/s at each
// batch size and context length, weight and KV bytes, peak RSS. Decode at
// context C starts from C cached positions whose KV holds zeros: attention
// reads them at the same cost as real ones, without a long prefill first
// (one untimed step first faults the pool's pages in).
// The prefill figure stands beside its compute bound on the CPU device
// (prefill_bound.h: a token's matmul MACs over the peak rate of the
// instructions its kernels use, measured now). Each decode figure stands
// beside its bytes bound: the bytes one step reads
// (decode_step_weight_bytes for its batch, plus every sequence's KV over its
// positions) against the read bandwidth measured just before and after it
// (the host's rate moves by tens of percent from minute to minute), as tok/s
// and as the share of that bound reached. The closing batch-1 ceiling is
// the bandwidth over the weights one token reads (active_bytes_per_token:
// one embedding row, k experts of a MoE layer). With --concurrency, the engine is measured afterwards as clients see it
// (serving_bench.h), on a fresh device sized by the engine flags; its figures
// follow the device's in the table, and under "serving" in the JSON. With
// --spec, only speculative decoding is measured (spec_bench.h).
// Tested by tests/cli/bench_command_test.cc (shape of the output only: times
// are reported, never asserted).
#include <filesystem>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/cpu/block_tokens.h"
#include "cli/progress_bar.h"
#include "cli/commands.h"
#include "cli/bench_phases.h"
#include "cli/engine_flags.h"
#include "cli/model_info.h"
#include "cli/prefill_bound.h"
#include "cli/serving_bench.h"
#include "cli/spec_bench.h"
#include "core/cpu_features.h"
#include "core/parallel_for.h"
#include "backend/cpu/memory_bandwidth.h"
#include "hf/model_loader.h"
#include "engine/device_factory.h"
#include "model/cpu_device.h"
#include "model/grid_device.h"
#include "model/lora_load.h"

namespace met {
namespace {

struct BenchOptions {
  std::string model_path;
  int32_t prompt_tokens = 512;
  int32_t gen_tokens = 128;
  std::vector<int32_t> batches = {1, 4, 16, 64};
  std::vector<int32_t> contexts = {0};
  EngineFlags engine;  // --threads and --kv-dtype serve the device bench too
  ServingBenchOptions serving;
  bool spec = false;  // the speculation figures only (spec_bench.h)
  SpecBenchOptions spec_options;
  bool json = false;
  bool phases = false;  // each decode figure's steps phase by phase (bench_phases.h)
};

struct DecodeFigure {
  int32_t batch;
  int32_t context;
  double tok_s;
  int32_t adapters = 0;  // LoRA adapters over the batch (0: the base model)
  // The bytes bound beside it: bytes one step reads, the read bandwidth
  // measured around the figure, and the tok/s those allow.
  double step_bytes = 0.0;
  double read_bytes_s = 0.0;
  double ceiling_tok_s = 0.0;
  PhaseReport phases;  // with --phases
};

// What a decode step reads: the weights (decode_step_weight_bytes) and each
// sequence's KV over its positions, on average those at the middle step.
struct StepBytes {
  std::vector<double> weights_by_batch;  // indexed like BenchOptions::batches
  double kv_token_bytes = 0.0;
  double of(size_t batch_index, int32_t batch, int32_t context, int32_t steps) const {
    return weights_by_batch[batch_index] + batch * kv_token_bytes * (context + (steps + 1) / 2.0);
  }
};

using Clock = std::chrono::steady_clock;

Result<double> time_steps(Device& dev, const std::vector<StepPlan>& plans) {
  StepResult r;
  const auto t0 = Clock::now();
  for (const StepPlan& p : plans) {
    MET_ASSIGN_OR_RETURN(Ticket t, dev.launch(p));
    MET_RETURN_IF_ERROR(dev.await_result(t, r));
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Chunks of up to max_rows rows of one prompt, logits for the last row only;
// with recurrent state, the prompt's in slot 0.
std::vector<StepPlan> prefill_plans(int32_t tokens, int32_t max_rows, int32_t vocab, bool recurrent) {
  std::vector<StepPlan> plans;
  std::vector<BlockId> blocks;
  for (int32_t b = 0; b < (tokens + cpu::kBlockTokens - 1) / cpu::kBlockTokens; ++b) blocks.emplace_back(b);
  std::mt19937 rng(1);
  for (int32_t begin = 0; begin < tokens; begin += max_rows) {
    StepPlan p;
    const int32_t n = std::min(max_rows, tokens - begin);
    for (int32_t i = 0; i < n; ++i) {
      p.inputs.push_back(FeedToken{static_cast<TokenId>(rng() % static_cast<uint32_t>(vocab))});
      p.positions.push_back(begin + i);
    }
    p.seqs.push_back(StepSeq{0, n, begin, blocks, recurrent ? std::optional(StateSlotId(0)) : std::nullopt});
    p.outputs.push_back(OutputRow{n - 1, OutputKind::kArgmax});
    plans.push_back(std::move(p));
  }
  return plans;
}

// `steps` decode steps of `batch` sequences, each `context` positions deep
// (with recurrent state, sequence b's in slot b: its content does not change
// the time a step takes).
std::vector<StepPlan> decode_plans(int32_t batch, int32_t context, int32_t steps, int32_t vocab, bool recurrent,
                                   int32_t adapters = 0) {
  const int32_t blocks_per_seq = (context + steps + cpu::kBlockTokens - 1) / cpu::kBlockTokens;
  std::vector<StepPlan> plans;
  std::mt19937 rng(2);
  for (int32_t s = 0; s < steps; ++s) {
    StepPlan p;
    for (int32_t b = 0; b < batch; ++b) {
      std::vector<BlockId> blocks;
      for (int32_t i = 0; i < blocks_per_seq; ++i) blocks.emplace_back(b * blocks_per_seq + i);
      p.inputs.push_back(FeedToken{static_cast<TokenId>(rng() % static_cast<uint32_t>(vocab))});
      p.positions.push_back(context + s);
      p.seqs.push_back(
          StepSeq{b, 1, context + s, std::move(blocks), recurrent ? std::optional(StateSlotId(b)) : std::nullopt});
      p.seqs.back().adapter_slot = adapters > 0 ? b % adapters : kNoAdapterSlot;
      p.outputs.push_back(OutputRow{b, OutputKind::kArgmax});
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

// Gives state slots [0, batch) a (zero) state after `context` tokens, for
// decode steps that start there without a prefill.
Status seed_states(Device& dev, int32_t batch, int32_t context) {
  const std::vector<uint8_t> zero(static_cast<size_t>(dev.info().state_slot_bytes));
  for (int32_t b = 0; b < batch; ++b) MET_RETURN_IF_ERROR(dev.write_state_slot(StateSlotId(b), context, zero));
  return ok_status();
}

// Loads each --lora adapter into its own slot of `dev`; how many.
Result<int32_t> bind_bench_adapters(Device& dev, const Model& model, const EngineFlags& flags) {
  MET_ASSIGN_OR_RETURN(const CpuEngineConfig config, engine_config(flags));
  for (size_t i = 0; i < config.loras.size(); ++i) {
    const auto& [name, path] = config.loras[i];
    MET_ASSIGN_OR_RETURN(std::shared_ptr<const LoraAdapter> a, load_lora(path, model, name));
    MET_RETURN_IF_ERROR(dev.bind_adapter(static_cast<int32_t>(i), std::move(a)).with_prefix("--lora " + name));
  }
  return static_cast<int32_t>(config.loras.size());
}

// Decode tok/s of `batch` sequences at `context` (with `adapters` LoRA
// adapters over them when > 0).
// With `profile`, it holds the timed steps' phases.
Result<double> decode_tok_s(Device& dev, const BenchOptions& o, int32_t batch, int32_t context, int32_t vocab,
                            bool recurrent, int32_t adapters, cpu::PhaseProfile* profile) {
  if (recurrent) MET_RETURN_IF_ERROR(seed_states(dev, batch, context));
  const std::vector<StepPlan> plans = decode_plans(batch, context, o.gen_tokens, vocab, recurrent, adapters);
  // One untimed first step: it reads every position of the context, so the
  // pool's pages are faulted in (and zeroed by the kernel) before the clock
  // starts, not charged to decode. It rewrites the first step's KV rows only.
  MET_RETURN_IF_ERROR(time_steps(dev, {plans.front()}).status());
  if (recurrent) MET_RETURN_IF_ERROR(seed_states(dev, batch, context));
  if (profile != nullptr) profile->reset();
  MET_ASSIGN_OR_RETURN(const double s, time_steps(dev, plans));
  return static_cast<double>(batch) * o.gen_tokens / s;
}

// The memory bandwidth the device reaches now (bytes/s), best of n passes.
using BandwidthProbe = std::function<double(int repeats)>;

// The device's probe: a GPU's (or the host grid's) own, else the host's
// read rate over a 1 GiB buffer on `num_threads` threads.
BandwidthProbe bandwidth_probe(Device& dev, int num_threads) {
  if (auto* grid = dynamic_cast<GridDevice*>(&dev)) {
    return [grid](int repeats) { return grid->measure_bandwidth(repeats); };
  }
  auto probe = std::make_shared<cpu::ReadBandwidthProbe>(num_threads, size_t{1} << 30);
  return [probe](int repeats) { return probe->measure(repeats); };
}

// The figure of median speed of three.
DecodeFigure median3(std::array<DecodeFigure, 3> v) {
  std::sort(v.begin(), v.end(), [](const DecodeFigure& a, const DecodeFigure& b) { return a.tok_s < b.tok_s; });
  return v[1];
}

// Decode tok/s of `batch` at `context` with the read bandwidth measured just
// before and just after (the better of the two: the rate the host allowed
// around the figure).
Result<DecodeFigure> measured_figure(Device& dev, const BenchOptions& o, const BandwidthProbe& probe,
                                     int32_t batch, int32_t context, int32_t vocab, bool recurrent,
                                     int32_t adapters, cpu::PhaseProfile* profile) {
  const double before = probe(2);
  MET_ASSIGN_OR_RETURN(const double tok_s,
                       decode_tok_s(dev, o, batch, context, vocab, recurrent, adapters, profile));
  const double after = probe(2);
  DecodeFigure d{batch, context, tok_s, std::min(adapters, batch), 0.0, std::max(before, after), 0.0, {}};
  if (profile != nullptr) {
    d.phases = PhaseReport{profile->snapshot(), o.gen_tokens, static_cast<double>(batch) / tok_s};
  }
  return d;
}

// Each batch size at each context; with adapters, the plain and the adapted
// figures alternate three times and each is the median (the host's noise
// moves single runs by more than adapters cost).
Result<std::vector<DecodeFigure>> decode_figures(Device& dev, const BenchOptions& o, int32_t vocab,
                                                 bool recurrent, int32_t adapters, const StepBytes& bytes,
                                                 const BandwidthProbe& probe, cpu::PhaseProfile* profile) {
  std::vector<DecodeFigure> out;
  for (int32_t ctx : o.contexts) {
    for (size_t bi = 0; bi < o.batches.size(); ++bi) {
      const int32_t b = o.batches[bi];
      std::array<DecodeFigure, 3> plain{}, adapted{};
      for (size_t r = 0; r < (adapters == 0 ? 1 : 3); ++r) {
        MET_ASSIGN_OR_RETURN(plain[r], measured_figure(dev, o, probe, b, ctx, vocab, recurrent, 0, profile));
        if (adapters == 0) break;
        MET_ASSIGN_OR_RETURN(adapted[r],
                             measured_figure(dev, o, probe, b, ctx, vocab, recurrent, adapters, profile));
      }
      const size_t figures = adapters == 0 ? 1 : 2;
      for (size_t f = 0; f < figures; ++f) {
        DecodeFigure d = f == 0 ? (adapters == 0 ? plain[0] : median3(plain)) : median3(adapted);
        d.step_bytes = bytes.of(bi, b, ctx, o.gen_tokens);
        d.ceiling_tok_s = d.read_bytes_s / d.step_bytes * b;
        out.push_back(d);
      }
    }
  }
  return out;
}

int64_t peak_rss_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

nlohmann::json serving_json(const BenchOptions& o, const ServingReport& r) {
  nlohmann::json j = serving_report_json(r);
  j["prompt_tokens"] = o.prompt_tokens;
  j["gen_tokens"] = o.gen_tokens;
  j["max_seqs"] = o.engine.max_seqs;
  j["max_batch_tokens"] = o.engine.max_batch_tokens;
  j["kv_blocks"] = r.limits.num_kv_blocks;
  return j;
}

// The engine's figures: a fresh engine from the engine flags.
Result<ServingReport> run_serving(const BenchOptions& o, const Model& model) {
  MET_ASSIGN_OR_RETURN(const CpuEngineConfig config, engine_config(o.engine));
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuEngine> e, CpuEngine::create(model, config));
  ServingBenchOptions so = o.serving;
  so.prompt_tokens = o.prompt_tokens;
  so.gen_tokens = o.gen_tokens;
  MET_ASSIGN_OR_RETURN(ServingReport r, run_serving_bench(*e, so));
  e->engine().drain();
  return r;
}

// `--spec`: the speculation figures, on an engine without speculation and
// one with the engine flags'.
Status run_spec(const BenchOptions& o, const Model& model) {
  SpecBenchOptions so = o.spec_options;
  so.prompt_tokens = o.prompt_tokens;
  so.gen_tokens = o.gen_tokens;
  MET_RETURN_IF_ERROR(validate_spec_bench(so));
  MET_ASSIGN_OR_RETURN(CpuEngineConfig spec_config, engine_config(o.engine));
  CpuEngineConfig plain_config = spec_config;
  plain_config.spec_lookup = 0;
  plain_config.draft_model_path.clear();
  plain_config.spec_mtp = false;
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuEngine> plain, CpuEngine::create(model, plain_config));
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuEngine> spec, CpuEngine::create(model, spec_config));
  MET_ASSIGN_OR_RETURN(SpecReport r, run_spec_bench(*plain, *spec, so));
  if (o.json) {
    nlohmann::json j;
    j["model"] = o.model_path;
    j["threads"] = spec_config.num_threads;
    j["draft_model"] = o.engine.draft_model;
    j["spec_lookup"] = o.engine.spec_lookup;
    j["spec_mtp"] = o.engine.spec_mtp;
    j["speculation"] = spec_report_json(r);
    std::cout << j.dump() << "\n";
    return ok_status();
  }
  std::cout << fmt::format("model {}, {} threads, {} prompt tokens, greedy; speculation: {}{}{}{}\n", o.model_path,
                           spec_config.num_threads, o.prompt_tokens,
                           o.engine.spec_lookup > 0 ? fmt::format("prompt lookup {} ", o.engine.spec_lookup) : "",
                           o.engine.spec_mtp ? "MTP " : "",
                           o.engine.draft_model.empty() ? "" : fmt::format("draft model {} ", o.engine.draft_model),
                           fmt::format("(predictions always), adaptive {}", o.engine.spec_adaptive));
  std::cout << spec_report_table(r);
  return ok_status();
}

Status run_bench(const BenchOptions& o) {
  if (o.prompt_tokens < 1 || o.gen_tokens < 1) return invalid_argument("--prompt-tokens and --gen-tokens must be >= 1");
  for (int32_t b : o.batches) {
    if (b < 1) return invalid_argument("--batch {} must be >= 1", b);
  }
  for (int32_t c : o.contexts) {
    if (c < 0) return invalid_argument("--context {} must be >= 0", c);
  }
  MET_RETURN_IF_ERROR(validate_engine_flags(o.engine));
  MET_RETURN_IF_ERROR(validate_serving_bench(o.serving));
  if (o.phases && (o.engine.device != "cpu" || o.spec)) {
    return invalid_argument("--phases profiles the CPU device's decode figures: not with --device {}{}",
                            o.engine.device, o.spec ? " or --spec" : "");
  }
  const bool drafts = o.engine.spec_lookup > 0 || !o.engine.draft_model.empty() || o.engine.spec_mtp;
  if (drafts && o.serving.concurrency.empty() && !o.spec) {
    // The device figures run fixed steps; only the engine drafts.
    return invalid_argument("speculative decoding (--spec-lookup, --draft-model, --spec-mtp) speeds up the "
                            "engine's figures only: give --concurrency or --spec too");
  }
  const GgmlType kv_dtype = *parse_ggml_type(o.engine.kv_dtype);
  ProgressBar load_bar("loading " + std::filesystem::path(o.model_path).filename().string());
  MET_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                       load_model(o.model_path, [&](size_t done, size_t total) { load_bar.update(done, total); },
                                  weight_packing_for(o.engine.device)));
  if (o.spec) return run_spec(o, *model);
  const int64_t model_ctx = model->hparams().context_length;
  if (!o.serving.concurrency.empty() && model_ctx > 0 && int64_t{o.prompt_tokens} + o.gen_tokens > model_ctx) {
    return invalid_argument("--prompt-tokens {} + --gen-tokens {} exceeds the model's context of {}",
                            o.prompt_tokens, o.gen_tokens, model_ctx);
  }
  const int32_t vocab = static_cast<int32_t>(model->hparams().vocab_size);
  const int32_t max_batch = *std::max_element(o.batches.begin(), o.batches.end());
  const int32_t max_context = *std::max_element(o.contexts.begin(), o.contexts.end());
  const int32_t per_seq = (max_context + o.gen_tokens + cpu::kBlockTokens - 1) / cpu::kBlockTokens;
  cpu::PhaseProfile profile;  // outlives dev
  CpuDeviceOptions dopt;
  dopt.num_threads = o.engine.threads > 0 ? o.engine.threads : default_num_threads();
  dopt.phase_profile = o.phases ? &profile : nullptr;
  dopt.kv_dtype = kv_dtype;
  dopt.num_kv_blocks = std::max(max_batch * per_seq, (o.prompt_tokens + cpu::kBlockTokens - 1) / cpu::kBlockTokens);
  dopt.limits = ForwardLimits{.max_rows = std::max(512, max_batch), .max_outputs = max_batch, .max_seqs = max_batch};
  dopt.state_rollback = o.engine.state_rollback;  // the rollback ring costs what serving pays
  dopt.num_adapter_slots = static_cast<int32_t>(o.engine.loras.size());
  dopt.forward.max_lora_rank = o.engine.loras.empty() ? 0 : o.engine.max_lora_rank;
  Result<std::unique_ptr<Device>> made = make_engine_device(o.engine.device, *model, dopt);
  if (!made.ok()) return made.status().with_prefix("--device " + o.engine.device);
  std::unique_ptr<Device> dev = std::move(made).value();
  MET_ASSIGN_OR_RETURN(const int32_t adapters, bind_bench_adapters(*dev, *model, o.engine));

  const bool recurrent = dev->info().num_state_slots > 0;
  const BandwidthProbe probe = bandwidth_probe(*dev, dopt.num_threads);
  const std::vector<StepPlan> prefill = prefill_plans(o.prompt_tokens, 512, vocab, recurrent);
  profile.reset();
  MET_ASSIGN_OR_RETURN(double prefill_s, time_steps(*dev, prefill));
  const double prefill_tok_s = o.prompt_tokens / prefill_s;
  const auto prefill_steps = static_cast<int64_t>(prefill.size());
  const PhaseReport prefill_phases{profile.snapshot(), prefill_steps, prefill_s / static_cast<double>(prefill_steps)};
  PrefillBound prefill_bound;
  if (o.engine.device == "cpu") {
    prefill_bound = cpu_prefill_bound(model->file().tensors(), model->hparams(), dopt.num_threads);
  }
  const int64_t kv_bytes = dev->info().kv_block_bytes * dopt.num_kv_blocks;
  StepBytes bytes;
  bytes.kv_token_bytes = static_cast<double>(dev->info().kv_block_bytes) / cpu::kBlockTokens;
  for (int32_t b : o.batches) {
    bytes.weights_by_batch.push_back(
        static_cast<double>(decode_step_weight_bytes(model->file().tensors(), &model->hparams(), b)));
  }
  // Peak RSS before the bandwidth probes' buffers (the device's memory is
  // all allocated by now; decode adds the KV rows it writes).
  const int64_t peak_rss = peak_rss_bytes();
  MET_ASSIGN_OR_RETURN(std::vector<DecodeFigure> decode,
                       decode_figures(*dev, o, vocab, recurrent, adapters, bytes, probe,
                                      o.phases ? &profile : nullptr));
  // Batch-1 decode reads the weights one token uses once: of the embedding
  // one row, of a MoE layer's experts the k it routes to (`met info` shows the
  // same count).
  const double step_bytes =
      static_cast<double>(active_bytes_per_token(model->file().tensors(), &model->hparams()));
  const double read_bytes_s = probe(3);
  const double ceiling_tok_s = read_bytes_s / step_bytes;
  cuda::GraphStats graphs;
  if (const auto* grid = dynamic_cast<const GridDevice*>(dev.get())) graphs = grid->graph_stats();
  dev.reset();  // its KV pool is not the engine's
  std::optional<ServingReport> serving;
  if (!o.serving.concurrency.empty()) {
    MET_ASSIGN_OR_RETURN(serving, run_serving(o, *model));
  }
  if (o.json) {
    nlohmann::json j;
    j["model"] = o.model_path;
    j["threads"] = dopt.num_threads;
    j["prompt_tokens"] = o.prompt_tokens;
    j["gen_tokens"] = o.gen_tokens;
    j["prefill_tok_s"] = prefill_tok_s;
    j["prefill_macs_per_token"] = prefill_bound.macs_per_token;
    j["prefill_ceiling_tok_s"] = prefill_bound.ceiling_tok_s;
    j["prefill_mac_rate"] = prefill_bound.mac_rate;
    j["prefill_instruction"] = prefill_bound.instruction;
    if (o.phases) j["prefill_phases"] = phase_json(prefill_phases);
    j["decode"] = nlohmann::json::array();
    for (const auto& d : decode) {
      j["decode"].push_back({{"batch", d.batch},
                             {"context", d.context},
                             {"tok_s", d.tok_s},
                             {"adapters", d.adapters},
                             {"step_bytes", d.step_bytes},
                             {"read_bytes_s", d.read_bytes_s},
                             {"ceiling_tok_s", d.ceiling_tok_s},
                             {"ceiling_share", d.tok_s / d.ceiling_tok_s}});
      if (o.phases) j["decode"].back()["phases"] = phase_json(d.phases);
    }
    j["weight_bytes"] = model->weight_bytes();
    j["decode_step_bytes"] = step_bytes;
    j["memory_read_bytes_s"] = read_bytes_s;
    j["decode_ceiling_tok_s"] = ceiling_tok_s;
    j["kv_bytes"] = kv_bytes;
    j["peak_rss_bytes"] = peak_rss;
    j["device"] = o.engine.device;
    j["isa"] = isa_name(selected_isa());
    j["graph_captures"] = graphs.captures;
    j["graph_capture_ms"] = static_cast<double>(graphs.capture_ns) / 1e6;
    j["graph_replays"] = graphs.replays;
    if (serving) j["serving"] = serving_json(o, *serving);
    std::cout << j.dump() << "\n";
    return ok_status();
  }
  std::cout << fmt::format("model {}, {} threads, {} kernels, weights {:.1f} MiB, KV pool {:.1f} MiB ({})\n",
                           o.model_path, dopt.num_threads, isa_name(selected_isa()),
                           model->weight_bytes() / 1048576.0, kv_bytes / 1048576.0, o.engine.kv_dtype);
  std::cout << fmt::format("prefill {:>6} tokens {:>10.1f} tok/s", o.prompt_tokens, prefill_tok_s);
  if (prefill_bound.ceiling_tok_s > 0) {
    std::cout << fmt::format("  {:>8.1f} MMAC/tok  bound {:>7.1f} tok/s at {:>5.0f} G MAC/s ({}): {:>3.0f}%",
                             prefill_bound.macs_per_token / 1e6, prefill_bound.ceiling_tok_s,
                             prefill_bound.mac_rate / 1e9, prefill_bound.instruction,
                             100.0 * prefill_tok_s / prefill_bound.ceiling_tok_s);
  }
  std::cout << "\n";
  if (o.phases) std::cout << phase_table(prefill_phases);
  for (const auto& d : decode) {
    std::cout << fmt::format("decode  batch {:>3} context {:>5} {:>10.1f} tok/s  {:>8.1f} MB/step  bound {:>7.1f} "
                             "tok/s at {:>5.1f} GB/s: {:>3.0f}%{}\n",
                             d.batch, d.context, d.tok_s, d.step_bytes / 1e6, d.ceiling_tok_s, d.read_bytes_s / 1e9,
                             100.0 * d.tok_s / d.ceiling_tok_s,
                             d.adapters > 0 ? fmt::format("  ({} LoRA adapters)", d.adapters) : "");
    if (o.phases) std::cout << phase_table(d.phases);
  }
  std::cout << fmt::format("ceiling {:.1f} tok/s at batch 1: memory read {:.1f} GB/s now / {:.1f} MB per step\n",
                           ceiling_tok_s, read_bytes_s / 1e9, step_bytes / 1e6);
  std::cout << fmt::format("peak RSS {:.1f} MiB\n", peak_rss / 1048576.0);
  if (graphs.captures > 0) {
    std::cout << fmt::format("device {}: {} decode graphs captured in {:.1f} ms, {} replays\n", o.engine.device,
                             graphs.captures, static_cast<double>(graphs.capture_ns) / 1e6, graphs.replays);
  }
  if (serving) {
    std::cout << fmt::format(
        "serving: {} prompt + {} output tokens per request; max {} seqs, {} batch tokens, KV pool {} blocks, "
        "pipeline {}\n",
        o.prompt_tokens, o.gen_tokens, o.engine.max_seqs, o.engine.max_batch_tokens, serving->limits.num_kv_blocks,
        o.engine.pipeline);
    std::cout << serving_report_table(*serving);
  }
  return ok_status();
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure prefill and decode speed of a model");
  cmd->add_option("model", o->model_path, "GGUF model or Hugging Face model folder")->required();
  cmd->add_option("--prompt-tokens", o->prompt_tokens, "Prefill length")->capture_default_str();
  cmd->add_option("--gen-tokens", o->gen_tokens, "Decode steps per measurement")->capture_default_str();
  cmd->add_option("--batch", o->batches, "Decode batch sizes")->delimiter(',')->capture_default_str();
  cmd->add_option("--context", o->contexts, "Decode context lengths")->delimiter(',')->capture_default_str();
  cmd->add_option("--concurrency", o->serving.concurrency,
                  "Also measure the engine with this many clients at once, per level (e.g. 1,8,32,64)")
      ->delimiter(',');
  cmd->add_option("--requests-per-level", o->serving.requests_per_level,
                  "Requests per concurrency level (default: twice the concurrency)");
  cmd->add_option("--cached-prompt-tokens", o->serving.cached_prompt_tokens,
                  "Prompt sent twice to time a prefix-cache hit; 0 skips it")
      ->capture_default_str();
  cmd->add_flag("--spec", o->spec,
                "Measure speculative decoding only: batch-1 decode with and without the speculation the engine "
                "flags give (--spec-lookup, --draft-model), on a free continuation and on Predicted Outputs");
  cmd->add_option("--spec-edits", o->spec_options.edits, "--spec: tokens changed in the edited prediction")
      ->capture_default_str();
  cmd->add_option("--spec-repeats", o->spec_options.repeats, "--spec: runs of each workload (the median is kept)")
      ->capture_default_str();
  add_engine_flags(*cmd, o->engine);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--phases", o->phases,
                "Under each decode figure, where its steps' time goes: each phase between two barriers of the CPU "
                "worker pool (named by the source line that ends it), its share of a step, and how much of it "
                "thread 0 waited for the others");
  cmd->callback([o] { exit_on_error("bench", run_bench(*o)); });
}

}  // namespace met
