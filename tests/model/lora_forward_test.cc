// Tests for LoRA adapters in the forward pass (lora_step.h, linear.h,
// CpuDevice::bind_adapter): a model run with an adapter gives the logits of
// the model whose weights were merged with it (W + scale·B·A in double,
// testing/lora_merge.h, through the double-precision reference forward) for
// every target matrix and every adapter dtype; a step mixing rows over four
// adapters and none gives each row, bit for bit, the logits it gets alone; a
// launched step keeps the adapters it was launched with; binding and
// launching refuse what the device cannot run, naming it.
// Tolerance: met's F32 forward against the double reference, 2e-4 of the
// largest logit (as the dense model tests); an adapter moves the logits by
// far more than that (checked, so a forward that ignored it would fail).
#include <gtest/gtest.h>

#include "model/lora_load.h"
#include "model/random_lora.h"
#include "testing/lora_merge.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"

namespace met {
namespace {

constexpr double kTolerance = 2e-4;

RandomModelSpec small_llama() {
  RandomModelSpec s;
  s.num_layers = 2;
  s.embedding_length = 64;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 128;
  s.vocab_size = 512;
  s.seed = 3;
  return s;
}

struct Adapted {
  std::shared_ptr<const LoraAdapter> adapter;
  std::unique_ptr<Model> merged;
};

// An adapter made for dir/m.gguf with `spec`, loaded, and its merged model.
Adapted make_adapter(const testing::TempDir& dir, const Model& base, const RandomLoraSpec& spec,
                     const std::string& name) {
  Adapted out;
  const auto made = make_random_lora(dir.file("m.gguf"), dir.file(name + ".gguf"), spec);
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  auto loaded = load_lora(dir.file(name + ".gguf"), base, name);
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (!loaded.ok()) return out;
  out.adapter = *loaded;
  const Status merged =
      testing::merge_lora(dir.file("m.gguf"), dir.file(name + ".gguf"), dir.file(name + "-merged.gguf"));
  EXPECT_TRUE(merged.ok()) << merged.to_string();
  auto m = Model::load(dir.file(name + "-merged.gguf"));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (m.ok()) out.merged = std::move(m).value();
  return out;
}

std::unique_ptr<CpuDevice> lora_device(const Model& model, int32_t slots, int32_t max_rank) {
  return testing::make_test_device(model, {.limits = {.max_rows = 64, .max_outputs = 64, .max_seqs = 8},
                                           .forward = {.max_lora_rank = max_rank},
                                           .num_adapter_slots = slots});
}

// The adapter's logits at every position of a prompt (a prefill chunk, then
// one token per step) against the merged model's reference; and proof that
// the adapter moved them.
void expect_adapter_matches_merged(const Model& base, const Adapted& a, const std::string& what) {
  ASSERT_NE(a.adapter, nullptr);
  ASSERT_NE(a.merged, nullptr);
  auto dev = lora_device(base, 1, a.adapter->max_rank);
  ASSERT_NE(dev, nullptr);
  ASSERT_TRUE(dev->bind_adapter(0, a.adapter).ok());
  const auto tokens = testing::fixed_prompt(20, 512);
  const auto got = testing::logits_at_every_position(*dev, tokens, 12, 6, testing::block_range(0, 2), 0);
  const auto plain = testing::logits_at_every_position(*dev, tokens, 12, 6, testing::block_range(2, 2));
  const auto ref = testing::ReferenceForward(*a.merged).logits(tokens);
  ASSERT_EQ(got.size(), tokens.size()) << what;
  const double worst = testing::expect_logits_agree(ref, got, kTolerance).worst;
  double moved = 0;
  for (size_t p = 0; p < tokens.size(); ++p) moved = std::max(moved, testing::relative_error(plain[p], got[p]));
  EXPECT_GT(moved, 100 * kTolerance) << what << ": the adapter barely changed the logits";
  ::testing::Test::RecordProperty(what, std::to_string(worst));
}

TEST(LoraForward, AnAdaptersLogitsAreTheMergedModelsForEveryDtype) {
  testing::TempDir dir;
  auto base = testing::make_and_load(small_llama(), dir);
  ASSERT_NE(base, nullptr);
  for (const GgmlType dtype : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0}) {
    RandomLoraSpec spec;
    spec.rank = 32;  // Q8_0 rows of lora_b are rank values: a whole block
    spec.dtype = dtype;
    spec.seed = 7;
    spec.alpha = 16.0f;  // scale 1/2
    spec.targets = *parse_lora_targets("q,k,v,o,gate,up,down,output");
    const std::string name(ggml_type_name(dtype));
    expect_adapter_matches_merged(*base, make_adapter(dir, *base, spec, name), name);
  }
}

TEST(LoraForward, EachTargetAloneIsItsMergedModel) {
  testing::TempDir dir;
  auto base = testing::make_and_load(small_llama(), dir);
  ASSERT_NE(base, nullptr);
  for (const char* target : {"q", "k", "v", "o", "gate", "up", "down", "output"}) {
    RandomLoraSpec spec;
    spec.rank = 4;
    spec.seed = 11;
    spec.strength = 1.0f;
    spec.targets = *parse_lora_targets(target);
    expect_adapter_matches_merged(*base, make_adapter(dir, *base, spec, target), target);
  }
}

// Appends a seq prefilling `prompt`'s first 7 tokens in `block` with an
// output on every row, run with adapter `slot`.
void add_prefill(StepPlan& plan, std::span<const TokenId> prompt, int32_t block, int32_t slot) {
  const int32_t begin = plan.num_rows();
  for (int32_t j = 0; j < 7; ++j) {
    plan.inputs.push_back(FeedToken{prompt[static_cast<size_t>(j)]});
    plan.positions.push_back(j);
    plan.outputs.push_back(OutputRow{begin + j, OutputKind::kLogits});
  }
  plan.seqs.push_back(StepSeq{begin, 7, 0, {BlockId(block)}, std::nullopt});
  plan.seqs.back().adapter_slot = slot;
}

// One seq per entry of `slots`, each prefilling its own 7-token prompt with
// an output on every row, in one step (or alone); its logits, per seq.
std::vector<std::vector<float>> run_seqs(Device& dev, const std::vector<int32_t>& slots, bool together) {
  std::vector<std::vector<float>> out(slots.size());
  StepPlan plan;
  std::vector<size_t> members;
  auto flush = [&] {
    const StepResult r = testing::run_step(dev, plan);
    for (size_t m = 0; m < members.size(); ++m) {
      out[members[m]].assign(r.logits.begin() + static_cast<ptrdiff_t>(m * 7 * 512),
                             r.logits.begin() + static_cast<ptrdiff_t>((m + 1) * 7 * 512));
    }
    plan = StepPlan{};
    members.clear();
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto prompt = testing::fixed_prompt(7 + i, 512);
    add_prefill(plan, std::span<const TokenId>(prompt).subspan(i), static_cast<int32_t>(i), slots[i]);
    members.push_back(i);
    if (!together) flush();
  }
  if (together) flush();
  return out;
}

TEST(LoraForward, ABatchOverFourAdaptersAndNoneGivesEachRowItsLogitsAlone) {
  testing::TempDir dir;
  auto base = testing::make_and_load(small_llama(), dir);
  ASSERT_NE(base, nullptr);
  auto dev = lora_device(*base, 4, 16);
  ASSERT_NE(dev, nullptr);
  for (int32_t s = 0; s < 4; ++s) {
    RandomLoraSpec spec;
    spec.rank = 4 * (s + 1);
    spec.seed = 100 + static_cast<uint64_t>(s);
    const std::string name = "a" + std::to_string(s);
    ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file(name + ".gguf"), spec).ok());
    auto a = load_lora(dir.file(name + ".gguf"), *base, name);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    ASSERT_TRUE(dev->bind_adapter(s, *a).ok());
  }
  // Two seqs share adapter 1; one runs the base model.
  const std::vector<int32_t> slots = {0, 1, kNoAdapterSlot, 2, 3, 1};
  const auto together = run_seqs(*dev, slots, true);
  const auto alone = run_seqs(*dev, slots, false);
  for (size_t i = 0; i < slots.size(); ++i) EXPECT_EQ(together[i], alone[i]) << "seq " << i;
  EXPECT_NE(alone[0], alone[3]) << "different adapters, the same logits";
}

TEST(LoraForward, ALaunchedStepKeepsTheAdaptersItWasLaunchedWith) {
  testing::TempDir dir;
  auto base = testing::make_and_load(small_llama(), dir);
  ASSERT_NE(base, nullptr);
  RandomLoraSpec spec;
  spec.rank = 8;
  ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file("a.gguf"), spec).ok());
  auto a = load_lora(dir.file("a.gguf"), *base, "a");
  ASSERT_TRUE(a.ok());
  std::shared_ptr<const LoraAdapter> held = std::move(a).value();
  auto dev = lora_device(*base, 1, 8);
  ASSERT_TRUE(dev->bind_adapter(0, held).ok());
  const auto expected = run_seqs(*dev, {0}, true);
  StepPlan plan;
  add_prefill(plan, testing::fixed_prompt(7, 512), 0, 0);
  auto ticket = dev->launch(plan);
  ASSERT_TRUE(ticket.ok());
  const std::weak_ptr<const LoraAdapter> weak = held;
  ASSERT_TRUE(dev->bind_adapter(0, nullptr).ok());  // emptied (and unloaded) while the step runs
  held.reset();
  StepResult r;
  ASSERT_TRUE(dev->await_result(*ticket, r).ok());
  EXPECT_EQ(std::vector<float>(r.logits.begin(), r.logits.end()), expected[0]);
  EXPECT_TRUE(weak.expired()) << "the device still holds an adapter no slot or step uses";
  // The slot is empty now: a step naming it is refused.
  auto refused = dev->launch(plan);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("seq 0 runs adapter slot 0, which holds no adapter"), std::string::npos)
      << refused.status().message();
}

TEST(LoraForward, BindingRefusesWhatTheDeviceCannotRun) {
  testing::TempDir dir;
  auto base = testing::make_and_load(small_llama(), dir);
  ASSERT_NE(base, nullptr);
  RandomLoraSpec spec;
  spec.rank = 16;
  ASSERT_TRUE(make_random_lora(dir.file("m.gguf"), dir.file("a.gguf"), spec).ok());
  auto a = load_lora(dir.file("a.gguf"), *base, "wide");
  ASSERT_TRUE(a.ok());
  auto dev = lora_device(*base, 2, 8);
  const Status rank = dev->bind_adapter(0, *a);
  EXPECT_NE(rank.message().find("adapter 'wide' has rank 16; this server runs ranks up to 8"), std::string::npos)
      << rank.message();
  EXPECT_NE(dev->bind_adapter(2, nullptr).message().find("adapter slot 2 is outside the device's 2"),
            std::string::npos);
  auto other = std::make_shared<LoraAdapter>();
  other->name = "other";
  other->layers.resize(5);
  EXPECT_NE(dev->bind_adapter(1, other).message().find("adapter 'other' has 5 layers; the model has 2"),
            std::string::npos);
  auto plain = testing::make_test_device(*base);
  EXPECT_EQ(plain->info().num_adapter_slots, 0);
  EXPECT_EQ(plain->bind_adapter(0, *a).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace met
