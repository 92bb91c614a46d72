// Tests for a hybrid recurrent model (qwen35, made by `met make-model`)
// through `met serve` as a subprocess on a free loopback port: a repeated
// prompt is served from the hybrid prefix cache (usage's cached_tokens: the
// deepest state snapshot) with the text of the cold request, and /metrics
// shows the recurrent-state slots, all free again when the requests are done;
// a server with a decode rollback ring (--state-rollback 2: its pipelined
// lane redoes the steps a changed mask discards) writes what one without
// writes; speculation through the API (the model's MTP block with
// --spec-mtp, a predicted output verified row by row) writes the text of a
// server without it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_test_support.h"
#include "server/prometheus_text.h"
#include "testing/http_client.h"
#include "testing/temp_dir.h"

namespace met::serve_hybrid_test {
namespace {

using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

// 300 prompt tokens; snapshots every 4 blocks (64 tokens) and at the
// prompt's last full block: the repeat resumes after 288.
TEST(MetServeHybrid, ARepeatedPromptIsServedFromAStateSnapshotWithTheColdText) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(
      dir, "hybrid.gguf", 600, "--arch qwen35 --full-attn-interval 2 --head-dim 32 --ssm-state 32 --ssm-groups 2 "
                               "--ssm-heads 4 --mtp-layers 0");
  ServeProcess server(serve_args(model, "--state-snapshot-blocks 4 --model-alias hybrid"));
  ASSERT_NE(server.port(), 0) << server.error();
  std::vector<int> prompt;
  for (int i = 0; i < 300; ++i) prompt.push_back((i * 37 + 11) % 590);
  const nlohmann::json req = {{"prompt", prompt}, {"max_tokens", 12}, {"ignore_eos", true}, {"temperature", 0}};
  std::vector<nlohmann::json> answers;
  for (int i = 0; i < 2; ++i) {
    auto r = http_call(server.port(), "POST", "/v1/completions", req.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
    answers.push_back(body_json(r));
  }
  EXPECT_EQ(answers[0]["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(answers[1]["usage"]["prompt_tokens_details"]["cached_tokens"], 288);
  EXPECT_EQ(answers[1]["choices"][0]["text"], answers[0]["choices"][0]["text"]);
  EXPECT_EQ(answers[1]["usage"]["completion_tokens"], 12);
  // The engine publishes its load after the tick that answered: poll until
  // the finished sequences' slots show as free.
  testing::PrometheusText t;
  for (int i = 0; i < 200; ++i) {
    auto m = http_call(server.port(), "GET", "/metrics");
    ASSERT_TRUE(m.has_value());
    t = testing::parse_prometheus_text(m->body);
    ASSERT_EQ(t.error, "");
    if (t.value("met:recurrent_state_slots_used") == 0) break;
  }
  EXPECT_EQ(t.value("met:recurrent_state_slots_used"), 0);
  EXPECT_GT(t.value("met:recurrent_state_slots_total"), 0);
  EXPECT_EQ(t.value("met:prefix_cache_hits_total"), 288);
  // At 64, 128, 192, 256 and 288 (the prompt's last full block), and 304:
  // the block boundary the first answer's output crossed.
  EXPECT_EQ(t.value("met:recurrent_state_snapshots_cached"), 6);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServeHybrid, ARollbackRingServesTheTextOfAServerWithout) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(
      dir, "hybrid.gguf", 600, "--arch qwen35 --full-attn-interval 2 --head-dim 32 --ssm-state 32 --ssm-groups 2 "
                               "--ssm-heads 4 --mtp-layers 0");
  std::vector<std::string> texts;
  for (const char* flags : {"--state-rollback 0", "--state-rollback 2"}) {
    ServeProcess server(serve_args(model, std::string(flags) + " --model-alias hybrid"));
    ASSERT_NE(server.port(), 0) << server.error();
    std::string all;
    for (int i = 0; i < 3; ++i) {
      // min_tokens changes each row's mask while a step is in flight.
      const nlohmann::json req = {{"prompt", "Once upon a time " + std::to_string(i)},
                                  {"max_tokens", 16},
                                  {"min_tokens", 4 + i},
                                  {"temperature", 0}};
      auto r = http_call(server.port(), "POST", "/v1/completions", req.dump());
      ASSERT_TRUE(r.has_value());
      ASSERT_EQ(r->status, 200) << r->body;
      all += body_json(r)["choices"][0]["text"].get<std::string>() + "|";
    }
    texts.push_back(all);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
  EXPECT_EQ(texts[1], texts[0]);
}

// A qwen35 model whose MTP block drafts well (make-model's fixture). The
// plain server's text is the text of a server drafting by the MTP block,
// whose /metrics counts accepted drafts, and of that server given the text
// as a predicted output, whose usage counts accepted prediction tokens.
TEST(MetServeHybrid, MtpDraftsAndAPredictedOutputServeTheTextOfAServerWithout) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(
      dir, "mtp.gguf", 600, "--arch qwen35 --full-attn-interval 2 --head-dim 32 --ssm-state 32 --ssm-groups 2 "
                            "--ssm-heads 4 --mtp-copy-last-layer --branch-scale 0.01");
  const nlohmann::json req = {{"prompt", "Once upon a time"}, {"max_tokens", 40}, {"ignore_eos", true},
                              {"temperature", 0}};
  auto complete = [](int port, const nlohmann::json& body) {
    auto r = http_call(port, "POST", "/v1/completions", body.dump());
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << r->body;
    return body_json(r);
  };
  std::string plain;
  {
    ServeProcess server(serve_args(model, "--model-alias hybrid"));
    ASSERT_NE(server.port(), 0) << server.error();
    plain = complete(server.port(), req)["choices"][0]["text"];
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
  ServeProcess server(serve_args(model, "--spec-mtp --spec-adaptive off --model-alias hybrid"));
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(complete(server.port(), req)["choices"][0]["text"], plain);
  auto m = http_call(server.port(), "GET", "/metrics");
  ASSERT_TRUE(m.has_value());
  const testing::PrometheusText t = testing::parse_prometheus_text(m->body);
  ASSERT_EQ(t.error, "");
  EXPECT_GT(t.value("met:spec_decode_num_accepted_tokens_total"), 0);
  nlohmann::json predicted = req;
  predicted["prediction"] = {{"type", "content"}, {"content", plain}};
  const nlohmann::json j = complete(server.port(), predicted);
  EXPECT_EQ(j["choices"][0]["text"], plain);
  EXPECT_GT(j["usage"]["completion_tokens_details"]["accepted_prediction_tokens"].get<int>(), 0) << j.dump();
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met::serve_hybrid_test
