// Tests for POST /v1/embeddings through `met serve` as a subprocess on a free
// loopback port, with a made model: unit-length vectors, the same vector for
// an input alone or in a batch (and beside a generation), `dimensions`
// truncating and renormalising, base64 holding the same float32s, usage,
// and 400s that name the field.
#include <gtest/gtest.h>

#include <boost/archive/iterators/binary_from_base64.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/temp_dir.h"

namespace met::serve_embeddings_test {
namespace {

using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

std::vector<float> floats_of(const nlohmann::json& v) { return v.get<std::vector<float>>(); }

double norm(const std::vector<float>& v) {
  double s = 0.0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

std::vector<float> decode_base64_floats(std::string text) {
  using namespace boost::archive::iterators;
  using Decoder = transform_width<binary_from_base64<std::string::const_iterator>, 8, 6>;
  const size_t pad = text.size() - text.find_last_not_of('=') - 1;
  std::replace(text.end() - static_cast<ptrdiff_t>(pad), text.end(), '=', 'A');
  std::string bytes(Decoder(text.begin()), Decoder(text.end()));
  bytes.resize(bytes.size() - pad);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

nlohmann::json embed(uint16_t port, const nlohmann::json& req, int want_status = 200) {
  auto r = http_call(port, "POST", "/v1/embeddings", req.dump());
  EXPECT_TRUE(r.has_value());
  if (!r.has_value()) return {};
  EXPECT_EQ(r->status, want_status) << r->body;
  return body_json(r);
}

class MetServeEmbeddings : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::make_small_model(dir_, "m.gguf", 600);
    server_ = std::make_unique<ServeProcess>(serve_args(model_, "--model-alias emb"));
    ASSERT_NE(server_->port(), 0) << server_->error();
  }
  uint16_t port() const { return server_->port(); }

  testing::TempDir dir_;
  std::string model_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(MetServeEmbeddings, GivesUnitVectorsThatDoNotDependOnTheBatch) {
  const nlohmann::json one = embed(port(), {{"input", "the cat sat"}, {"model", "emb"}});
  ASSERT_EQ(one["object"], "list");
  ASSERT_EQ(one["data"].size(), 1u);
  EXPECT_EQ(one["data"][0]["object"], "embedding");
  EXPECT_EQ(one["model"], "emb");
  const std::vector<float> alone = floats_of(one["data"][0]["embedding"]);
  EXPECT_EQ(alone.size(), 128u);
  EXPECT_NEAR(norm(alone), 1.0, 1e-5);
  const nlohmann::json many = embed(port(), {{"input", {"a dog ran", "the cat sat", "x"}}});
  ASSERT_EQ(many["data"].size(), 3u);
  EXPECT_EQ(many["data"][1]["index"], 1);
  const std::vector<float> batched = floats_of(many["data"][1]["embedding"]);
  ASSERT_EQ(batched.size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(batched[i], alone[i]) << i;
  EXPECT_NE(floats_of(many["data"][0]["embedding"]), alone);
  const int32_t tokens = many["usage"]["prompt_tokens"];
  EXPECT_GT(tokens, 3);
  EXPECT_EQ(many["usage"]["total_tokens"], tokens);
}

TEST_F(MetServeEmbeddings, DimensionsTruncateAndRenormaliseAndBase64HoldsTheSameFloats) {
  const std::vector<float> full = floats_of(embed(port(), {{"input", "hello"}})["data"][0]["embedding"]);
  const nlohmann::json cut_body = embed(port(), {{"input", "hello"}, {"dimensions", 16}});
  const std::vector<float> cut = floats_of(cut_body["data"][0]["embedding"]);
  ASSERT_EQ(cut.size(), 16u);
  EXPECT_NEAR(norm(cut), 1.0, 1e-5);
  const double head = norm(std::vector<float>(full.begin(), full.begin() + 16));
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(cut[i], full[i] / head, 1e-5) << i;
  const nlohmann::json b64 = embed(port(), {{"input", "hello"}, {"encoding_format", "base64"}});
  ASSERT_TRUE(b64["data"][0]["embedding"].is_string());
  EXPECT_EQ(decode_base64_floats(b64["data"][0]["embedding"]), full);
  const nlohmann::json ids = embed(port(), {{"input", {{5, 6, 7}, {8}}}});
  ASSERT_EQ(ids["data"].size(), 2u);
  EXPECT_EQ(ids["usage"]["prompt_tokens"], 4) << "token arrays are taken as given";
}

TEST_F(MetServeEmbeddings, RunsBesideAStreamingGeneration) {
  std::thread gen([&] {
    const nlohmann::json req = {{"prompt", "once upon"}, {"max_tokens", 64}, {"stream", true}, {"temperature", 0}};
    auto r = http_call(port(), "POST", "/v1/completions", req.dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("[DONE]"), std::string::npos);
  });
  for (int i = 0; i < 5; ++i) {
    const nlohmann::json e = embed(port(), {{"input", {"alpha", "beta"}}});
    EXPECT_EQ(e["data"].size(), 2u);
  }
  gen.join();
}

TEST_F(MetServeEmbeddings, BadRequestsGetA400NamingTheField) {
  struct Case {
    nlohmann::json body;
    const char* param;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {{{"model", "emb"}}, "input", "'input' is required"},
      {{{"input", ""}}, "input", "empty string"},
      {{{"input", nlohmann::json::array()}}, "input", "non-empty"},
      {{{"input", {"ok", 3}}}, "input", "input 1 must be"},
      {{{"input", {{1, 600}}}}, "input", "token 1 is not an id in [0, 600)"},
      {{{"input", "x"}, {"encoding_format", "hex"}}, "encoding_format", "\"float\" or \"base64\""},
      {{{"input", "x"}, {"dimensions", 129}}, "dimensions", "from 1 to the model's 128"},
      {{{"input", "x"}, {"dimensions", 0}}, "dimensions", "from 1"},
  };
  for (const Case& c : cases) {
    const nlohmann::json e = embed(port(), c.body, 400);
    EXPECT_EQ(e["error"]["param"], c.param) << c.body.dump();
    EXPECT_NE(e["error"]["message"].get<std::string>().find(c.needle), std::string::npos) << e.dump();
  }
  auto bad = http_call(port(), "POST", "/v1/embeddings", "{not json");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(embed(port(), {{"input", "still serving"}})["data"].size(), 1u);
}

TEST(MetServeEncoder, ABertServesEmbeddingsAndRefusesGeneration) {
  testing::TempDir dir;
  const std::string model = dir.file("bert.gguf");
  const auto made = testing::run_command(testing::met_binary() + " make-model -o " + testing::shell_quote(model) +
                                         " --arch bert --layers 2 --embd 128 --heads 4 --ff 256 --vocab 600");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ServeProcess server(serve_args(model, "--max-batch-tokens 64"));
  ASSERT_NE(server.port(), 0) << server.error();
  const nlohmann::json e = embed(server.port(), {{"input", {"the cat sat", "a dog", "the cat sat"}}});
  ASSERT_EQ(e["data"].size(), 3u);
  const std::vector<float> first = floats_of(e["data"][0]["embedding"]);
  EXPECT_NEAR(norm(first), 1.0, 1e-5);
  EXPECT_EQ(floats_of(e["data"][2]["embedding"]), first) << "an input whole in one step, never a cached prefix";
  std::string words;
  for (int i = 0; i < 80; ++i) words += "cat ";
  const nlohmann::json too_long = embed(server.port(), {{"input", words}}, 400);
  EXPECT_NE(too_long["error"]["message"].get<std::string>().find("raise --max-batch-tokens"), std::string::npos)
      << too_long.dump();
  auto chat = http_call(server.port(), "POST", "/v1/completions", R"({"prompt": "hi", "max_tokens": 2})");
  ASSERT_TRUE(chat.has_value());
  EXPECT_EQ(chat->status, 400);
  EXPECT_NE(chat->body.find("gives embeddings, not text"), std::string::npos) << chat->body;
}

}  // namespace
}  // namespace met::serve_embeddings_test
