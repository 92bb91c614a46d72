// `met run MODEL.gguf (--prompt "…" | --prompts-file FILE)`: prompts through
// the engine (continuous batching over the paged KV cache, as `met serve`).
// With --prompt the continuation streams to stdout as it is sampled, nothing
// else, and the TTFT and speeds go to stderr. With --prompts-file (one JSON
// string per line, blank lines skipped) every prompt is submitted at once and
// stdout gets one JSON object per prompt, in input order:
//   {"index", "text", "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens"}
// or {"index", "error"} for a prompt the engine refused or failed; then the
// command exits non-zero. A malformed file fails before anything is submitted.
// With --lora, every prompt runs the first adapter given.
// Threading: main thread (the engine runs its own). Tested by
// tests/cli/run_command_test.cc.
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/progress_bar.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/sampling_flags.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace met {
namespace {

// llama.cpp's defaults for `met run`.
SamplingParams default_run_sampling() {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 40;
  p.top_p = 0.95f;
  return p;
}

struct RunOptions {
  std::string model_path;
  std::string prompt;
  std::string prompts_file;
  int32_t num_predict = 128;
  SamplingParams sampling = default_run_sampling();
  std::vector<std::string> stops;
  EngineFlags engine;
};

// One prompt and where it came from ("--prompt" or "FILE:LINE").
struct PromptSource {
  std::string where;
  std::string text;
};

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\n") == std::string::npos;
}

Result<std::vector<PromptSource>> read_prompts_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("--prompts-file: cannot read '{}'", path);
  std::vector<PromptSource> prompts;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (is_blank(line)) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_string()) {
      return invalid_argument("{}:{}: each line must be one JSON string (a prompt), got {}", path, line_no,
                              j.is_discarded() ? "malformed JSON" : std::string(j.type_name()));
    }
    prompts.push_back(PromptSource{fmt::format("{}:{}", path, line_no), j.get<std::string>()});
  }
  if (prompts.empty()) return invalid_argument("--prompts-file {} holds no prompt", path);
  return prompts;
}

// Tokenizes every prompt and checks each fits the context with -n outputs.
Result<std::vector<EngineRequest>> make_requests(const std::vector<PromptSource>& prompts, const Tokenizer& tok,
                                                 int64_t ctx, const RunOptions& o) {
  std::vector<EngineRequest> requests;
  for (const PromptSource& p : prompts) {
    EngineRequest r;
    r.prompt = tok.encode(p.text, EncodeOptions{.add_special = true});
    if (r.prompt.empty()) return invalid_argument("{}: the prompt is empty and the model adds no BOS", p.where);
    const int64_t total = static_cast<int64_t>(r.prompt.size()) + o.num_predict;
    if (ctx > 0 && total > ctx) {
      return invalid_argument("{}: prompt ({} tokens) + -n {} exceeds the model's context of {}", p.where,
                              r.prompt.size(), o.num_predict, ctx);
    }
    r.sampling = o.sampling;
    r.max_tokens = o.num_predict;
    r.stop_strings = o.stops;
    requests.push_back(std::move(r));
  }
  return requests;
}

// Streams one request's text to stdout; the speeds go to stderr.
Status stream_one(Engine& engine, EngineRequest request) {
  MET_ASSIGN_OR_RETURN(RequestHandle h, engine.submit(std::move(request)));
  StreamEvent ev;
  std::optional<FinishEvent> finish;
  while (h.next(ev)) {
    if (auto* d = std::get_if<DeltaEvent>(&ev)) {
      std::cout << d->text << std::flush;
    } else if (auto* f = std::get_if<FinishEvent>(&ev)) {
      finish = std::move(*f);
    } else {
      return internal_error("{}", std::get<ErrorEvent>(ev).message);
    }
  }
  if (!finish) return internal_error("the engine ended the request without a finish");
  const Usage& u = finish->usage;
  const int32_t prefilled = u.prompt_tokens - u.cached_prompt_tokens;
  const double ttft_s = finish->time_to_first_token_ms / 1e3;
  const int32_t decoded = std::max(u.completion_tokens - 1, 0);  // the first token came with the prefill
  const double decode_s = finish->decode_time_ms / 1e3;
  std::fprintf(stderr,
               "\nmet run: prefill %d tokens (%d cached), first token after %.3f s (%.1f tok/s); "
               "decode %d tokens in %.3f s (%.1f tok/s); finish %s\n",
               prefilled, u.cached_prompt_tokens, ttft_s, ttft_s > 0 ? prefilled / ttft_s : 0.0, decoded, decode_s,
               decode_s > 0 ? decoded / decode_s : 0.0, finish->finish_reason.c_str());
  const EngineStatsSnapshot st = engine.stats();
  if (st.spec_drafted > 0) {
    std::fprintf(stderr, "met run: speculation: %lld of %lld drafted tokens accepted (%.1f%%)\n",
                 static_cast<long long>(st.spec_accepted), static_cast<long long>(st.spec_drafted),
                 100.0 * static_cast<double>(st.spec_accepted) / static_cast<double>(st.spec_drafted));
  }
  return ok_status();
}

// The JSON line of one request: waits for its terminal event.
nlohmann::ordered_json collect_one(size_t index, Result<RequestHandle>& submitted) {
  nlohmann::ordered_json j;
  j["index"] = index;
  if (!submitted.ok()) {
    j["error"] = submitted.status().message();
    return j;
  }
  std::string text;
  StreamEvent ev;
  while (submitted->next(ev)) {
    if (auto* d = std::get_if<DeltaEvent>(&ev)) {
      text += d->text;
    } else if (auto* f = std::get_if<FinishEvent>(&ev)) {
      j["text"] = text;
      j["finish_reason"] = f->finish_reason;
      j["prompt_tokens"] = f->usage.prompt_tokens;
      j["completion_tokens"] = f->usage.completion_tokens;
      j["cached_tokens"] = f->usage.cached_prompt_tokens;
    } else {
      j["error"] = std::get<ErrorEvent>(ev).message;
    }
  }
  return j;
}

// Submits every request at once, then prints their lines in order; a summary
// line goes to stderr.
Status run_batch(Engine& engine, const Clock& clock, std::vector<EngineRequest> requests) {
  const TimePoint start = clock.now();
  std::vector<Result<RequestHandle>> handles;
  handles.reserve(requests.size());
  for (EngineRequest& r : requests) handles.push_back(engine.submit(std::move(r)));
  size_t num_failed = 0;
  int64_t num_output_tokens = 0;  // from the finish frames: the stats count a request just after its frame
  for (size_t i = 0; i < handles.size(); ++i) {
    const nlohmann::ordered_json j = collect_one(i, handles[i]);
    if (j.contains("error")) ++num_failed;
    num_output_tokens += j.value("completion_tokens", int64_t{0});
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  }
  const double wall_s = ms_between(start, clock.now()) / 1e3;
  const EngineStatsSnapshot st = engine.stats();
  std::fprintf(stderr,
               "met run: %zu prompts, %lld output tokens in %.3f s (%.1f tok/s); preemptions: %lld swap, "
               "%lld recompute\n",
               handles.size(), static_cast<long long>(num_output_tokens), wall_s,
               wall_s > 0 ? static_cast<double>(num_output_tokens) / wall_s : 0.0,
               static_cast<long long>(st.preemptions_swap), static_cast<long long>(st.preemptions_recompute));
  if (num_failed > 0) {
    return internal_error("{} of {} prompts failed (see their lines on stdout)", num_failed, handles.size());
  }
  return ok_status();
}

Status run(const RunOptions& o) {
  MET_RETURN_IF_ERROR(validate_sampling(o.sampling));
  if (o.num_predict < 0) return invalid_argument("-n {} must be >= 0", o.num_predict);
  if (!o.prompt.empty() && !o.prompts_file.empty()) {
    return invalid_argument("--prompt and --prompts-file {} both given; give one", o.prompts_file);
  }
  MET_ASSIGN_OR_RETURN(const CpuEngineConfig config, engine_config(o.engine));
  std::vector<PromptSource> prompts;
  if (o.prompts_file.empty()) {
    prompts.push_back(PromptSource{"--prompt", o.prompt});
  } else {
    MET_ASSIGN_OR_RETURN(prompts, read_prompts_file(o.prompts_file));
  }
  ProgressBar load_bar("loading " + std::filesystem::path(o.model_path).filename().string());
  MET_ASSIGN_OR_RETURN(
      std::unique_ptr<CpuEngine> e,
      CpuEngine::open(o.model_path, config, [&](size_t done, size_t total) { load_bar.update(done, total); }));
  MET_ASSIGN_OR_RETURN(std::vector<EngineRequest> requests,
                       make_requests(prompts, e->tokenizer(), e->context_length(), o));
  if (!config.loras.empty()) {
    const std::optional<AdapterRegistry::Entry> a = e->adapters().find(config.loras.front().first);
    for (EngineRequest& r : requests) {
      r.adapter = a->adapter;
      r.adapter_id = a->id;
    }
  }
  if (o.prompts_file.empty()) return stream_one(e->engine(), std::move(requests.front()));
  return run_batch(e->engine(), e->clock(), std::move(requests));
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Continue prompts with a model through the engine");
  cmd->add_option("model", o->model_path, "GGUF model or Hugging Face model folder")->required();
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text (BOS added as the model says); its text to stdout");
  cmd->add_option("--prompts-file", o->prompts_file,
                  "One JSON string per line, all submitted at once; one JSON result per line to stdout");
  cmd->add_option("-n,--n-predict,--max-tokens", o->num_predict, "Tokens to generate")->capture_default_str();
  add_sampling_flags(*cmd, o->sampling);
  cmd->add_option("--stop", o->stops, "Stop string (repeatable); not included in the text")->allow_extra_args(false);
  add_engine_flags(*cmd, o->engine);
  cmd->callback([o] { exit_on_error("run", run(*o)); });
}

}  // namespace met
