// Tests for speculative decoding through `met serve` on stories260K (greedy),
// run as a subprocess on a free loopback port: OpenAI's Predicted Outputs
// (`prediction`) leave the text as it is and report
// accepted_prediction_tokens and rejected_prediction_tokens; a prediction
// with an edit is picked up again after it, in a long repetitive text where
// it is; a malformed prediction is a 400
// naming its field, as is a malformed `speculative`; the log line at each
// request's finish names its drafts; `--spec-lookup` gives
// the text of a server without it, greedy and sampled with a seed, counts
// its drafts in /metrics, and drafts nothing for `"speculative": false`;
// with the draft budget on (the default) the text is the same and
// /metrics counts the drafts it held back. `--draft-model` (the model
// drafting for itself) gives the text of a server without it, greedy and
// sampled, every greedy draft accepted; a draft model that cannot be opened
// stops the server with a message naming it.
// Timing is never asserted.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>
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

// The completion of "Once upon a time" with `extra` fields (greedy unless
// they give a temperature); the body.
PlainJson complete(uint16_t port, const std::string& extra = "") {
  const bool sampled = extra.find("\"temperature\"") != std::string::npos;
  const std::string body = R"({"prompt": "Once upon a time", "max_tokens": )" + std::to_string(kMaxTokens) +
                           (sampled ? "" : R"(, "temperature": 0)") + R"(, "ignore_eos": true)" + extra + "}";
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
  // Every draft verified (the draft budget would hold some back, as the
  // host's timing has it), so the counts are the matcher's alone.
  ServeProcess server(serve_args(model, "--spec-adaptive off"));
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
  // Each request's line at its finish names its drafts.
  EXPECT_NE(server.stderr_text().find(fmt::format("{} tokens, finish length", kMaxTokens)), std::string::npos)
      << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("accepted ("), std::string::npos) << server.stderr_text();
}

// A long rewrite with three words changed, on a story model whose text
// repeats itself (the words before an edit occur again further on): after
// each edit the prediction is picked up where the text goes on, not at a
// later repeat, so nearly every token is accepted (520 of 1,000 when the
// matcher took the first later occurrence).
TEST(MetServePredictedOutputs, ThreeEditsInALongRepetitiveTextAreEachPickedUpWhereTheyAre) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--spec-adaptive off"));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string body = R"({"prompt": "Once upon a time", "max_tokens": 1000, "temperature": 0,)"
                           R"( "ignore_eos": true)";
  auto plain = http_call(server.port(), "POST", "/v1/completions", body + "}");
  ASSERT_TRUE(plain.has_value());
  ASSERT_EQ(plain->status, 200) << plain->body;
  const std::string text = body_json(plain)["choices"][0]["text"];
  std::string edited = text;
  for (const auto& [fraction, word] : {std::pair{0.75, " green "}, {0.5, " and then "}, {0.25, " quickly "}}) {
    const auto at = static_cast<size_t>(static_cast<double>(edited.size()) * fraction);
    edited = edited.substr(0, at) + word + edited.substr(at + 8);
  }
  auto got = http_call(server.port(), "POST", "/v1/completions", body + prediction_field(edited) + "}");
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->status, 200) << got->body;
  const PlainJson edit = body_json(got);
  EXPECT_EQ(edit["choices"][0]["text"], text);
  EXPECT_GT(details(edit)["rejected_prediction_tokens"].get<int>(), 0) << edit["usage"];
  EXPECT_GE(details(edit)["accepted_prediction_tokens"].get<int>(), 900) << edit["usage"];
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
      {R"("speculative": "no")", "speculative"},
      {R"("speculative": {"max_draft_tokens": 99})", "speculative.max_draft_tokens"},
      {R"("speculative": {"max_draft_tokens": -1})", "speculative.max_draft_tokens"},
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

double drafted_so_far(uint16_t port) {
  auto m = http_call(port, "GET", "/metrics");
  EXPECT_TRUE(m.has_value());
  if (!m) return -1;
  const testing::PrometheusText t = testing::parse_prometheus_text(m->body);
  EXPECT_LE(t.value("met:spec_decode_num_accepted_tokens_total").value_or(-1),
            t.value("met:spec_decode_num_draft_tokens_total").value_or(0));
  return t.value("met:spec_decode_num_draft_tokens_total").value_or(0);
}

constexpr const char* kSampled = R"(, "temperature": 0.9, "top_p": 0.95, "seed": 11)";

struct PlainTexts {
  std::string greedy;
  std::string sampled;  // with kSampled
};

// The texts of a server without speculation (empty when it did not start).
PlainTexts plain_texts(const std::string& model) {
  ServeProcess plain(serve_args(model));
  EXPECT_NE(plain.port(), 0) << plain.error();
  if (plain.port() == 0) return {};
  PlainTexts t;
  t.greedy = complete(plain.port(), "")["choices"][0]["text"];
  t.sampled = complete(plain.port(), kSampled)["choices"][0]["text"];
  EXPECT_EQ(plain.stop(), 0) << plain.stderr_text();
  return t;
}

TEST(MetServeSpecLookup, TheTextIsTheTextWithoutItAndMetricsCountTheDrafts) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const PlainTexts plain = plain_texts(model);
  ASSERT_FALSE(plain.greedy.empty());
  const std::string& want = plain.greedy;
  const std::string& want_sampled = plain.sampled;
  ServeProcess server(serve_args(model, "--spec-lookup 4 --spec-adaptive off"));  // every proposal verified
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(complete(server.port(), "")["choices"][0]["text"], want);
  const double greedy_drafts = drafted_so_far(server.port());
  EXPECT_GT(greedy_drafts, 0);
  EXPECT_EQ(complete(server.port(), kSampled)["choices"][0]["text"], want_sampled);
  const double sampled_drafts = drafted_so_far(server.port());
  EXPECT_GT(sampled_drafts, greedy_drafts) << "sampled requests are drafted too";
  EXPECT_EQ(complete(server.port(), R"(, "speculative": false)")["choices"][0]["text"], want);
  EXPECT_EQ(drafted_so_far(server.port()), sampled_drafts) << "speculative: false drafts nothing";
  EXPECT_EQ(complete(server.port(), R"(, "speculative": {"max_draft_tokens": 2})")["choices"][0]["text"], want);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

// The default, --spec-adaptive on: the same text, and every proposal is
// either verified or counted as held back by the draft budget (which of the
// two depends on the host's timing).
TEST(MetServeSpecLookup, TheDraftBudgetKeepsTheTextAndCountsWhatItHoldsBack) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string want = plain_texts(model).greedy;
  ASSERT_FALSE(want.empty());
  ServeProcess server(serve_args(model, "--spec-lookup 4"));
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(complete(server.port(), "")["choices"][0]["text"], want);
  auto m = http_call(server.port(), "GET", "/metrics");
  ASSERT_TRUE(m.has_value());
  const testing::PrometheusText t = testing::parse_prometheus_text(m->body);
  const std::optional<double> withheld = t.value("met:spec_decode_num_withheld_tokens_total");
  ASSERT_TRUE(withheld.has_value()) << m->body;
  EXPECT_GT(*withheld + t.value("met:spec_decode_num_draft_tokens_total").value_or(0), 0) << m->body;
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServeDraftModel, TheTextIsTheTextWithoutItAndEveryGreedyDraftIsAccepted) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const PlainTexts plain = plain_texts(model);
  ASSERT_FALSE(plain.greedy.empty());
  const std::string& want = plain.greedy;
  const std::string& want_sampled = plain.sampled;
  ServeProcess server(serve_args(model, fmt::format("--draft-model {} --draft-max 5 --spec-adaptive off", model)));
  ASSERT_NE(server.port(), 0) << server.error();
  EXPECT_EQ(complete(server.port(), "")["choices"][0]["text"], want);
  auto m = http_call(server.port(), "GET", "/metrics");
  ASSERT_TRUE(m.has_value());
  const testing::PrometheusText t = testing::parse_prometheus_text(m->body);
  const double drafted = t.value("met:spec_decode_num_draft_tokens_total").value_or(0);
  EXPECT_GT(drafted, kMaxTokens / 2) << m->body;
  EXPECT_EQ(t.value("met:spec_decode_num_accepted_tokens_total").value_or(-1), drafted) << m->body;
  EXPECT_EQ(complete(server.port(), kSampled)["choices"][0]["text"], want_sampled);
  EXPECT_GT(drafted_so_far(server.port()), drafted) << "sampled requests are drafted too";
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("accepted (100%)"), std::string::npos) << server.stderr_text();
}

TEST(MetServeDraftModel, ADraftModelThatCannotBeOpenedStopsTheServerNamingIt) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--draft-model /nonexistent/draft.gguf"));
  EXPECT_EQ(server.port(), 0);
  EXPECT_NE(server.wait(), 0);
  EXPECT_NE(server.stderr_text().find("draft model /nonexistent/draft.gguf"), std::string::npos)
      << server.stderr_text();
}

}  // namespace
}  // namespace met
