// Tests for a MoE model's expert load in `met serve`'s /metrics
// (met:moe_expert_tokens_total{layer, expert}), run as a subprocess on a
// free loopback port with a model made by `met make-model`: per layer the
// counts add up to k × the rows the forward ran, which for a request is its
// prompt and every generated token but the last (never fed back); a dense
// model has no such family. The pipelined lane is off: it may run a row
// ahead that the host then discards, which the forward counts and no
// response shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_test_support.h"
#include "server/prometheus_text.h"
#include "testing/http_client.h"
#include "testing/temp_dir.h"

namespace met::serve_expert_load_test {
namespace {

using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

constexpr int kLayers = 2;  // make_small_model's
constexpr int kExperts = 8;
constexpr int kUsed = 3;
constexpr char kFamily[] = "met:moe_expert_tokens_total";

testing::PrometheusText scrape(uint16_t port) {
  auto r = http_call(port, "GET", "/metrics");
  EXPECT_TRUE(r.has_value());
  if (!r) return {};
  testing::PrometheusText t = testing::parse_prometheus_text(r->body);
  EXPECT_EQ(t.error, "") << r->body;
  return t;
}

// Every layer's counts, expert by expert, from the family's samples.
std::vector<std::vector<double>> expert_counts(const testing::PrometheusText& t, const std::string& model) {
  std::vector<std::vector<double>> out(kLayers, std::vector<double>(kExperts, -1));
  for (int layer = 0; layer < kLayers; ++layer) {
    for (int e = 0; e < kExperts; ++e) {
      const std::string key = std::string(kFamily) + "{model_name=\"" + model + "\",layer=\"" +
                              std::to_string(layer) + "\",expert=\"" + std::to_string(e) + "\"}";
      if (auto it = t.samples.find(key); it != t.samples.end()) out[layer][e] = it->second;
    }
  }
  return out;
}

double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

TEST(MetServeExpertLoad, EachLayersExpertCountsAddUpToKTimesTheRowsTheForwardRan) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(
      dir, "moe.gguf", 600,
      "--arch qwen3moe --experts " + std::to_string(kExperts) + " --experts-used " + std::to_string(kUsed) +
          " --expert-ff 64 --shared-expert-ff 96");
  ServeProcess server(serve_args(model, "--pipeline off --model-alias moe"));
  ASSERT_NE(server.port(), 0) << server.error();
  for (const auto& layer : expert_counts(scrape(server.port()), "moe")) {
    EXPECT_EQ(layer, std::vector<double>(kExperts, 0.0));  // every series exists from the start
  }
  // Distinct first words: no prompt shares a cached block with another.
  int64_t rows = 0;
  const char* prompts[] = {"Alpha beta gamma delta", "Zeta eta", "Omicron pi rho sigma tau upsilon phi"};
  for (size_t i = 0; i < std::size(prompts); ++i) {
    const nlohmann::json req = {{"prompt", prompts[i]}, {"max_tokens", 5 + 3 * i}, {"ignore_eos", true},
                                {"temperature", 0}};
    auto r = http_call(server.port(), "POST", "/v1/completions", req.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
    const nlohmann::json usage = body_json(r)["usage"];
    EXPECT_EQ(usage["completion_tokens"], 5 + 3 * i);
    rows += usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>() - 1;
  }
  const testing::PrometheusText after = scrape(server.port());
  EXPECT_EQ(after.types.at(kFamily), "counter");
  EXPECT_EQ(after.value("met:prefix_cache_hits_total"), 0);
  const auto counts = expert_counts(after, "moe");
  for (int layer = 0; layer < kLayers; ++layer) {
    EXPECT_EQ(total(counts[layer]), static_cast<double>(kUsed * rows)) << "layer " << layer;
    EXPECT_GE(*std::min_element(counts[layer].begin(), counts[layer].end()), 0) << "layer " << layer;
    EXPECT_GE(std::count_if(counts[layer].begin(), counts[layer].end(), [](double c) { return c > 0; }), kUsed)
        << "layer " << layer;
  }
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServeExpertLoad, ADenseModelHasNoExpertCounters) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "dense.gguf", 600);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  auto r = http_call(server.port(), "POST", "/v1/completions", R"({"prompt": "Alpha beta", "max_tokens": 3})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  const testing::PrometheusText t = scrape(server.port());
  EXPECT_EQ(t.types.count(kFamily), 0u);
  for (const auto& [key, v] : t.samples) EXPECT_NE(key.rfind("met:moe_", 0), 0u) << key;
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met::serve_expert_load_test
