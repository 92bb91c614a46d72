// Tests for CpuDevice and ForwardPass (src/model/cpu_device.h,
// src/model/forward_pass.h): real models against their expected outputs and
// against the reference forward; batch and paging invariance.
#include "model/cpu_device.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "model/quantize_model.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

std::vector<BlockId> blocks_from(int32_t first, int32_t n) {
  std::vector<BlockId> b;
  for (int32_t i = 0; i < n; ++i) b.emplace_back(first + i);
  return b;
}

std::unique_ptr<CpuDevice> make_device(const Model& m, int threads, int32_t blocks,
                                       GgmlType kv = GgmlType::kF32) {
  CpuDeviceOptions o;
  o.num_threads = threads;
  o.kv_dtype = kv;
  o.num_kv_blocks = blocks;
  o.limits = ForwardLimits{.max_rows = 64, .max_outputs = 16, .max_seqs = 16};
  auto d = CpuDevice::create(m, o);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return std::move(d).value();
}

// Runs one step and returns its result.
StepResult step(Device& dev, const StepPlan& plan) {
  auto t = dev.launch(plan);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  StepResult r;
  EXPECT_TRUE(dev.await_result(*t, r).ok());
  return r;
}

// One sequence: prefill `prompt` in chunks of `chunk`, then `n` greedy tokens.
std::vector<TokenId> greedy(Device& dev, const std::vector<TokenId>& prompt, int n,
                            const std::vector<BlockId>& blocks, int chunk = 64) {
  StepPlan plan;
  StepResult r;
  for (size_t b = 0; b < prompt.size(); b += static_cast<size_t>(chunk)) {
    const size_t e = std::min(prompt.size(), b + static_cast<size_t>(chunk));
    plan.clear();
    for (size_t i = b; i < e; ++i) {
      plan.inputs.push_back(FeedToken{prompt[i]});
      plan.positions.push_back(static_cast<int32_t>(i));
    }
    plan.seqs.push_back(StepSeq{0, static_cast<int32_t>(e - b), static_cast<int32_t>(b), blocks, std::nullopt});
    plan.outputs.push_back(OutputRow{static_cast<int32_t>(e - b - 1), OutputKind::kArgmax});
    r = step(dev, plan);
  }
  std::vector<TokenId> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(r.argmax[0]);
    if (i + 1 == n) break;
    const int32_t pos = static_cast<int32_t>(prompt.size()) + i;
    plan.clear();
    plan.inputs.push_back(FeedToken{out.back()});
    plan.positions.push_back(pos);
    plan.seqs.push_back(StepSeq{0, 1, pos, blocks, std::nullopt});
    plan.outputs.push_back(OutputRow{0, OutputKind::kArgmax});
    r = step(dev, plan);
  }
  return out;
}

std::vector<int> parse_ids(const std::string& line) {
  std::istringstream in(line);
  std::vector<int> ids;
  int v;
  while (in >> v) ids.push_back(v);
  return ids;
}

class Stories260K : public ::testing::Test {
 protected:
  void SetUp() override {
    auto path = testing::shared_path("models/stories260K.gguf");
    if (!path) GTEST_SKIP() << "../shared/models/stories260K.gguf is absent";
    auto m = Model::load(*path);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(m).value();
  }
  std::unique_ptr<Model> model_;
};

TEST_F(Stories260K, PositionZeroLogitsMatchTheReferenceFile) {
  MET_REQUIRE_SHARED(path, "models/stories260K.logits-pos0-bos.txt");
  auto dev = make_device(*model_, 2, 4);
  StepPlan plan;
  plan.inputs.push_back(FeedToken{1});
  plan.positions.push_back(0);
  plan.seqs.push_back(StepSeq{0, 1, 0, blocks_from(0, 1), std::nullopt});
  plan.outputs.push_back(OutputRow{0, OutputKind::kLogits});
  StepResult r = step(*dev, plan);
  std::ifstream in(path);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    int id;
    double expected;
    ls >> id >> expected;
    EXPECT_NEAR(r.logits[static_cast<size_t>(id)], expected, 1e-4 * std::max(1.0, std::fabs(expected)))
        << "token " << id;
    ++checked;
  }
  EXPECT_EQ(checked, 512);
  EXPECT_EQ(r.argmax[0], 403);
}

TEST_F(Stories260K, GreedyFromBosMatchesTheReferenceFile) {
  MET_REQUIRE_SHARED(path, "models/stories260K.greedy-from-bos.txt");
  std::ifstream in(path);
  std::string line;
  std::vector<int> expected;
  while (std::getline(in, line)) {
    if (line.rfind("output_ids:", 0) == 0) expected = parse_ids(line.substr(11));
  }
  ASSERT_EQ(expected.size(), 64u);
  for (GgmlType kv : {GgmlType::kF32, GgmlType::kF16}) {
    auto dev = make_device(*model_, 2, 8, kv);
    auto out = greedy(*dev, {1}, 64, blocks_from(0, 8));
    EXPECT_EQ(std::vector<int>(out.begin(), out.end()), expected) << ggml_type_name(kv);
  }
}

TEST_F(Stories260K, GreedyContinuationsMatchLlamaCpp) {
  MET_REQUIRE_SHARED(path, "reference-outputs/stories260K-greedy.jsonl");
  std::ifstream in(path);
  std::string line;
  int cases = 0;
  auto dev = make_device(*model_, 2, 16, GgmlType::kF16);
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::vector<TokenId> prompt = j["prompt_ids"].get<std::vector<TokenId>>();
    const std::vector<TokenId> expected = j["output_ids"].get<std::vector<TokenId>>();
    auto out = greedy(*dev, prompt, static_cast<int>(expected.size()), blocks_from(0, 16));
    EXPECT_EQ(out, expected) << j["prompt"];
    ++cases;
  }
  EXPECT_GT(cases, 0);
}

TEST_F(Stories260K, ScatteredBlockTablesGiveTheSameTokens) {
  auto dev = make_device(*model_, 2, 32);
  std::vector<BlockId> scattered;
  for (int32_t b : {17, 3, 29, 8, 21, 0, 12, 26}) scattered.emplace_back(b);
  const std::vector<TokenId> prompt = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401};
  EXPECT_EQ(greedy(*dev, prompt, 40, blocks_from(0, 8), 5), greedy(*dev, prompt, 40, scattered, 7));
}

TEST_F(Stories260K, ASequenceDecodesTheSameAloneAndInABatchOfEight) {
  // Eight prompts; in the batched run, sequence 0 decodes while others prefill
  // in chunks beside it, so the batch mixes prefill chunks and decode rows.
  std::mt19937 rng(5);
  std::vector<std::vector<TokenId>> prompts(8);
  for (size_t s = 0; s < 8; ++s) {
    prompts[s].push_back(1);
    for (size_t i = 0; i < 3 + 4 * s; ++i) prompts[s].push_back(static_cast<TokenId>(259 + rng() % 253));
  }
  const int n = 24;
  std::vector<std::vector<TokenId>> alone(8);
  {
    auto dev = make_device(*model_, 2, 8);
    for (size_t s = 0; s < 8; ++s) alone[s] = greedy(*dev, prompts[s], n, blocks_from(0, 8));
  }
  auto dev = make_device(*model_, 3, 64);
  struct State {
    size_t fed = 0;  // prompt tokens fed
    std::vector<TokenId> out;
  };
  std::vector<State> st(8);
  for (int round = 0; round < 200; ++round) {
    StepPlan plan;
    std::vector<size_t> who;
    for (size_t s = 0; s < 8; ++s) {
      if (static_cast<int>(st[s].out.size()) >= n) continue;
      const bool prefilling = st[s].fed < prompts[s].size();
      const size_t take = prefilling ? std::min<size_t>(2 + s % 3, prompts[s].size() - st[s].fed) : 1;
      const int32_t first = static_cast<int32_t>(st[s].fed + st[s].out.size() - (prefilling ? 0 : 1));
      const int32_t row_begin = plan.num_rows();
      for (size_t i = 0; i < take; ++i) {
        plan.inputs.push_back(FeedToken{prefilling ? prompts[s][st[s].fed + i] : st[s].out.back()});
        plan.positions.push_back(first + static_cast<int32_t>(i));
      }
      plan.seqs.push_back(StepSeq{row_begin, static_cast<int32_t>(take), first,
                                  blocks_from(static_cast<int32_t>(s) * 8, 8), std::nullopt});
      if (prefilling) st[s].fed += take;
      if (st[s].fed == prompts[s].size()) {
        plan.outputs.push_back(OutputRow{plan.num_rows() - 1, OutputKind::kArgmax});
        who.push_back(s);
      }
    }
    if (plan.seqs.empty()) break;
    StepResult r = step(*dev, plan);
    for (size_t i = 0; i < who.size(); ++i) st[who[i]].out.push_back(r.argmax[i]);
  }
  for (size_t s = 0; s < 8; ++s) EXPECT_EQ(st[s].out, alone[s]) << "sequence " << s;
}

TEST_F(Stories260K, FeedFromRowContinuesFromTheDevicesArgmax) {
  auto dev = make_device(*model_, 2, 8);
  const auto expected = greedy(*dev, {1, 403}, 6, blocks_from(0, 8));
  StepPlan plan;
  plan.inputs = {FeedToken{1}, FeedToken{403}};
  plan.positions = {0, 1};
  plan.seqs.push_back(StepSeq{0, 2, 0, blocks_from(0, 8), std::nullopt});
  plan.outputs.push_back(OutputRow{1, OutputKind::kArgmax});
  // Launch the next five steps ahead, each fed from the step before.
  std::vector<Ticket> tickets;
  tickets.push_back(*dev->launch(plan));
  for (int i = 0; i < 5; ++i) {
    StepPlan next;
    next.inputs = {FeedFromRow{0}};
    next.positions = {2 + i};
    next.seqs.push_back(StepSeq{0, 1, 2 + i, blocks_from(0, 8), std::nullopt});
    next.outputs.push_back(OutputRow{0, OutputKind::kArgmax});
    tickets.push_back(*dev->launch(next));
  }
  std::vector<TokenId> got;
  for (Ticket t : tickets) {
    StepResult r;
    ASSERT_TRUE(dev->await_result(t, r).ok());
    got.push_back(r.argmax[0]);
  }
  EXPECT_EQ(got, expected);
}

TEST_F(Stories260K, ABannedTokenNeverWinsTheArgmaxAndReadsAsMinusInfinity) {
  auto dev = make_device(*model_, 1, 4);
  StepPlan plan;
  plan.inputs = {FeedToken{1}};
  plan.positions = {0};
  plan.seqs.push_back(StepSeq{0, 1, 0, blocks_from(0, 1), std::nullopt});
  plan.outputs.push_back(OutputRow{0, OutputKind::kLogits});
  const StepResult free_pick = step(*dev, plan);
  const TokenId best = free_pick.argmax[0];
  plan.banned = {best, 2};
  plan.outputs[0].num_banned = 2;
  const StepResult banned = step(*dev, plan);
  EXPECT_NE(banned.argmax[0], best);
  EXPECT_NE(banned.argmax[0], 2);
  EXPECT_TRUE(std::isinf(banned.logits[static_cast<size_t>(best)]));
  // The runner-up of the free pick wins now.
  std::vector<float> rest = free_pick.logits;
  rest[static_cast<size_t>(best)] = -1e30f;
  rest[2] = -1e30f;
  EXPECT_EQ(banned.argmax[0], std::max_element(rest.begin(), rest.end()) - rest.begin());
  plan.banned = {100000};
  plan.outputs[0].num_banned = 1;
  EXPECT_FALSE(dev->launch(plan).ok());
}

TEST_F(Stories260K, BusyTimeGrowsWithEveryStepRun) {
  auto dev = make_device(*model_, 1, 4);
  EXPECT_EQ(dev->busy_ns(), 0);
  StepPlan plan;
  plan.inputs = {FeedToken{1}};
  plan.positions = {0};
  plan.seqs.push_back(StepSeq{0, 1, 0, blocks_from(0, 1), std::nullopt});
  plan.outputs.push_back(OutputRow{0, OutputKind::kArgmax});
  step(*dev, plan);
  const int64_t after_one = dev->busy_ns();
  EXPECT_GT(after_one, 0);
  step(*dev, plan);
  EXPECT_GT(dev->busy_ns(), after_one);
}

TEST(CpuDevice, RefusesAPlanPastItsLimitsWithTheReason) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok());
  auto dev = make_device(**m, 1, 2);
  StepPlan plan;
  plan.inputs = {FeedToken{1}};
  plan.positions = {0};
  plan.seqs.push_back(StepSeq{0, 1, 0, {BlockId(5)}, std::nullopt});
  plan.outputs.push_back(OutputRow{0, OutputKind::kArgmax});
  auto t = dev->launch(plan);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("5"), std::string::npos) << t.status().message();
}

// Every architecture and weight dtype against the reference forward.
struct ArchDtype {
  Arch arch;
  GgmlType dtype;
  double tolerance;  // max |logit error| relative to the largest |logit|
};

class RandomModelVsReference : public ::testing::TestWithParam<ArchDtype> {};

// Prefills 17 tokens of the model at `path` in one chunk, then runs four
// single-token steps, and compares every output's logits with the
// reference forward: max |error| relative to the largest |logit|.
void expect_logits_match_reference(const std::string& path, double tolerance, const std::string& label) {
  auto m = Model::load(path);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  std::vector<TokenId> tokens(21);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<TokenId>((i * 37 + 5) % 600);
  const auto ref = testing::ReferenceForward(**m).logits(tokens);
  auto dev = make_device(**m, 2, 4);
  StepPlan plan;
  for (int i = 0; i < 17; ++i) {
    plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(i)]});
    plan.positions.push_back(i);
  }
  plan.seqs.push_back(StepSeq{0, 17, 0, blocks_from(0, 2), std::nullopt});
  plan.outputs = {OutputRow{0, OutputKind::kLogits}, OutputRow{16, OutputKind::kLogits}};
  std::vector<std::pair<size_t, std::vector<float>>> got;
  StepResult r = step(*dev, plan);
  got.emplace_back(0, std::vector<float>(r.logits.begin(), r.logits.begin() + 600));
  got.emplace_back(16, std::vector<float>(r.logits.begin() + 600, r.logits.begin() + 1200));
  for (int i = 17; i < 21; ++i) {
    plan.clear();
    plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(i)]});
    plan.positions.push_back(i);
    plan.seqs.push_back(StepSeq{0, 1, i, blocks_from(0, 2), std::nullopt});
    plan.outputs.push_back(OutputRow{0, OutputKind::kLogits});
    r = step(*dev, plan);
    got.emplace_back(static_cast<size_t>(i), r.logits);
  }
  for (const auto& [pos, logits] : got) {
    double max_ref = 0, max_err = 0;
    for (size_t v = 0; v < 600; ++v) {
      max_ref = std::max(max_ref, std::fabs(double(ref[pos][v])));
      max_err = std::max(max_err, std::fabs(double(ref[pos][v]) - logits[v]));
    }
    EXPECT_LT(max_err / max_ref, tolerance) << label << " position " << pos;
  }
}

RandomModelSpec reference_test_spec(Arch arch, GgmlType dtype) {
  RandomModelSpec s = testing::small_model_spec(arch, dtype);
  if (arch == Arch::kGemma2) s.attn_logit_softcap = 0.3f, s.final_logit_softcap = 3.0f;  // both bite here
  if (arch == Arch::kGemma2 || arch == Arch::kGemma3 || arch == Arch::kOlmo2) {
    s.sliding_window = 8;  // layer 0 windowed (of the 21 tokens the tests run), layer 1 global
    s.swa_pattern = 2;
  }
  if (arch == Arch::kGemma3) s.final_logit_softcap = 30.0f;
  if (arch == Arch::kGranite) {
    s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 8.0f, s.attention_scale = 0.015625f;
  }
  if (arch == Arch::kSmollm3) s.num_layers = 4;  // layer 3 has no rope
  if (arch == Arch::kPhi3) s.longrope = true;
  if (arch == Arch::kGemma4) {
    // Layers 2 and 5 global (heads of 128, one KV head), the others windowed
    // (64, two KV heads); layers 3 and 4 read layer 1's KV, layer 5 layer 2's.
    s.num_layers = 6, s.sliding_window = 8, s.swa_pattern = 3, s.shared_kv_layers = 3, s.per_layer_embd = 32;
    s.final_logit_softcap = 30.0f;
  }
  return s;
}

TEST_P(RandomModelVsReference, LogitsAgreeWithinTheDtypesTolerance) {
  const ArchDtype p = GetParam();
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(reference_test_spec(p.arch, p.dtype), dir.file("m.gguf")).ok());
  expect_logits_match_reference(dir.file("m.gguf"), p.tolerance,
                                std::string(arch_name(p.arch)) + " " + std::string(ggml_type_name(p.dtype)));
}

// Llama 3.x's rope scaling (rope_freqs.weight): the same logits as the
// reference with the factors, and other logits than without them.
TEST(RandomModelVsReference, Llama3RopeFrequencyFactorsAreApplied) {
  testing::TempDir dir;
  RandomModelSpec s = reference_test_spec(Arch::kLlama, GgmlType::kF32);
  s.llama3_rope = true;
  ASSERT_TRUE(make_random_model(s, dir.file("scaled.gguf")).ok());
  expect_logits_match_reference(dir.file("scaled.gguf"), 1e-4, "llama3 rope");
  auto scaled = Model::load(dir.file("scaled.gguf"));
  ASSERT_TRUE(scaled.ok());
  ASSERT_NE((*scaled)->weights().rope_freqs, nullptr);
  // The factors span 1 (short wavelengths) to 8 (long ones) at base 10000.
  const std::vector<float> f = llama3_rope_factors(64, 10000.0f);
  EXPECT_EQ(f.front(), 1.0f);
  EXPECT_EQ(f.back(), 8.0f);
  s.llama3_rope = false;
  ASSERT_TRUE(make_random_model(s, dir.file("plain.gguf")).ok());
  auto plain = Model::load(dir.file("plain.gguf"));
  ASSERT_TRUE(plain.ok());
  std::vector<TokenId> tokens(21);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<TokenId>((i * 37 + 5) % 600);
  const auto a = testing::ReferenceForward(**scaled).logits(tokens);
  const auto b = testing::ReferenceForward(**plain).logits(tokens);
  double diff = 0;
  for (size_t v = 0; v < 600; ++v) diff = std::max(diff, std::fabs(double(a[20][v]) - b[20][v]));
  // Position 20, where long wavelengths turn 8 times slower: well past the
  // 1e-4-of-the-largest-logit agreement above (about 5e-4 here), so a
  // forward that ignored the factors would fail it.
  EXPECT_GT(diff, 1e-3) << diff;
}

// llama.cpp's mixes (quant_recipe.h): K-quant and IQ4 matrices of several
// types in one model, each layer's own, within the k-quants' tolerance.
TEST(RandomModelVsReference, LlamaCppMixesAgreeWithinTheKQuantsTolerance) {
  // Two layers, both "more bits" layers of q4_k_m/q5_k_m (the first and last
  // eighth); iq4_xs widens FFN down only below num_layers / 8 = 0, q3_k_m
  // below num_layers / 16 = 0 (then Q4_K), q2_k puts it in Q3_K.
  const std::pair<const char*, GgmlType> kMixes[] = {{"q4_k_m", GgmlType::kQ6_K},
                                                     {"q5_k_m", GgmlType::kQ6_K},
                                                     {"iq4_xs", GgmlType::kIQ4_XS},
                                                     {"q3_k_m", GgmlType::kQ4_K},
                                                     {"q2_k", GgmlType::kQ3_K}};
  for (const auto& [mix, ffn_down] : kMixes) {
    testing::TempDir dir;
    ASSERT_TRUE(make_random_model(reference_test_spec(Arch::kLlama, GgmlType::kF32), dir.file("f32.gguf")).ok());
    auto q = quantize_model(dir.file("f32.gguf"), dir.file("mix.gguf"), *find_quant_recipe(mix), 2);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    auto f = GgufFile::open(dir.file("mix.gguf"));
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight")->type, ffn_down) << mix;
    EXPECT_EQ(f->find_tensor("blk.1.ffn_up.weight")->type, find_quant_recipe(mix)->base) << mix;
    EXPECT_EQ(f->find_tensor("output.weight")->type, GgmlType::kQ6_K) << mix;
    expect_logits_match_reference(dir.file("mix.gguf"), 5e-2, mix);
  }
}

// F32 weights differ from the reference only in float summation order; F16
// weights are exact in both, activations stay f32; BF16 kernels may round
// activations to bf16 (8 bits of mantissa); the integer paths quantize
// activations to 8 bits per block (~0.4% per product, compounding over two
// layers); the k-quants use Q8_K activations, one scale per 256 values
// instead of 32, so their error is about half again as large (3.0-3.1%
// measured on these models).
INSTANTIATE_TEST_SUITE_P(
    EveryArchAndDtype, RandomModelVsReference,
    ::testing::ValuesIn([] {
      std::vector<ArchDtype> v;
      for (Arch a : {Arch::kLlama, Arch::kMistral, Arch::kQwen2, Arch::kQwen3}) {
        v.push_back({a, GgmlType::kF32, 1e-4});
        v.push_back({a, GgmlType::kF16, 1e-4});
        v.push_back({a, GgmlType::kBF16, 2e-2});
        v.push_back({a, GgmlType::kQ8_0, 3e-2});
        v.push_back({a, GgmlType::kQ4_0, 3e-2});
        v.push_back({a, GgmlType::kQ4_K, 5e-2});
        v.push_back({a, GgmlType::kQ5_K, 5e-2});
        v.push_back({a, GgmlType::kIQ4_NL, 5e-2});
        v.push_back({a, GgmlType::kQ5_0, 3e-2});
        v.push_back({a, GgmlType::kQ4_1, 3e-2});
        v.push_back({a, GgmlType::kQ5_1, 3e-2});
        v.push_back({a, GgmlType::kIQ4_XS, 5e-2});
        v.push_back({a, GgmlType::kQ6_K, 5e-2});
        v.push_back({a, GgmlType::kQ2_K, 5e-2});
        v.push_back({a, GgmlType::kQ3_K, 5e-2});
      }
      for (Arch a : {Arch::kGemma2, Arch::kGemma3, Arch::kGranite, Arch::kSmollm3, Arch::kOlmo2, Arch::kPhi3}) {
        v.push_back({a, GgmlType::kF32, 1e-4});
        v.push_back({a, GgmlType::kF16, 1e-4});
        v.push_back({a, GgmlType::kQ8_0, 3e-2});
        v.push_back({a, GgmlType::kQ4_K, 5e-2});
      }
      // gemma4 in exact weights only: its scores are unscaled dot products of
      // unit-norm-weighted q and k heads (64 and 128 wide here), so a random
      // model's softmax is near one-hot and 8-bit activation rounding moves
      // its logits by 6% (q8_0) to 46% (q4_k) of the largest: a property of
      // these weights, not of the kernels, which the exact dtypes pin down.
      // The same near-ties amplify float summation order: at position 16
      // (the prefill's last row) the AVX2 tier's logits are off by 2.1e-5
      // (f32) and 1.11e-4 (f16) of the largest, where its other positions
      // (and llama's, qwen3's, gemma3's) stay under 7e-6; hence 3e-4, still
      // 200 times below the 6% that 8-bit activations alone give here.
      v.push_back({Arch::kGemma4, GgmlType::kF32, 3e-4});
      v.push_back({Arch::kGemma4, GgmlType::kF16, 3e-4});
      return v;
    }()),
    [](const auto& param_info) {
      return std::string(arch_name(param_info.param.arch)) + "_" +
             std::string(ggml_type_name(param_info.param.dtype));
    });

}  // namespace
}  // namespace met
