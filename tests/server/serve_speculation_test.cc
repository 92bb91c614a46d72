// Tests for speculative decoding through `met serve` on stories260K (greedy),
// run as a subprocess on a free loopback port: OpenAI's Predicted Outputs
// (`prediction`) leave the text as it is and report
// accepted_prediction_tokens and rejected_prediction_tokens; a prediction
// with an edit is picked up again after it; a malformed prediction is a 400
// naming its field; `--spec-lookup` gives the text of a server without it
// and counts its drafts in /metrics. Timing is never asserted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "server/prometheus_text.h"
#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using PlainJson = nlohmann::json;
using testing::body_json;
using testing::http_call;
using testing::serve_args;
using testing::ServeProcess;

constexpr int kMaxTokens = 120;

// The greedy completion of "Once upon a time" with `extra` fields; the body.
PlainJson complete(uint16_t port, const std::string& extra = "") {
  const std::string body = R"({"prompt": "Once upon a time", "max_tokens": )" + std::to_string(kMaxTokens) +
                           R"(, "temperature": 0, "ignore_eos": true)" + extra + "}";
  auto r = http_call(port, "POST", "/v1/completions", body);
  EXPECT_TRUE(r.has_value());
  if (!r) return {};
  EXPECT_EQ(r->status, 200) << r->body;
  return body_json(r);
}

std::string prediction_field(const std::string& text) {
  return R"(, "prediction": {"type": "content", "content": )" + PlainJson(text).dump() + "}";
}

const PlainJson& details(const PlainJson& body) { return body["usage"]["completion_tokens_details"]; }

TEST(MetServePredictedOutputs, APredictionOfTheTextIsAcceptedAndAnEditIsPickedUpAgain) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const PlainJson plain = complete(server.port());
  const std::string text = plain["choices"][0]["text"];
  ASSERT_EQ(plain["usage"]["completion_tokens"], kMaxTokens);
  EXPECT_EQ(details(plain)["accepted_prediction_tokens"], 0);
  EXPECT_EQ(details(plain)["rejected_prediction_tokens"], 0);

  // The prediction is the text, tokenized on its own: its first token may
  // differ from the output's (a leading piece), then it is found again.
  const PlainJson same = complete(server.port(), prediction_field(text));
  EXPECT_EQ(same["choices"][0]["text"], text);
  EXPECT_EQ(same["usage"]["completion_tokens"], kMaxTokens);
  EXPECT_GE(details(same)["accepted_prediction_tokens"].get<int>(), kMaxTokens - 8) << same["usage"];
  EXPECT_LE(details(same)["rejected_prediction_tokens"].get<int>(), 8) << same["usage"];

  // A sentence in the middle rewritten: rejected drafts there, accepted
  // ones after it.
  const size_t at = text.size() / 2;
  const std::string edited = text.substr(0, at) + " The cat sat on a big red hat." + text.substr(at + 12);
  const PlainJson edit = complete(server.port(), prediction_field(edited));
  EXPECT_EQ(edit["choices"][0]["text"], text);
  EXPECT_GT(details(edit)["rejected_prediction_tokens"].get<int>(), 0) << edit["usage"];
  EXPECT_GE(details(edit)["accepted_prediction_tokens"].get<int>(), kMaxTokens / 2) << edit["usage"];
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServePredictedOutputs, AMalformedPredictionIsA400NamingItsField) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::pair<const char*, const char*> cases[] = {
      {R"("prediction": "text")", "prediction"},
      {R"("prediction": {"type": "text", "content": "x"})", "prediction.type"},
      {R"("prediction": {"type": "content", "content": 3})", "prediction.content"},
      {R"("prediction": {"type": "content", "content": [{"type": "image_url"}]})", "prediction.content"},
  };
  for (const auto& [field, param] : cases) {
    auto r = http_call(server.port(), "POST", "/v1/completions",
                       std::string(R"({"prompt": "Once", "max_tokens": 4, )") + field + "}");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400) << field;
    EXPECT_EQ(body_json(r)["error"]["param"], param) << r->body;
  }
  // Text parts are joined.
  auto r = http_call(server.port(), "POST", "/v1/completions",
                     R"({"prompt": "Hi", "max_tokens": 4,
                         "prediction": {"type": "content", "content": [{"type": "text", "text": "a"},
                                                                       {"type": "text", "text": "b"}]}})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServeSpecLookup, TheTextIsTheTextWithoutItAndMetricsCountTheDrafts) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  std::string want;
  {
    ServeProcess plain(serve_args(model));
    ASSERT_NE(plain.port(), 0) << plain.error();
    want = complete(plain.port(), "")["choices"][0]["text"];
    EXPECT_EQ(plain.stop(), 0) << plain.stderr_text();
  }
  ServeProcess server(serve_args(model, "--spec-lookup 4"));
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(complete(server.port(), "")["choices"][0]["text"], want);
  auto m = http_call(server.port(), "GET", "/metrics");
  ASSERT_TRUE(m.has_value());
  const testing::PrometheusText t = testing::parse_prometheus_text(m->body);
  EXPECT_GT(t.value("met:spec_decode_num_draft_tokens_total").value_or(0), 0) << m->body;
  EXPECT_LE(t.value("met:spec_decode_num_accepted_tokens_total").value_or(-1),
            t.value("met:spec_decode_num_draft_tokens_total").value_or(0));
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met
