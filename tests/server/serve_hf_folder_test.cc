// Tests for `met serve DIR` on a Hugging Face model folder (the shared
// tinystories-656k-hf: config.json, model.safetensors, tokenizer.json) as a
// subprocess on a free loopback port: /v1/models names the folder, and a
// greedy /v1/completions answers each prompt of its expected.jsonl with the
// expected text. Skips where ../shared is absent.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/shared_data.h"

namespace met::serve_hf_folder_test {
namespace {

using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

TEST(MetServeHfFolder, CompletionsGiveTheFoldersExpectedGreedyText) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  ServeProcess server(serve_args(dir));
  ASSERT_NE(server.port(), 0) << server.error();
  auto models = http_call(server.port(), "GET", "/v1/models");
  ASSERT_TRUE(models.has_value());
  EXPECT_EQ(body_json(models)["data"][0]["id"], "tinystories-656k-hf");
  std::ifstream expected(dir + "/expected.jsonl");
  std::string line;
  int checked = 0;
  while (std::getline(expected, line)) {
    const nlohmann::json want = nlohmann::json::parse(line);
    const nlohmann::json req = {{"prompt", want["prompt"]},
                                {"max_tokens", want["n_predict"]},
                                {"temperature", 0}};
    auto r = http_call(server.port(), "POST", "/v1/completions", req.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(body_json(r)["choices"][0]["text"], want["output_text"]) << want["prompt"];
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

}  // namespace
}  // namespace met::serve_hf_folder_test
