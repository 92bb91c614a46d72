// Tests for LoRA adapters in `met serve`, run as a subprocess on a free
// loopback port with a model and adapters made by `met make-model` and
// `met make-lora`: a request selects an adapter by `model: NAME` (vLLM's
// convention) and gets its own text, the same each time; /v1/models lists
// each adapter with its parent; POST /v1/load_lora_adapter and
// /v1/unload_lora_adapter load and unload at run time, behind the API key;
// a bad adapter file is a 400 naming the fault and nothing else changes; an
// unknown or unloaded name is a 404; /metrics counts requests and tokens per
// adapter.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "serve_test_support.h"
#include "server/prometheus_text.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met::serve_lora_test {
namespace {

using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

std::string make_lora(const testing::TempDir& dir, const std::string& model, const std::string& name, int seed) {
  const std::string out = dir.file(name + ".gguf");
  const auto r = testing::run_command(testing::met_binary() + " make-lora " + testing::shell_quote(model) + " -o " +
                                      testing::shell_quote(out) + " --rank 8 --seed " + std::to_string(seed));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

struct Completion {
  int status = 0;
  std::string text;
  std::string model;
  std::string error;
};

Completion complete(uint16_t port, const std::string& model) {
  const nlohmann::json req = {{"model", model},        {"prompt", "Once upon a time"}, {"max_tokens", 12},
                              {"temperature", 0},      {"ignore_eos", true}};
  auto r = http_call(port, "POST", "/v1/completions", req.dump());
  Completion c;
  if (!r) return c;
  c.status = r->status;
  const nlohmann::json j = body_json(r);
  if (r->status == 200) {
    c.text = j["choices"][0]["text"].get<std::string>();
    c.model = j["model"].get<std::string>();
  } else if (j.is_object() && j.contains("error")) {
    c.error = j["error"]["message"].get<std::string>();
  }
  return c;
}

std::optional<testing::HttpResponse> post(uint16_t port, const std::string& path, const nlohmann::json& body) {
  return http_call(port, "POST", path, body.dump());
}

TEST(MetServeLora, ARequestRunsTheAdapterItsModelNames) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "m.gguf", 600);
  const std::string a = make_lora(dir, model, "a", 1);
  ServeProcess server(serve_args(model, "--model-alias base --max-loras 2 --lora a=" + testing::shell_quote(a)));
  ASSERT_NE(server.port(), 0) << server.error();
  const Completion base = complete(server.port(), "base");
  const Completion with_a = complete(server.port(), "a");
  ASSERT_EQ(base.status, 200) << base.error;
  ASSERT_EQ(with_a.status, 200) << with_a.error;
  EXPECT_NE(base.text, with_a.text);
  EXPECT_EQ(with_a.model, "a");
  EXPECT_EQ(complete(server.port(), "a").text, with_a.text) << "the same request, another text";
  EXPECT_EQ(complete(server.port(), "base").text, base.text) << "the adapter's cached prefix reached the base";

  const nlohmann::json models = body_json(http_call(server.port(), "GET", "/v1/models"));
  ASSERT_EQ(models["data"].size(), 2u) << models.dump();
  EXPECT_EQ(models["data"][0]["id"], "base");
  EXPECT_EQ(models["data"][1]["id"], "a");
  EXPECT_EQ(models["data"][1]["parent"], "base");

  const Completion unknown = complete(server.port(), "b");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.error.find("The model 'b' does not exist."), std::string::npos) << unknown.error;

  auto metrics = http_call(server.port(), "GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  const testing::PrometheusText t = testing::parse_prometheus_text(metrics->body);
  const auto it = t.samples.find("met:lora_requests_total{adapter=\"a\",model_name=\"base\"}");
  ASSERT_NE(it, t.samples.end()) << metrics->body;
  EXPECT_EQ(it->second, 2.0);
  const auto tokens = t.samples.find("met:lora_generation_tokens_total{adapter=\"a\",model_name=\"base\"}");
  ASSERT_NE(tokens, t.samples.end());
  EXPECT_EQ(tokens->second, 24.0);
}

TEST(MetServeLora, AdaptersLoadAndUnloadAtRunTimeAndABadFileChangesNothing) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "m.gguf", 600);
  const std::string b = make_lora(dir, model, "b", 2);
  ServeProcess server(serve_args(model, "--model-alias base --max-loras 1"));
  ASSERT_NE(server.port(), 0) << server.error();
  const Completion base = complete(server.port(), "base");

  auto loaded = post(server.port(), "/v1/load_lora_adapter", {{"lora_name", "b"}, {"lora_path", b}});
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->status, 200) << loaded->body;
  EXPECT_NE(loaded->body.find("Success"), std::string::npos) << loaded->body;
  const Completion with_b = complete(server.port(), "b");
  ASSERT_EQ(with_b.status, 200) << with_b.error;
  EXPECT_NE(with_b.text, base.text);

  // Faults, each a 400 naming it; the adapters and the base are untouched.
  auto bad_file = post(server.port(), "/v1/load_lora_adapter", {{"lora_name", "c"}, {"lora_path", model}});
  ASSERT_TRUE(bad_file.has_value());
  EXPECT_EQ(bad_file->status, 400);
  EXPECT_NE(bad_file->body.find("not a LoRA adapter file"), std::string::npos) << bad_file->body;
  auto taken = post(server.port(), "/v1/load_lora_adapter", {{"lora_name", "b"}, {"lora_path", b}});
  EXPECT_EQ(taken->status, 400);
  EXPECT_NE(taken->body.find("loaded already"), std::string::npos) << taken->body;
  auto no_path = post(server.port(), "/v1/load_lora_adapter", {{"lora_name", "d"}});
  EXPECT_EQ(no_path->status, 400);
  EXPECT_NE(no_path->body.find("'lora_path' must be a non-empty string"), std::string::npos) << no_path->body;
  auto not_json = http_call(server.port(), "POST", "/v1/load_lora_adapter", "{");
  EXPECT_EQ(not_json->status, 400);
  EXPECT_EQ(complete(server.port(), "b").text, with_b.text);
  EXPECT_EQ(complete(server.port(), "base").text, base.text);

  auto unloaded = post(server.port(), "/v1/unload_lora_adapter", {{"lora_name", "b"}});
  EXPECT_EQ(unloaded->status, 200) << unloaded->body;
  EXPECT_EQ(complete(server.port(), "b").status, 404);
  auto again = post(server.port(), "/v1/unload_lora_adapter", {{"lora_name", "b"}});
  EXPECT_EQ(again->status, 404);
  EXPECT_NE(again->body.find("The lora adapter 'b' cannot be found."), std::string::npos) << again->body;
  // Loaded again under another name: the same text as before.
  post(server.port(), "/v1/load_lora_adapter", {{"lora_name", "b2"}, {"lora_path", b}});
  EXPECT_EQ(complete(server.port(), "b2").text, with_b.text);
}

TEST(MetServeLora, TheRoutesNeedTheApiKeyAndAdaptersEnabled) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "m.gguf", 600);
  const std::string b = make_lora(dir, model, "b", 2);
  ServeProcess keyed(serve_args(model, "--max-loras 1 --api-key sekret"));
  ASSERT_NE(keyed.port(), 0) << keyed.error();
  auto refused = post(keyed.port(), "/v1/load_lora_adapter", {{"lora_name", "b"}, {"lora_path", b}});
  EXPECT_EQ(refused->status, 401);
  ServeProcess plain(serve_args(model));
  ASSERT_NE(plain.port(), 0) << plain.error();
  auto off = post(plain.port(), "/v1/load_lora_adapter", {{"lora_name", "b"}, {"lora_path", b}});
  EXPECT_EQ(off->status, 400);
  EXPECT_NE(off->body.find("this server runs no LoRA adapters"), std::string::npos) << off->body;
}

TEST(MetServeLora, ABadAdapterAtStartIsOneLineNamingIt) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "m.gguf", 600);
  const auto r = testing::run_command(testing::met_binary() + " serve " + serve_args(model, "--lora x=" +
                                      testing::shell_quote(model)));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--lora x"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a LoRA adapter file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace met::serve_lora_test
