// Tests for the harmony controls (server/harmony_controls.h): when the prompt
// opens the analysis message, which header ends the reasoning, and the
// thinking control's token sequences, on a vocab with harmony's markers.
#include "server/harmony_controls.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/check.h"
#include "model/synthetic_vocab.h"
#include "testing/test_tokenizer.h"

namespace met {
namespace harmony_controls_test {
namespace {

using Json = nlohmann::ordered_json;

const ChatFormat kHarmony{ChatFamily::kGptOss, "<|channel|>analysis<|message|>", "<|end|>"};
constexpr std::string_view kPrompt = "<|start|>user<|message|>hi<|end|><|start|>assistant";

// A byte-level tokenizer whose control tokens are harmony's.
const Tokenizer& harmony_tokenizer() {
  static const std::unique_ptr<Tokenizer> t = [] {
    SyntheticVocabOptions options;
    options.kind = VocabKind::kBpe;
    options.size = 1000;
    options.control_tokens = {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>",
                              "<|constrain|>"};
    Result<SyntheticVocab> v = make_synthetic_vocab(options);
    MET_CHECK(v.ok(), "{}", v.status().message());
    GgufMetadata md;
    write_vocab_metadata(*v, md);
    Result<Tokenizer> tok = Tokenizer::from_gguf(md);
    MET_CHECK(tok.ok(), "{}", tok.status().message());
    return std::make_unique<Tokenizer>(std::move(*tok));
  }();
  return *t;
}

std::vector<TokenId> ids(std::string_view text) {
  return harmony_tokenizer().encode(text, EncodeOptions{.add_special = false, .parse_special = true});
}

AgentFields forced(ToolChoice choice) {
  AgentFields a;
  a.tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather"}}])");
  a.tool_choice = choice;
  if (choice == ToolChoice::kNamed) a.tool_choice_name = "get_weather";
  return a;
}

TEST(HarmonyControls, ThePromptOpensTheAnalysisOnlyWhenTheRequestControlsReasoningOrTheAnswer) {
  AgentFields budget;
  budget.thinking_budget = 8;
  AgentFields json;
  json.constraint = OutputConstraint::kJsonObject;
  for (const AgentFields& a : {budget, json, forced(ToolChoice::kNamed), forced(ToolChoice::kRequired)}) {
    EXPECT_EQ(harmony_prompt_suffix(kHarmony, harmony_tokenizer(), kPrompt, a), "<|channel|>analysis<|message|>");
  }
  EXPECT_EQ(harmony_prompt_suffix(kHarmony, harmony_tokenizer(), kPrompt, AgentFields{}), "")
      << "the model picks its channel";
  EXPECT_EQ(harmony_prompt_suffix(kHarmony, harmony_tokenizer(), kPrompt, forced(ToolChoice::kAuto)), "");
  EXPECT_EQ(harmony_prompt_suffix(kHarmony, harmony_tokenizer(), "<|start|>user<|message|>hi<|end|>", budget), "")
      << "no generation prompt";
  const ChatFormat r1{ChatFamily::kDeepSeekR1, "<think>", "</think>"};
  EXPECT_EQ(harmony_prompt_suffix(r1, harmony_tokenizer(), kPrompt, budget), "");
}

TEST(HarmonyControls, TheAnswerHeaderIsFinalOrTheForcedCallsCommentary) {
  EXPECT_EQ(harmony_answer_header(AgentFields{}), "<|start|>assistant<|channel|>final<|message|>");
  EXPECT_EQ(harmony_answer_header(forced(ToolChoice::kNamed)),
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>");
  EXPECT_EQ(harmony_answer_header(forced(ToolChoice::kRequired)), "<|start|>assistant<|channel|>commentary<|message|>");
}

TEST(HarmonyControls, TheThinkingControlOpensOnTheAnalysisHeaderAndEndsWithTheAnswerHeader) {
  AgentFields a;
  a.thinking_budget = 4;
  const std::string prompt = std::string(kPrompt) + harmony_prompt_suffix(kHarmony, harmony_tokenizer(), kPrompt, a);
  const std::optional<ThinkingConfig> c = harmony_thinking_control(kHarmony, harmony_tokenizer(), prompt, a);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->starts_inside);
  EXPECT_EQ(c->budget, 4);
  EXPECT_EQ(c->start_sequence, ids("<|channel|>analysis<|message|>"));
  EXPECT_EQ(c->think_end, ids("<|end|>")[0]);
  EXPECT_EQ(c->end_sequence, ids("<|end|><|start|>assistant<|channel|>final<|message|>"));
  EXPECT_FALSE(c->end_sequence_after_model_end) << "after its own <|end|> the model picks its channel";

  const std::optional<ThinkingConfig> plain = harmony_thinking_control(kHarmony, harmony_tokenizer(), kPrompt, {});
  ASSERT_TRUE(plain.has_value()) << "reasoning is still counted and watched";
  EXPECT_FALSE(plain->starts_inside);
  EXPECT_FALSE(plain->budget.has_value());
}

TEST(HarmonyControls, AForcedCallEndsTheReasoningWithItsHeaderEvenAfterTheModelsOwnEnd) {
  const AgentFields a = forced(ToolChoice::kNamed);
  const std::optional<ThinkingConfig> c = harmony_thinking_control(kHarmony, harmony_tokenizer(), kPrompt, a);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->end_sequence, ids("<|end|>" + harmony_answer_header(a)));
  EXPECT_TRUE(c->end_sequence_after_model_end) << "a grammar cannot write the header's control tokens";
}

TEST(HarmonyControls, AVocabWithoutHarmonysControlTokensHasNoThinkingControlAndNoAnalysisHeader) {
  EXPECT_FALSE(harmony_thinking_control(kHarmony, testing::test_tokenizer(), kPrompt, {}).has_value());
  AgentFields budget;
  budget.thinking_budget = 8;
  EXPECT_EQ(harmony_prompt_suffix(kHarmony, testing::test_tokenizer(), kPrompt, budget), "");
}

}  // namespace
}  // namespace harmony_controls_test
}  // namespace met
