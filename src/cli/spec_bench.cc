// SpecBench. Tested by tests/cli/bench_command_test.cc.
#include "cli/spec_bench.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "cli/serving_bench.h"

namespace met {
namespace {

struct Timed {
  std::vector<TokenId> tokens;
  double decode_tok_s = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
};

// Runs `r` alone on `e` to its end.
Result<Timed> run_one(CpuEngine& e, EngineRequest r) {
  const EngineStatsSnapshot before = e.engine().stats();
  MET_ASSIGN_OR_RETURN(RequestHandle h, e.engine().submit(std::move(r)));
  using Clock = std::chrono::steady_clock;
  Timed out;
  Clock::time_point first, last;
  size_t first_count = 0;
  StreamEvent ev;
  while (h.next(ev)) {
    if (const auto* err = std::get_if<ErrorEvent>(&ev)) return internal_error("a request failed: {}", err->message);
    const auto* d = std::get_if<DeltaEvent>(&ev);
    if (d == nullptr || d->tokens.empty()) continue;
    last = Clock::now();
    if (out.tokens.empty()) {
      first = last;
      first_count = d->tokens.size();
    }
    out.tokens.insert(out.tokens.end(), d->tokens.begin(), d->tokens.end());
  }
  const double s = std::chrono::duration<double>(last - first).count();
  const size_t decoded = out.tokens.size() - first_count;  // after the first delta
  if (decoded > 0 && s > 0) out.decode_tok_s = static_cast<double>(decoded) / s;
  const EngineStatsSnapshot after = e.engine().stats();
  out.drafted = after.spec_drafted - before.spec_drafted;
  out.accepted = after.spec_accepted - before.spec_accepted;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// `tokens` with `edits` of them, evenly spaced, replaced by other plain ids.
std::vector<TokenId> edited(std::vector<TokenId> tokens, int32_t edits, const std::vector<TokenId>& pool) {
  for (int32_t k = 1; k <= edits; ++k) {
    const size_t at = tokens.size() * static_cast<size_t>(k) / static_cast<size_t>(edits + 1);
    if (at >= tokens.size()) continue;
    const auto it = std::find(pool.begin(), pool.end(), tokens[at]);
    const size_t next = it == pool.end() ? 0 : static_cast<size_t>(it - pool.begin() + 1) % pool.size();
    tokens[at] = pool[next];
  }
  return tokens;
}

// How many of `out`'s first tokens are `text`'s.
int64_t common_prefix(const std::vector<TokenId>& out, const std::vector<TokenId>& text) {
  return std::mismatch(out.begin(), out.end(), text.begin(), text.end()).first - out.begin();
}

// Runs plain then speculative `o.repeats` times; the speculative request is
// `r` with `prediction`. With `quoted`, counts how much of the output opens
// with it.
Result<SpecWorkloadFigures> run_workload(CpuEngine& plain, CpuEngine& spec, const SpecBenchOptions& o,
                                         const std::string& name, const EngineRequest& r,
                                         const std::vector<TokenId>& prediction,
                                         const std::vector<TokenId>* quoted = nullptr) {
  std::vector<double> plain_s, spec_s;
  SpecWorkloadFigures f;
  f.name = name;
  for (int32_t i = 0; i < o.repeats; ++i) {
    MET_ASSIGN_OR_RETURN(Timed p, run_one(plain, r));
    EngineRequest sr = r;
    sr.prediction = prediction;
    MET_ASSIGN_OR_RETURN(Timed s, run_one(spec, std::move(sr)));
    if (s.tokens != p.tokens) {
      return internal_error("{}: the output with speculation differs from the output without it", name);
    }
    plain_s.push_back(p.decode_tok_s);
    spec_s.push_back(s.decode_tok_s);
    f.output_tokens = static_cast<int64_t>(p.tokens.size());
    f.drafted = s.drafted;
    f.accepted = s.accepted;
    if (quoted != nullptr) f.quoted_prefix = common_prefix(p.tokens, *quoted);
  }
  f.plain_tok_s = median(plain_s);
  f.spec_tok_s = median(spec_s);
  return f;
}

}  // namespace

Status validate_spec_bench(const SpecBenchOptions& o) {
  if (o.prompt_tokens < 1) return invalid_argument("--prompt-tokens {} must be at least 1", o.prompt_tokens);
  if (o.gen_tokens < 2) return invalid_argument("--gen-tokens {} must be at least 2 with --spec", o.gen_tokens);
  if (o.edits < 0 || o.edits > o.gen_tokens) {
    return invalid_argument("--spec-edits {} must be between 0 and --gen-tokens ({})", o.edits, o.gen_tokens);
  }
  if (o.repeats < 1 || o.repeats > 100) return invalid_argument("--spec-repeats {} must be in [1, 100]", o.repeats);
  return ok_status();
}

Result<SpecReport> run_spec_bench(CpuEngine& plain, CpuEngine& spec, const SpecBenchOptions& o) {
  MET_RETURN_IF_ERROR(validate_spec_bench(o));
  const std::vector<TokenId> pool = plain_token_ids(plain.tokenizer().vocab());
  if (pool.empty()) return invalid_argument("the model's vocabulary has no plain tokens to make a prompt of");
  const std::vector<TokenId> prompt = random_prompt(pool, o.prompt_tokens, o.seed);
  const EngineRequest r = bench_request(prompt, o.gen_tokens);
  SpecReport report;
  MET_ASSIGN_OR_RETURN(SpecWorkloadFigures free, run_workload(plain, spec, o, "free", r, {}));
  report.workloads.push_back(free);
  // The plain output for the prompt: the prediction a client would send.
  MET_ASSIGN_OR_RETURN(Timed reference, run_one(plain, r));
  MET_ASSIGN_OR_RETURN(SpecWorkloadFigures exact, run_workload(plain, spec, o, "predicted", r, reference.tokens));
  report.workloads.push_back(exact);
  const std::string name = fmt::format("edited ({})", o.edits);
  MET_ASSIGN_OR_RETURN(SpecWorkloadFigures edits,
                       run_workload(plain, spec, o, name, r, edited(reference.tokens, o.edits, pool)));
  report.workloads.push_back(edits);
  // The prompt, its plain output and the prompt again: a model whose next
  // token follows its last ones quotes the output from the prompt.
  std::vector<TokenId> quote = prompt;
  quote.insert(quote.end(), reference.tokens.begin(), reference.tokens.end());
  quote.insert(quote.end(), prompt.begin(), prompt.end());
  const auto quote_tokens = static_cast<int64_t>(quote.size());
  if (quote_tokens + o.gen_tokens > plain.context_length()) {
    report.skipped = fmt::format("quoted: not run, its {} prompt tokens and {} output tokens exceed the context of {}",
                                 quote_tokens, o.gen_tokens, plain.context_length());
    return report;
  }
  MET_ASSIGN_OR_RETURN(SpecWorkloadFigures quoted, run_workload(plain, spec, o, "quoted",
                                                                bench_request(std::move(quote), o.gen_tokens), {},
                                                                &reference.tokens));
  report.workloads.push_back(quoted);
  return report;
}

nlohmann::json spec_report_json(const SpecReport& r) {
  nlohmann::json j = nlohmann::json::array();
  for (const SpecWorkloadFigures& w : r.workloads) {
    nlohmann::json x = {{"workload", w.name},
                        {"output_tokens", w.output_tokens},
                        {"plain_tok_s", w.plain_tok_s},
                        {"spec_tok_s", w.spec_tok_s},
                        {"speedup", w.plain_tok_s > 0 ? w.spec_tok_s / w.plain_tok_s : 0.0},
                        {"drafted", w.drafted},
                        {"accepted", w.accepted}};
    if (w.quoted_prefix >= 0) x["quoted_prefix"] = w.quoted_prefix;
    j.push_back(std::move(x));
  }
  if (!r.skipped.empty()) j.push_back({{"workload", "quoted"}, {"skipped", r.skipped}});
  return j;
}

std::string spec_report_table(const SpecReport& r) {
  std::string out = "speculation, batch 1     tokens   plain tok/s    spec tok/s  speedup   accepted/drafted\n";
  for (const SpecWorkloadFigures& w : r.workloads) {
    const double rate = w.drafted > 0 ? 100.0 * static_cast<double>(w.accepted) / static_cast<double>(w.drafted) : 0;
    out += fmt::format("  {:<20} {:>8} {:>13.1f} {:>13.1f} {:>7.2f}x   {}/{} ({:.0f}%)\n", w.name, w.output_tokens,
                       w.plain_tok_s, w.spec_tok_s, w.plain_tok_s > 0 ? w.spec_tok_s / w.plain_tok_s : 0.0,
                       w.accepted, w.drafted, rate);
    if (w.quoted_prefix >= 0) {
      out += fmt::format("  {:<20} its first {} tokens are the quoted text's\n", "", w.quoted_prefix);
    }
  }
  if (!r.skipped.empty()) out += fmt::format("  {}\n", r.skipped);
  return out;
}

}  // namespace met
