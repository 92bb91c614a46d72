// Tests for request/request_limits.h.
#include "request/request_limits.h"

#include <gtest/gtest.h>

namespace met {
namespace {

EngineRequest request(std::vector<TokenId> prompt, int32_t max_tokens = 8) {
  EngineRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

TEST(ValidateRequest, NamesWhatIsWrongAndByHowMuch) {
  const RequestLimits lim{.vocab_size = 100, .max_seq_len = 40, .num_kv_blocks = 2};
  struct Case {
    EngineRequest r;
    const char* needle;
  };
  std::vector<Case> cases;
  cases.push_back({request({}), "the prompt is empty"});
  cases.push_back({request({1, 100}), "prompt token 1 is 100, outside the vocabulary of 100"});
  cases.push_back({request({1, -3}), "prompt token 1 is -3"});
  cases.push_back({request({1}, -1), "max_tokens must be >= 0, got -1"});
  EngineRequest mt = request({1}, 3);
  mt.min_tokens = 5;
  cases.push_back({std::move(mt), "min_tokens must be between 0 and max_tokens (3), got 5"});
  cases.push_back({request(std::vector<TokenId>(40, 1)), "the prompt has 40 tokens; the context is 40"});
  cases.push_back({request(std::vector<TokenId>(32, 1)), "needs 3 KV blocks of 16 tokens; the pool has 2"});
  EngineRequest t = request({1});
  t.timeout = std::chrono::milliseconds(0);
  cases.push_back({std::move(t), "the timeout must be positive"});
  EngineRequest s = request({1});
  s.sampling.temperature = -1;
  cases.push_back({std::move(s), "temperature"});
  for (const Case& c : cases) {
    const Status st = validate_request(c.r, lim);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.needle;
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();
  }
}

TEST(ValidateRequest, AcceptsARequestThatFits) {
  const RequestLimits lim{.vocab_size = 100, .max_seq_len = 40, .num_kv_blocks = 2};
  EXPECT_TRUE(validate_request(request(std::vector<TokenId>(31, 5)), lim).ok());
}

// A model whose every layer reads 20 positions back needs at most 3 blocks
// (20 positions straddle 3 blocks of 16) however long its prompt.
TEST(ValidateRequest, WithAWindowAPromptNeedsNoMoreBlocksThanTheWindowStraddles) {
  const RequestLimits lim{.vocab_size = 100, .max_seq_len = 1000, .num_kv_blocks = 3, .kv_window = 20};
  EXPECT_EQ(prompt_kv_blocks(15, lim), 1);
  EXPECT_EQ(prompt_kv_blocks(900, lim), 3);
  EXPECT_TRUE(validate_request(request(std::vector<TokenId>(900, 5)), lim).ok());
  EXPECT_FALSE(prompt_exceeds_context(900, lim));
  RequestLimits small = lim;
  small.num_kv_blocks = 2;
  const Status st = validate_request(request(std::vector<TokenId>(900, 5)), small);
  EXPECT_NE(st.message().find("needs 3 KV blocks of 16 tokens; the pool has 2"), std::string::npos)
      << st.message();
  RequestLimits dense = lim;
  dense.kv_window = 0;
  EXPECT_TRUE(prompt_exceeds_context(900, dense));
}

}  // namespace
}  // namespace met

namespace met {
namespace {

EngineRequest embed(std::vector<TokenId> prompt, Pooling pooling = Pooling::kMean) {
  EngineRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = 0;
  r.embed = pooling;
  return r;
}

TEST(ValidateRequest, AnEmbeddingMayFillTheWholeContextSinceNothingFollowsIt) {
  const RequestLimits lim{.vocab_size = 100, .max_seq_len = 32, .num_kv_blocks = 2};
  EXPECT_TRUE(validate_request(embed(std::vector<TokenId>(32, 1)), lim).ok());
  const Status st = validate_request(embed(std::vector<TokenId>(33, 1)), lim);
  EXPECT_NE(st.message().find("the input has 33 tokens; the context is 32"), std::string::npos) << st.message();
  EXPECT_FALSE(validate_request(request(std::vector<TokenId>(32, 1)), lim).ok()) << "generation needs one more slot";
}

TEST(ValidateRequest, AnEncoderTakesEachInputWholeAndGeneratesNothing) {
  RequestLimits lim{.vocab_size = 100, .max_seq_len = 512, .num_kv_blocks = 64};
  lim.has_head = false;
  lim.max_whole_prompt = 64;
  EXPECT_TRUE(validate_request(embed(std::vector<TokenId>(64, 1)), lim).ok());
  Status st = validate_request(embed(std::vector<TokenId>(65, 1)), lim);
  EXPECT_NE(st.message().find("65 tokens; this encoder reads each input whole in one step of at most 64"),
            std::string::npos)
      << st.message();
  st = validate_request(request({1, 2}), lim);
  EXPECT_NE(st.message().find("gives embeddings, not text"), std::string::npos) << st.message();
  st = validate_request(embed({1, 2}, Pooling::kNone), lim);
  EXPECT_NE(st.message().find("pooling 'none'"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace met
