// Tests for CpuEngine with a draft model (CpuEngineConfig::draft_model_path):
// on the real stories260K model, greedy output with the model drafting for
// itself or with its Q8_0 and Q4_0 twins drafting is the output without a
// draft model, token for token, and the drafts are counted (all accepted
// when the model drafts for itself); so for a model with recurrent layers
// and its twin; a draft model of another vocabulary and a file that is no
// model are refused, naming the file and what differs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/cpu_engine.h"
#include "model/quantize_model.h"
#include "model/random_model.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace cpu_engine_draft_test {
namespace {

const char* const kPrompts[] = {"Once upon a time", "The little dog", "Lily and Ben went to the park",
                                "One day, a girl"};

struct Outcome {
  std::vector<std::vector<TokenId>> tokens;
  EngineStatsSnapshot stats;
};

// Every prompt at once, greedy, 80 tokens each; every draft proposed is
// verified (the draft budget off: what it withholds depends on the host's
// timings).
Outcome run_prompts(const std::string& model, const std::string& draft, int32_t draft_max = 4) {
  CpuEngineConfig c;
  c.spec_adaptive = false;
  c.max_seqs = 4;
  c.max_batch_tokens = 128;
  c.draft_model_path = draft;
  c.draft_max = draft_max;
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(model, c);
  EXPECT_TRUE(e.ok()) << e.status().message();
  Outcome out;
  if (!e.ok()) return out;
  std::vector<RequestHandle> handles;
  for (const char* p : kPrompts) {
    EngineRequest r;
    r.prompt = (*e)->tokenizer().encode(p, EncodeOptions{.add_special = true});
    r.max_tokens = 80;
    r.ignore_eos = true;
    Result<RequestHandle> h = (*e)->engine().submit(std::move(r));
    EXPECT_TRUE(h.ok()) << h.status().message();
    handles.push_back(std::move(*h));
  }
  for (RequestHandle& h : handles) {
    std::vector<TokenId> tokens;
    StreamEvent ev;
    while (h.next(ev)) {
      if (const auto* d = std::get_if<DeltaEvent>(&ev)) tokens.insert(tokens.end(), d->tokens.begin(), d->tokens.end());
      if (const auto* err = std::get_if<ErrorEvent>(&ev)) ADD_FAILURE() << err->message;
    }
    out.tokens.push_back(std::move(tokens));
  }
  out.stats = (*e)->engine().stats();
  return out;
}

TEST(CpuEngineDraft, TheModelAndItsQuantizedTwinsDraftWithoutChangingTheOutput) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  testing::TempDir dir;
  const Outcome plain = run_prompts(path, "");
  ASSERT_EQ(plain.tokens.size(), 4u);
  EXPECT_EQ(plain.stats.spec_drafted, 0);

  const Outcome self = run_prompts(path, path);
  EXPECT_EQ(self.tokens, plain.tokens);
  EXPECT_GT(self.stats.spec_drafted, 100);
  EXPECT_EQ(self.stats.spec_accepted, self.stats.spec_drafted) << "a model drafting for itself is always right";
  EXPECT_LT(self.stats.steps, plain.stats.steps);

  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0}) {
    const std::string twin = dir.file(std::string(ggml_type_name(type)) + ".gguf");
    ASSERT_TRUE(quantize_model(path, twin, type, 1).ok());
    const Outcome drafted = run_prompts(path, twin);
    EXPECT_EQ(drafted.tokens, plain.tokens) << ggml_type_name(type);
    EXPECT_GT(drafted.stats.spec_accepted, 0) << ggml_type_name(type);
    RecordProperty("accepted_" + std::string(ggml_type_name(type)), std::to_string(drafted.stats.spec_accepted));
    RecordProperty("drafted_" + std::string(ggml_type_name(type)), std::to_string(drafted.stats.spec_drafted));
  }
}

std::string random_model(const testing::TempDir& dir, const std::string& name, uint32_t vocab, Arch arch) {
  std::optional<RandomModelSpec> s = random_model_preset("tiny", arch);
  EXPECT_TRUE(s.has_value());
  s->num_layers = arch == Arch::kLlama ? 1 : s->num_layers;
  s->vocab_size = vocab;
  const std::string path = dir.file(name);
  EXPECT_TRUE(make_random_model(*s, path).ok());
  return path;
}

TEST(CpuEngineDraft, ADraftModelThatCannotDraftIsRefusedNamingWhy) {
  testing::TempDir dir;
  const std::string target = random_model(dir, "t.gguf", 512, Arch::kLlama);
  CpuEngineConfig c;
  c.max_seqs = 2;
  c.max_batch_tokens = 64;

  c.draft_model_path = random_model(dir, "other.gguf", 600, Arch::kLlama);
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(target, c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("other.gguf"), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("600 tokens"), std::string::npos) << e.status().message();

  c.draft_model_path = dir.file("missing.gguf");
  e = CpuEngine::open(target, c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("draft model"), std::string::npos) << e.status().message();

}

// A model with recurrent layers drafts too: drafting for itself every draft
// is accepted; its Q8_0 twin's rejected drafts rewind the drafter's state
// (a step from a position its slot no longer holds would be refused, and
// drafting would stop); the output is the output without drafts.
TEST(CpuEngineDraft, AModelWithRecurrentLayersDraftsWithoutChangingTheOutput) {
  testing::TempDir dir;
  const std::string target = random_model(dir, "hybrid.gguf", 512, Arch::kQwen35);
  const Outcome plain = run_prompts(target, "");
  const Outcome self = run_prompts(target, target);
  EXPECT_EQ(self.tokens, plain.tokens);
  EXPECT_GT(self.stats.spec_drafted, 100);
  EXPECT_EQ(self.stats.spec_accepted, self.stats.spec_drafted);
  const std::string twin = dir.file("q8_0.gguf");
  ASSERT_TRUE(quantize_model(target, twin, GgmlType::kQ8_0, 1).ok());
  const Outcome drafted = run_prompts(target, twin);
  EXPECT_EQ(drafted.tokens, plain.tokens);
  EXPECT_GT(drafted.stats.spec_accepted, 0);
  EXPECT_LT(drafted.stats.spec_accepted, drafted.stats.spec_drafted) << "no draft rejected: no rewind exercised";
  // Each of the 4 requests' 80 tokens is drafted for until they end.
  EXPECT_GT(drafted.stats.spec_drafted, 100) << "drafting stopped early";
}

TEST(CpuEngineDraft, TokensWithOtherTextAreNamed) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  testing::TempDir dir;
  CpuEngineConfig c;
  c.max_seqs = 2;
  c.max_batch_tokens = 64;
  c.draft_model_path = random_model(dir, "synthetic.gguf", 512, Arch::kLlama);  // 512 tokens, other texts
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(path, c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("draft model's token"), std::string::npos) << e.status().message();
}

}  // namespace
}  // namespace cpu_engine_draft_test
}  // namespace met
