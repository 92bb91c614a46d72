// met_serving_load: a serving load client for a running `met serve`. At each
// concurrency level N, N client threads send streamed /v1/completions
// requests back to back (random token-id prompts, so no two share a prefix;
// ignore_eos, so every output is --output-tokens long) until the level's
// --requests are done. Each request is timed as its client sees it: TTFT
// (request sent to the first event carrying text) and inter-token latency
// (the gaps between consecutive text-carrying events). Per level it reports
// request throughput, output tok/s (usage.completion_tokens over the level's
// wall time), and TTFT and ITL p50/p90/p99; with --server-pid, the server's
// largest thread count and resident set seen during the level (sampled from
// /proc/PID/status every 20 ms).
//   met_serving_load --port 8080 --concurrency 1,4,16,64 --requests 64
//     --prompt-tokens 128 --output-tokens 128 --server-pid $(pidof met)
// --api-keys k1,k2,... spreads the clients over keys (tenants, with a key
// file naming one per key).
// Invariants: every request is checked (200, [DONE], usage); a failed one is
// counted and reported, never timed.
// Threading: the main thread plus N client threads per level.
// Tested by use; figures are noisy on a shared machine.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <optional>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "serving/sse_client.h"

namespace met::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::vector<int> concurrency = {1, 4, 16, 64};
  int requests = 0;  // per level; 0: max(4 * N, 16)
  int prompt_tokens = 128;
  int output_tokens = 128;
  int token_lo = 100;  // prompt ids are drawn from [token_lo, token_hi)
  int token_hi = 1000;
  uint64_t seed = 1;
  int server_pid = 0;  // 0: not sampled
  std::vector<std::string> api_keys;  // client c sends api_keys[c % size] (none: no key)
};

struct RequestTiming {
  double ttft_ms = 0;
  std::vector<double> itl_ms;
  int64_t output_tokens = 0;
};

struct LevelReport {
  int concurrency = 0;
  int ok = 0;
  int failed = 0;
  std::string first_error;
  double seconds = 0;
  int64_t output_tokens = 0;
  std::vector<double> ttft_ms;
  std::vector<double> itl_ms;
  int64_t server_threads_max = 0;
  int64_t server_rss_max_kib = 0;
};

// Threads and VmRSS (KiB) of process `pid`; zeros when it cannot be read.
std::pair<int64_t, int64_t> server_threads_and_rss(int pid) {
  std::FILE* f = std::fopen(fmt::format("/proc/{}/status", pid).c_str(), "r");
  if (f == nullptr) return {0, 0};
  char line[256];
  int64_t threads = 0;
  int64_t rss = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long v = 0;
    if (std::sscanf(line, "Threads: %lld", &v) == 1) threads = v;
    if (std::sscanf(line, "VmRSS: %lld", &v) == 1) rss = v;
  }
  std::fclose(f);
  return {threads, rss};
}

// Samples the server while a level runs.
class ServerSampler {
 public:
  ServerSampler(int pid, LevelReport& rep) : pid_(pid), rep_(rep) {
    if (pid_ > 0) thread_ = std::thread([this] { run(); });
  }
  ~ServerSampler() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    for (;;) {
      const bool last = done_.load();
      const auto [threads, rss] = server_threads_and_rss(pid_);
      rep_.server_threads_max = std::max(rep_.server_threads_max, threads);
      rep_.server_rss_max_kib = std::max(rep_.server_rss_max_kib, rss);
      if (last) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  int pid_;
  LevelReport& rep_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

std::string request_body(const Options& o, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> id(o.token_lo, o.token_hi - 1);
  std::vector<int> prompt(static_cast<size_t>(o.prompt_tokens));
  for (int& t : prompt) t = id(rng);
  return Json{{"prompt", prompt},      {"max_tokens", o.output_tokens},
              {"ignore_eos", true},    {"temperature", 0},
              {"stream", true},        {"stream_options", {{"include_usage", true}}}}
      .dump();
}

// The timing of one finished stream; an error string when it is not whole.
std::string time_stream(const SseResult& r, RequestTiming& t) {
  if (!r.error.empty()) return r.error;
  std::optional<Clock::time_point> last;
  for (const SseEvent& e : r.events) {
    if (e.data == "[DONE]") break;
    const Json j = Json::parse(e.data, nullptr, false);
    if (j.is_discarded()) return "bad event " + e.data;
    if (j.contains("error")) return "error event " + e.data;
    if (j.contains("usage") && j["usage"].is_object()) t.output_tokens = j["usage"]["completion_tokens"];
    if (j["choices"].empty() || j["choices"][0].value("text", "").empty()) continue;
    if (!last) t.ttft_ms = ms(e.at - r.sent);
    if (last) t.itl_ms.push_back(ms(e.at - *last));
    last = e.at;
  }
  if (!last) return "no text";
  return "";
}

LevelReport run_level(const Options& o, int n, int requests) {
  LevelReport rep;
  rep.concurrency = n;
  std::atomic<int> next{0};
  std::mutex mu;
  const Clock::time_point start = Clock::now();
  std::optional<ServerSampler> sampler;
  sampler.emplace(o.server_pid, rep);
  std::vector<std::thread> clients;
  for (int c = 0; c < n; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(n) * 7919 + static_cast<uint64_t>(c));
      while (next.fetch_add(1) < requests) {
        const std::string key = o.api_keys.empty() ? "" : o.api_keys[static_cast<size_t>(c) % o.api_keys.size()];
        const SseResult r = stream_request(o.host, o.port, "/v1/completions", request_body(o, rng), key);
        RequestTiming t;
        const std::string error = time_stream(r, t);
        std::lock_guard<std::mutex> lock(mu);
        if (!error.empty()) {
          if (rep.failed++ == 0) rep.first_error = error;
          continue;
        }
        ++rep.ok;
        rep.output_tokens += t.output_tokens;
        rep.ttft_ms.push_back(t.ttft_ms);
        rep.itl_ms.insert(rep.itl_ms.end(), t.itl_ms.begin(), t.itl_ms.end());
      }
    });
  }
  for (std::thread& t : clients) t.join();
  rep.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  sampler.reset();
  return rep;
}

void print_header(const Options& o) {
  std::printf("met_serving_load: %s:%u, prompt %d tokens, output %d tokens (ignore_eos, greedy)\n",
              o.host.c_str(), static_cast<unsigned>(o.port), o.prompt_tokens, o.output_tokens);
  std::printf("| conc | ok | failed | req/s | out tok/s | TTFT p50 | TTFT p90 | TTFT p99 | ITL p50 | ITL p90 | ITL p99 "
              "| srv threads | srv RSS |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

void print_level(const LevelReport& r) {
  const std::string threads = r.server_threads_max > 0 ? std::to_string(r.server_threads_max) : "-";
  const std::string rss =
      r.server_rss_max_kib > 0 ? fmt::format("{:.1f} MiB", static_cast<double>(r.server_rss_max_kib) / 1024) : "-";
  std::printf("| %d | %d | %d | %.2f | %.1f | %.1f ms | %.1f ms | %.1f ms | %.2f ms | %.2f ms | %.2f ms | %s | %s |\n",
              r.concurrency, r.ok, r.failed, r.ok / r.seconds, static_cast<double>(r.output_tokens) / r.seconds,
              percentile(r.ttft_ms, 50), percentile(r.ttft_ms, 90), percentile(r.ttft_ms, 99),
              percentile(r.itl_ms, 50), percentile(r.itl_ms, 90), percentile(r.itl_ms, 99), threads.c_str(),
              rss.c_str());
  if (r.failed > 0) std::printf("  (level %d: first failure: %s)\n", r.concurrency, r.first_error.c_str());
  std::fflush(stdout);
}

}  // namespace
}  // namespace met::bench

int main(int argc, char** argv) {
  met::bench::Options o;
  CLI::App app("Drives a running `met serve` with streamed completions at several concurrency levels");
  app.add_option("--host", o.host, "Server address (IPv4)")->capture_default_str();
  app.add_option("--port", o.port, "Server port")->capture_default_str();
  app.add_option("--concurrency", o.concurrency, "Levels, e.g. 1,4,16,64")->delimiter(',')->capture_default_str();
  app.add_option("--requests", o.requests, "Requests per level (0: max(4 * N, 16))")->capture_default_str();
  app.add_option("--prompt-tokens", o.prompt_tokens, "Prompt length in tokens")->capture_default_str();
  app.add_option("--output-tokens", o.output_tokens, "Output length in tokens")->capture_default_str();
  app.add_option("--token-lo", o.token_lo, "Lowest prompt token id")->capture_default_str();
  app.add_option("--token-hi", o.token_hi, "One past the highest prompt token id")->capture_default_str();
  app.add_option("--seed", o.seed, "Prompt seed")->capture_default_str();
  app.add_option("--server-pid", o.server_pid, "Sample this server process's threads and RSS per level");
  app.add_option("--api-keys", o.api_keys,
                 "Client c sends key c % K (one tenant each with a key file of KEY TENANT lines)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  if (o.token_hi <= o.token_lo || o.prompt_tokens < 1 || o.output_tokens < 1) {
    std::fprintf(stderr, "met_serving_load: need --token-hi > --token-lo and positive lengths\n");
    return 2;
  }
  met::bench::print_header(o);
  int failed = 0;
  for (int n : o.concurrency) {
    const int requests = o.requests > 0 ? o.requests : std::max(4 * n, 16);
    const met::bench::LevelReport r = met::bench::run_level(o, n, requests);
    met::bench::print_level(r);
    failed += r.failed;
  }
  return failed == 0 ? 0 : 1;
}
