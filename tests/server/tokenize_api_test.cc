// Tests for TokenizeApi: /tokenize and /detokenize bodies in vLLM's shapes.
#include "server/tokenize_api.h"

#include <gtest/gtest.h>

#include "testing/test_tokenizer.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kChatMl[] =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

// The API over a PromptBuilder kept for the test's life (one per form).
TokenizeApi api(bool with_template = false) {
  static const RequestLimits limits{.max_seq_len = 4096};
  static const PromptBuilder plain(testing::test_tokenizer(), std::nullopt, limits);
  static const PromptBuilder chat(testing::test_tokenizer(), std::move(*ChatTemplate::parse(kChatMl)), limits);
  return TokenizeApi(with_template ? chat : plain, 4096);
}

Json ok_json(const ApiResult<Json>& r) {
  if (const auto* e = std::get_if<ApiError>(&r)) ADD_FAILURE() << e->message;
  return std::holds_alternative<Json>(r) ? std::get<Json>(r) : Json();
}

ApiError err(const ApiResult<Json>& r) {
  if (std::holds_alternative<Json>(r)) ADD_FAILURE() << "expected an error, got " << std::get<Json>(r).dump();
  return std::holds_alternative<ApiError>(r) ? std::get<ApiError>(r) : ApiError{};
}

TEST(TokenizeApi, APromptGivesCountMaxModelLenAndTheTokensTheTokenizerGives) {
  const Tokenizer& tok = testing::test_tokenizer();
  const Json j = ok_json(api().tokenize(R"({"prompt": "hello world"})"));
  const std::vector<TokenId> want = tok.encode("hello world", EncodeOptions{.add_special = true});
  EXPECT_EQ(j["tokens"].get<std::vector<TokenId>>(), want);
  EXPECT_EQ(j["count"], want.size());
  EXPECT_EQ(j["max_model_len"], 4096);
}

TEST(TokenizeApi, AddSpecialTokensFalseLeavesTheBosOut) {
  const Json with = ok_json(api().tokenize(R"({"prompt": "hello"})"));
  const Json without = ok_json(api().tokenize(R"({"prompt": "hello", "add_special_tokens": false})"));
  EXPECT_EQ(with["count"].get<int>(), without["count"].get<int>() + 1);
}

TEST(TokenizeApi, DetokenizeGivesTheTextBack) {
  const Json t = ok_json(api().tokenize(R"({"prompt": "hello world", "add_special_tokens": false})"));
  Json body;
  body["tokens"] = t["tokens"];
  const Json d = ok_json(api().detokenize(body.dump()));
  EXPECT_EQ(d["prompt"], "hello world");
}

TEST(TokenizeApi, MessagesAreRenderedWithTheTemplateAndTheGenerationPromptIsOptional) {
  const TokenizeApi a = api(/*with_template=*/true);
  const char* messages = R"("messages": [{"role": "user", "content": "hi"}])";
  const Json with = ok_json(a.tokenize(std::string("{") + messages + "}"));
  const Json without = ok_json(a.tokenize(std::string("{") + messages + R"(, "add_generation_prompt": false})"));
  EXPECT_GT(with["count"].get<int>(), without["count"].get<int>());
}

TEST(TokenizeApi, BadInputIsA400NamingItsField) {
  const TokenizeApi a = api();
  EXPECT_EQ(err(a.tokenize("{")).status, 400);
  EXPECT_EQ(err(a.tokenize("[]")).status, 400);
  EXPECT_EQ(err(a.tokenize("{}")).status, 400);
  EXPECT_EQ(err(a.tokenize(R"({"prompt": 5})")).param, "prompt");
  EXPECT_EQ(err(a.tokenize(R"({"prompt": "a", "add_special_tokens": "yes"})")).param, "add_special_tokens");
  EXPECT_EQ(err(a.tokenize(R"({"messages": [{"role": "user", "content": "hi"}]})")).param, "messages");
  EXPECT_EQ(err(a.detokenize(R"({"tokens": "1 2"})")).param, "tokens");
  EXPECT_EQ(err(a.detokenize(R"({"tokens": [1, "2"]})")).param, "tokens");
}

TEST(TokenizeApi, AnIdOutsideTheVocabularyIsNamedWithItsIndexAndTheRange) {
  const ApiError e = err(api().detokenize(R"({"tokens": [1, 2, 512]})"));
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "tokens");
  EXPECT_NE(e.message.find("tokens[2] = 512"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("0..511"), std::string::npos) << e.message;
  EXPECT_NE(err(api().detokenize(R"({"tokens": [-1]})")).message.find("tokens[0] = -1"), std::string::npos);
}

}  // namespace
}  // namespace met
