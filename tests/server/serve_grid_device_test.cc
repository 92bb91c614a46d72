// `met serve --device grid-host`: the CUDA device's forward program (run on
// the host backend) serving over HTTP, run as a subprocess on a free
// loopback port with a model made by `met make-model`: greedy completions,
// and two at once give the very text `--device cpu` gives (f32 weights and
// KV, where the two differ only in float summation order; a Q8_0 cache
// too);
// `--device cuda` in a build without CUDA, and an unknown device, exit with
// an error that names the flag.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met::serve_grid_device_test {
namespace {

using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

const char* const kPrompts[] = {"Alpha beta gamma delta", "Zeta eta", "Omicron pi rho sigma tau upsilon phi"};

// Each prompt's greedy completion, one after another, then the first two at once.
std::vector<std::string> completions(uint16_t port) {
  std::vector<std::string> texts;
  const auto complete = [port](const std::string& prompt) {
    const nlohmann::json req = {{"prompt", prompt}, {"max_tokens", 12}, {"ignore_eos", true}, {"temperature", 0}};
    auto r = http_call(port, "POST", "/v1/completions", req.dump());
    EXPECT_TRUE(r.has_value() && r->status == 200) << (r ? r->body : "no response");
    return r ? body_json(r)["choices"][0]["text"].get<std::string>() : std::string();
  };
  for (const char* p : kPrompts) texts.push_back(complete(p));
  std::string a, b;
  std::thread first([&] { a = complete(kPrompts[0]); });
  std::thread second([&] { b = complete(kPrompts[1]); });
  first.join();
  second.join();
  texts.push_back(a);
  texts.push_back(b);
  return texts;
}

// The completions of `met serve MODEL FLAGS`, the server stopped cleanly.
std::vector<std::string> served_completions(const std::string& model, const std::string& flags) {
  ServeProcess server(serve_args(model, flags));
  EXPECT_NE(server.port(), 0) << server.error();
  if (server.port() == 0) return {};
  std::vector<std::string> texts = completions(server.port());
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  return texts;
}

// The CPU device's completions with `--kv-dtype DTYPE`, after checking the
// grid device served the very same.
std::vector<std::string> cpu_texts_the_grid_matches(const std::string& dtype) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "m.gguf", 600);
  const std::vector<std::string> on_cpu = served_completions(model, "--kv-dtype " + dtype);
  const std::vector<std::string> on_grid = served_completions(model, "--kv-dtype " + dtype + " --device grid-host");
  EXPECT_EQ(on_cpu.size(), 5u);
  EXPECT_EQ(on_grid, on_cpu);
  return on_cpu;
}

TEST(MetServeGridDevice, GivesTheCpuDevicesGreedyText) {
  const std::vector<std::string> on_cpu = cpu_texts_the_grid_matches("f32");
  ASSERT_EQ(on_cpu.size(), 5u);
  EXPECT_EQ(on_cpu[0], on_cpu[3]);  // alone or beside another: the same text
}

// `--kv-dtype q8_0`: the grid device quantizes its cache by the CPU cache's
// rule, so both serve the same greedy text.
TEST(MetServeGridDevice, AQ8_0CacheGivesTheCpusText) { cpu_texts_the_grid_matches("q8_0"); }

TEST(MetServeGridDevice, ADeviceThisBuildLacksIsRefusedByName) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "m.gguf", 600);
#if !defined(MET_HAVE_CUDA)
  auto r = testing::run_command(testing::met_binary() + " serve " + testing::shell_quote(model) +
                                " --port 0 --device cuda");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--device cuda: this met was built without CUDA"), std::string::npos) << r.err;
#endif
  auto bad = testing::run_command(testing::met_binary() + " serve " + testing::shell_quote(model) +
                                  " --port 0 --device tpu");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--device 'tpu' is not cpu, cuda or grid-host"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace met::serve_grid_device_test
