// The scheduler's control of what a sequence may sample, with FakeDevice and
// FakeClock: thinking budgets force the think-end token exactly, a grammar
// holds every token outside thinking (with the pipelined lane on or off),
// and a tool-call close token ends the output with "tool_calls".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grammar/gbnf_parser.h"
#include "grammar/json_schema.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::SchedFixture;
using testing::SchedFixtureOptions;

constexpr TokenId kThinkStart = 300, kThinkEnd = 301;

SchedFixtureOptions with_pipeline(bool pipeline) {
  SchedFixtureOptions o;
  o.sched.pipeline = pipeline;
  return o;
}

EngineRequest thinking_request(int32_t budget, int32_t max_tokens) {
  EngineRequest r = testing::greedy_request(testing::make_prompt(12, 3), max_tokens);
  ThinkingConfig t;
  t.think_start = kThinkStart;
  t.think_end = kThinkEnd;
  t.starts_inside = true;
  t.budget = budget;
  t.watchdog = false;
  r.thinking = t;
  return r;
}

TEST(SchedulerControl, AThinkingBudgetForcesThinkEndExactlyAndCountsTheReasoningTokens) {
  for (bool pipeline : {false, true}) {
    SchedFixture f(with_pipeline(pipeline));
    const uint64_t id = f.submit(thinking_request(6, 12));
    f.run();
    const auto& rec = f.req.at(id);
    ASSERT_EQ(rec.tokens.size(), 12u) << "pipeline " << pipeline;
    for (size_t i = 0; i < 6; ++i) EXPECT_NE(rec.tokens[i], kThinkEnd);
    EXPECT_EQ(rec.tokens[6], kThinkEnd) << "forced after exactly 6 reasoning tokens";
    EXPECT_EQ(std::count(rec.tokens.begin(), rec.tokens.end(), kThinkEnd), 1);
    EXPECT_EQ(rec.finishes.at(0).usage.reasoning_tokens, 6);
    EXPECT_EQ(rec.finishes.at(0).finish_reason, "length");
  }
}

TEST(SchedulerControl, AModelThatEndsThinkingItselfIsLeftAlone) {
  SchedFixture f;
  f.device->set_next_token([](std::span<const TokenId> ctx) { return ctx.size() == 15 ? kThinkEnd : TokenId{40}; });
  const uint64_t id = f.submit(thinking_request(100, 8));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.tokens.size(), 8u);
  EXPECT_EQ(rec.tokens[3], kThinkEnd);
  EXPECT_EQ(rec.finishes.at(0).usage.reasoning_tokens, 3);
}

// {"a": "x" | "y", "n": integer}
constexpr const char* kSchema = R"({"type": "object", "properties": {
    "a": {"enum": ["x", "y"]}, "n": {"type": "integer", "minimum": 0, "maximum": 99}},
    "required": ["a", "n"], "additionalProperties": false})";

EngineRequest grammar_request(uint64_t seed, std::optional<ThinkingConfig> thinking) {
  EngineRequest r = testing::greedy_request(testing::make_prompt(9, static_cast<uint32_t>(seed)), 120);
  r.sampling.temperature = 1.0f;
  r.sampling.seed = seed;
  Result<Grammar> g = compile_json_schema(std::string_view(kSchema));
  EXPECT_TRUE(g.ok()) << g.status().message();
  r.grammar = std::make_shared<const Grammar>(std::move(*g));
  r.thinking = std::move(thinking);
  return r;
}

void expect_valid_answer(const std::string& text) {
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(text)) << text;
  ASSERT_TRUE(j.is_object()) << text;
  EXPECT_EQ(j.size(), 2u) << text;
  EXPECT_TRUE(j["a"] == "x" || j["a"] == "y") << text;
  ASSERT_TRUE(j["n"].is_number_integer()) << text;
  EXPECT_GE(j["n"].get<int>(), 0) << text;
  EXPECT_LE(j["n"].get<int>(), 99) << text;
}

TEST(SchedulerControl, EveryOutputUnderAGrammarParsesAndValidatesWhateverTheLogits) {
  for (bool pipeline : {false, true}) {
    SchedFixture f(with_pipeline(pipeline));
    std::vector<uint64_t> ids;
    for (uint64_t seed = 1; seed <= 12; ++seed) ids.push_back(f.submit(grammar_request(seed, std::nullopt)));
    f.run();
    for (uint64_t id : ids) {
      const auto& rec = f.req.at(id);
      ASSERT_EQ(rec.finishes.size(), 1u) << (rec.errors.empty() ? "" : rec.errors[0]);
      EXPECT_EQ(rec.finishes[0].finish_reason, "stop");
      expect_valid_answer(rec.text);
    }
  }
}

TEST(SchedulerControl, TheGrammarAppliesOnlyAfterThinkingEnds) {
  SchedFixture f;
  ThinkingConfig t;
  t.think_start = kThinkStart;
  t.think_end = kThinkEnd;
  t.starts_inside = true;
  t.budget = 4;
  const uint64_t id = f.submit(grammar_request(5, t));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.finishes.size(), 1u);
  ASSERT_GT(rec.tokens.size(), 5u);
  EXPECT_EQ(rec.tokens[4], kThinkEnd);
  const std::vector<TokenId> answer(rec.tokens.begin() + 5, rec.tokens.end());
  expect_valid_answer(testing::test_tokenizer().decode(answer));
}

TEST(SchedulerControl, TheToolCallCloseTokenEndsTheOutputWithToolCalls) {
  SchedFixture f;
  f.device->set_next_token([](std::span<const TokenId> ctx) { return ctx.size() == 14 ? TokenId{77} : TokenId{40}; });
  EngineRequest r = testing::greedy_request(testing::make_prompt(10, 2), 50);
  r.tool_call_end_token = 77;
  const uint64_t id = f.submit(std::move(r));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.tokens.size(), 5u);
  EXPECT_EQ(rec.tokens.back(), 77);
  EXPECT_EQ(rec.finishes.at(0).finish_reason, "tool_calls");
}

TEST(SchedulerControl, ControlTokensTextIsOutputOnlyWhenAsked) {
  const TokenId bos = *testing::test_tokenizer().vocab().special().bos;  // a control token, not EOG
  const std::string bos_text = testing::test_tokenizer().vocab().token(bos).text;
  for (bool render : {false, true}) {
    SchedFixture f;
    f.device->set_next_token([&](std::span<const TokenId>) { return bos; });
    EngineRequest r = testing::greedy_request(testing::make_prompt(6, 1), 2);
    r.render_special_tokens = render;
    const uint64_t id = f.submit(std::move(r));
    f.run();
    EXPECT_EQ(f.req.at(id).text, render ? bos_text + bos_text : "") << "render " << render;
  }
}

TEST(SchedulerControl, ATriggeredGrammarHoldsFromItsTriggerUntilCompleteThenTextRunsFree) {
  SchedFixture f;
  constexpr TokenId kTrigger = 300, kFree = 40;
  // The device wants the trigger at the 3rd output token, then kFree forever.
  f.device->set_next_token([](std::span<const TokenId> ctx) { return ctx.size() == 12 ? kTrigger : kFree; });
  EngineRequest r = testing::greedy_request(testing::make_prompt(10, 4), 16);
  Result<Grammar> g = compile_gbnf(R"(root ::= "[x=" [0-9] "]")");
  ASSERT_TRUE(g.ok()) << g.status().message();
  r.triggered_grammar = EngineRequest::TriggeredGrammar{kTrigger, std::make_shared<const Grammar>(std::move(*g))};
  const uint64_t id = f.submit(std::move(r));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.tokens.size(), 16u);
  const auto trig = std::find(rec.tokens.begin(), rec.tokens.end(), kTrigger);
  ASSERT_NE(trig, rec.tokens.end());
  EXPECT_EQ(trig - rec.tokens.begin(), 2);
  EXPECT_TRUE(std::all_of(rec.tokens.begin(), trig, [](TokenId t) { return t == kFree; })) << "free before";
  // After the trigger: the grammar's text, then the device's own tokens again.
  const auto free_again = std::find(trig + 1, rec.tokens.end(), kFree);
  ASSERT_NE(free_again, rec.tokens.end()) << "the text runs free once the grammar is complete";
  const std::string held = testing::test_tokenizer().decode(std::vector<TokenId>(trig + 1, free_again));
  EXPECT_EQ(held.size(), 5u) << held;
  EXPECT_EQ(held.rfind("[x=", 0), 0u) << held;
  EXPECT_TRUE(std::all_of(free_again, rec.tokens.end(), [](TokenId t) { return t == kFree; }))
      << ::testing::PrintToString(rec.tokens);
}

// Each printable byte may later close with any of eight digits: a state
// holds 9 * 8^n parse stacks after n bytes, past the default budget (4096)
// within any 3-byte token, so the first mask fails. The second has a
// million stacks before the first byte (every way to skip the nested
// optional repetitions), so it fails before any step.
constexpr const char* kTooAmbiguous[] = {
    "root ::= x\nx ::= [ -~] x \"1\" | [ -~] x \"2\" | [ -~] x \"3\" | [ -~] x \"4\" | [ -~] x \"5\" | "
    "[ -~] x \"6\" | [ -~] x \"7\" | [ -~] x \"8\" | \"\"",
    "root ::= ((\"a\"{0,100}){0,100}){0,100} \"b\""};

TEST(SchedulerControl, AGrammarTooAmbiguousToFollowFailsItsRequestAndNoOther) {
  for (auto [pipeline, gbnf] : {std::pair{false, kTooAmbiguous[0]}, std::pair{true, kTooAmbiguous[0]},
                                std::pair{false, kTooAmbiguous[1]}, std::pair{true, kTooAmbiguous[1]}}) {
    SchedFixture f(with_pipeline(pipeline));
    EngineRequest bad = testing::greedy_request(testing::make_prompt(9, 4), 20);
    bad.sampling.temperature = 1.0f;
    Result<Grammar> g = compile_gbnf(gbnf);
    ASSERT_TRUE(g.ok()) << g.status().message();
    bad.grammar = std::make_shared<const Grammar>(std::move(*g));
    bad.grammar_field = "response_format";
    const uint64_t bad_id = f.submit(std::move(bad));
    const uint64_t good_id = f.submit(testing::greedy_request(testing::make_prompt(9, 5), 12));
    f.run();
    const auto& rec = f.req.at(bad_id);
    ASSERT_EQ(rec.errors.size(), 1u) << "pipeline " << pipeline << ", " << gbnf;
    EXPECT_TRUE(rec.finishes.empty());
    EXPECT_TRUE(rec.tokens.empty()) << "no token was sampled from an empty mask";
    EXPECT_NE(rec.errors[0].find("too ambiguous"), std::string::npos) << rec.errors[0];
    EXPECT_EQ(rec.error_params[0], "response_format") << "the field the grammar came from is named";
    const auto& ok = f.req.at(good_id);
    ASSERT_EQ(ok.finishes.size(), 1u) << (ok.errors.empty() ? "" : ok.errors[0]);
    EXPECT_EQ(ok.tokens.size(), 12u);
  }
}

}  // namespace
}  // namespace met
