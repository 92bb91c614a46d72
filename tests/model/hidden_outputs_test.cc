// Hidden outputs (model/hidden_outputs.h) of a made llama model on the
// CpuDevice against the double-precision reference forward: a prompt run in
// two chunks with a sum output on each gives the mean of every row's final
// hidden state, its last row's output the last, batched with a generating
// sequence whose logits stay what they are alone.
#include <gtest/gtest.h>

#include <cmath>

#include "model/hidden_outputs.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::block_range;
using testing::fixed_prompt;

void add_rows(StepPlan& plan, std::span<const TokenId> tokens, int32_t first, int32_t n, std::vector<BlockId> table) {
  const int32_t begin = plan.num_rows();
  for (int32_t i = 0; i < n; ++i) {
    plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(first + i)]});
    plan.positions.push_back(first + i);
  }
  plan.seqs.push_back(StepSeq{begin, n, first, std::move(table), std::nullopt});
}

TEST(HiddenOutputs, ChunkSumsAndTheLastRowMatchTheReferencesPooling) {
  testing::TempDir dir;
  RandomModelSpec spec = *random_model_preset("tiny", Arch::kLlama);
  spec.num_layers = 2, spec.embedding_length = 128, spec.feed_forward_length = 256, spec.vocab_size = 600;
  const std::unique_ptr<Model> model = testing::make_and_load(spec, dir);
  ASSERT_NE(model, nullptr);
  const std::unique_ptr<CpuDevice> dev = testing::make_test_device(*model);
  const std::vector<TokenId> prompt = fixed_prompt(40, spec.vocab_size);
  const std::vector<TokenId> other = fixed_prompt(9, spec.vocab_size - 7);
  const size_t embd = spec.embedding_length;
  EXPECT_EQ(dev->info().hidden_size, static_cast<int32_t>(embd));

  StepPlan first;  // the prompt's first 24 rows, and another sequence generating
  add_rows(first, prompt, 0, 24, block_range(0, 3));
  first.outputs.push_back(OutputRow{23, OutputKind::kHiddenSum});
  add_rows(first, other, 0, 9, block_range(8, 1));
  first.outputs.push_back(OutputRow{32, OutputKind::kLogits});
  const StepResult a = testing::run_step(*dev, first);
  StepPlan second;  // the other 16, with their sum and the last row
  add_rows(second, prompt, 24, 16, block_range(0, 3));
  second.outputs.push_back(OutputRow{15, OutputKind::kHiddenSum});
  const StepResult b = testing::run_step(*dev, second);
  StepPlan last;
  add_rows(last, prompt, 24, 16, block_range(0, 3));
  last.outputs.push_back(OutputRow{15, OutputKind::kHidden});
  const StepResult c = testing::run_step(*dev, last);

  const testing::ReferenceForward ref(*model);
  const testing::Rows h = ref.hidden(prompt);
  std::vector<float> mean(embd);
  for (size_t i = 0; i < embd; ++i) mean[i] = (a.hidden[i] + b.hidden[i]) / 40.0f;
  EXPECT_LT(testing::relative_error(testing::pool_rows(h, Pooling::kMean), mean), 1e-4);
  EXPECT_LT(testing::relative_error(testing::pool_rows(h, Pooling::kLast), std::span(c.hidden).first(embd)), 1e-4);
  const std::vector<std::vector<float>> other_logits = ref.logits(other);
  const std::vector<double> want(other_logits.back().begin(), other_logits.back().end());
  EXPECT_LT(testing::relative_error(want, std::span(a.logits).subspan(a.vocab_size, a.vocab_size)), 1e-4)
      << "a generating row beside them is unchanged";
}

TEST(HiddenOutputs, ASumThatIsNotItsSeqsLastRowIsRefused) {
  StepPlan plan;
  const std::vector<TokenId> tokens = {1, 2, 3};
  add_rows(plan, tokens, 0, 3, block_range(0, 1));
  plan.outputs.push_back(OutputRow{1, OutputKind::kHiddenSum});
  const Status s = validate_plan(plan, 4, 64, 16, 0);
  EXPECT_NE(s.message().find("not its seq's last"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace met
