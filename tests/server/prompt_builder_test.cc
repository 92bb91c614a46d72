// Tests for PromptBuilder over the small test tokenizer.
#include "server/prompt_builder.h"

#include <gtest/gtest.h>

#include "testing/test_tokenizer.h"

namespace met {
namespace {

using testing::test_tokenizer;

constexpr RequestLimits kLimits{.vocab_size = 512, .max_seq_len = 128, .num_kv_blocks = 64};

OpenAiRequest completion(std::string prompt) {
  OpenAiRequest r;
  r.endpoint = Endpoint::kCompletions;
  r.prompts.emplace_back(std::move(prompt));
  return r;
}

// The first prompt's request (completions may batch several).
ApiResult<EngineRequest> build1(const PromptBuilder& b, OpenAiRequest r) {
  ApiResult<std::vector<EngineRequest>> all = b.build(std::move(r));
  if (auto* e = std::get_if<ApiError>(&all)) return *e;
  return std::move(std::get<std::vector<EngineRequest>>(all).at(0));
}

OpenAiRequest chat(nlohmann::ordered_json messages) {
  OpenAiRequest r;
  r.endpoint = Endpoint::kChatCompletions;
  r.messages = std::move(messages);
  return r;
}

std::optional<ChatTemplate> tmpl(std::string_view source) {
  Result<ChatTemplate> t = ChatTemplate::parse(source);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return std::move(*t);
}

TEST(PromptBuilder, ACompletionPromptIsTokenizedWithBosAndDefaultsTo16Tokens) {
  const Tokenizer& tok = test_tokenizer();
  PromptBuilder b(tok, std::nullopt, kLimits);
  ApiResult<EngineRequest> r = build1(b, completion("hello world"));
  ASSERT_TRUE(std::holds_alternative<EngineRequest>(r));
  const EngineRequest& e = std::get<EngineRequest>(r);
  EXPECT_EQ(e.prompt, tok.encode("hello world", EncodeOptions{.add_special = true}));
  EXPECT_EQ(e.max_tokens, kDefaultCompletionMaxTokens);
}

TEST(PromptBuilder, ABatchOfPromptsGivesOneRequestEach) {
  PromptBuilder b(test_tokenizer(), std::nullopt, kLimits);
  OpenAiRequest req = completion("hello");
  req.prompts.emplace_back(std::vector<TokenId>{5, 6});
  req.engine.sampling.temperature = 0.5f;
  req.sampling_given.temperature = true;
  ApiResult<std::vector<EngineRequest>> r = b.build(std::move(req));
  ASSERT_TRUE(std::holds_alternative<std::vector<EngineRequest>>(r));
  const auto& all = std::get<std::vector<EngineRequest>>(r);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].prompt, test_tokenizer().encode("hello", EncodeOptions{.add_special = true}));
  EXPECT_EQ(all[1].prompt, (std::vector<TokenId>{5, 6}));
  EXPECT_FLOAT_EQ(all[1].sampling.temperature, 0.5f) << "every prompt gets the request's fields";
}

TEST(PromptBuilder, SamplerFieldsLeftOutTakeTheServedModelsDefaults) {
  const SamplingDefaults model{.temperature = 0.7f, .top_p = 0.8f, .top_k = 20, .from_model = true};
  PromptBuilder b(test_tokenizer(), std::nullopt, kLimits, "", model);
  OpenAiRequest req = completion("hello");
  req.engine.sampling.top_k = 3;
  req.sampling_given.top_k = true;
  ApiResult<std::vector<EngineRequest>> r = b.build(std::move(req));
  ASSERT_TRUE(std::holds_alternative<std::vector<EngineRequest>>(r));
  const SamplingParams& s = std::get<std::vector<EngineRequest>>(r)[0].sampling;
  EXPECT_FLOAT_EQ(s.temperature, 0.7f);
  EXPECT_FLOAT_EQ(s.top_p, 0.8f);
  EXPECT_EQ(s.top_k, 3) << "a field the request gave wins";
  PromptBuilder api(test_tokenizer(), std::nullopt, kLimits);
  ApiResult<std::vector<EngineRequest>> plain = api.build(completion("hello"));
  EXPECT_FLOAT_EQ(std::get<std::vector<EngineRequest>>(plain)[0].sampling.temperature, 1.0f)
      << "without a recommendation: OpenAI's documented temperature 1, not greedy";
}

TEST(PromptBuilder, TokenIdsPassThroughAndMaxTokensIsKept) {
  PromptBuilder b(test_tokenizer(), std::nullopt, kLimits);
  OpenAiRequest req;
  req.prompts.emplace_back(std::vector<TokenId>{5, 6, 7});
  req.max_tokens = 3;
  ApiResult<EngineRequest> r = build1(b, std::move(req));
  ASSERT_TRUE(std::holds_alternative<EngineRequest>(r));
  EXPECT_EQ(std::get<EngineRequest>(r).prompt, (std::vector<TokenId>{5, 6, 7}));
  EXPECT_EQ(std::get<EngineRequest>(r).max_tokens, 3);
}

TEST(PromptBuilder, AnEmptyTokenListIsRefused) {
  PromptBuilder b(test_tokenizer(), std::nullopt, kLimits);
  OpenAiRequest req;
  req.prompts.emplace_back(std::vector<TokenId>{});
  ApiResult<EngineRequest> r = build1(b, std::move(req));
  ASSERT_TRUE(std::holds_alternative<ApiError>(r));
  EXPECT_EQ(std::get<ApiError>(r).param, "prompt");
}

TEST(PromptBuilder, ChatWithoutATemplateIsA400OnMessages) {
  PromptBuilder b(test_tokenizer(), std::nullopt, kLimits);
  ApiResult<EngineRequest> r = build1(b, chat({{{"role", "user"}, {"content", "hi"}}}));
  ASSERT_TRUE(std::holds_alternative<ApiError>(r));
  EXPECT_EQ(std::get<ApiError>(r).status, 400);
  EXPECT_EQ(std::get<ApiError>(r).param, "messages");
  EXPECT_NE(std::get<ApiError>(r).message.find("chat template"), std::string::npos);
}

TEST(PromptBuilder, TheChatErrorSaysWhyThereIsNoTemplate) {
  PromptBuilder b(test_tokenizer(), std::nullopt, kLimits, "tokenizer.chat_template: unknown tag 'generation'");
  ApiResult<EngineRequest> r = build1(b, chat({{{"role", "user"}, {"content", "hi"}}}));
  ASSERT_TRUE(std::holds_alternative<ApiError>(r));
  EXPECT_NE(std::get<ApiError>(r).message.find("unknown tag 'generation'"), std::string::npos);
}

TEST(PromptBuilder, ChatRendersTheTemplateWithOneBosAndTheContextAsBudget) {
  const Tokenizer& tok = test_tokenizer();
  PromptBuilder b(tok,
                  tmpl("{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                       "{% if add_generation_prompt %}assistant:{% endif %}"),
                  kLimits);
  ApiResult<EngineRequest> r = build1(b, chat({{{"role", "user"}, {"content", "hi"}}}));
  ASSERT_TRUE(std::holds_alternative<EngineRequest>(r));
  const EngineRequest& e = std::get<EngineRequest>(r);
  ASSERT_FALSE(e.prompt.empty());
  EXPECT_EQ(e.prompt[0], tok.vocab().special().bos);
  if (e.prompt.size() > 1) {
    EXPECT_NE(e.prompt[1], tok.vocab().special().bos);
  }
  EXPECT_EQ(tok.decode(e.prompt), "user: hi\nassistant:");
  EXPECT_EQ(e.max_tokens, kLimits.max_seq_len);
}

TEST(PromptBuilder, ATemplateThatRaisesIsA400) {
  PromptBuilder b(test_tokenizer(), tmpl("{{ raise_exception('roles must alternate') }}"), kLimits);
  ApiResult<EngineRequest> r = build1(b, chat({{{"role", "user"}, {"content", "hi"}}}));
  ASSERT_TRUE(std::holds_alternative<ApiError>(r));
  EXPECT_NE(std::get<ApiError>(r).message.find("roles must alternate"), std::string::npos);
}

}  // namespace
}  // namespace met
