// Model test support.
#include "testing/model_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "testing/reference_forward.h"

namespace met::testing {

std::unique_ptr<Model> make_and_load(const RandomModelSpec& spec, const TempDir& dir) {
  auto made = make_random_model(spec, dir.file("m.gguf"));
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  auto m = Model::load(dir.file("m.gguf"));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : nullptr;
}

std::vector<BlockId> block_range(int32_t first, int32_t n) {
  std::vector<BlockId> b;
  for (int32_t i = 0; i < n; ++i) b.emplace_back(first + i);
  return b;
}

std::unique_ptr<CpuDevice> make_test_device(const Model& model, const TestDeviceOptions& options) {
  CpuDeviceOptions o;
  o.num_threads = options.num_threads;
  o.kv_dtype = options.kv_dtype;
  o.num_kv_blocks = options.num_kv_blocks;
  o.limits = options.limits;
  o.forward = options.forward;
  o.state_rollback = options.state_rollback;
  o.state_drafts = options.state_drafts;
  o.num_adapter_slots = options.num_adapter_slots;
  auto d = CpuDevice::create(model, o);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return d.ok() ? std::move(d).value() : nullptr;
}

StepResult run_step(Device& dev, const StepPlan& plan) {
  auto t = dev.launch(plan);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  StepResult r;
  if (t.ok()) {
    const Status s = dev.await_result(*t, r);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  return r;
}

std::vector<TokenId> fixed_prompt(size_t n, uint32_t vocab) {
  std::vector<TokenId> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<TokenId>((i * 37 + 5) % vocab);
  return t;
}

std::vector<std::vector<float>> logits_at_every_position(Device& dev, std::span<const TokenId> tokens,
                                                         int32_t prefill, int32_t chunk,
                                                         std::span<const BlockId> table, int32_t adapter_slot) {
  std::vector<std::vector<float>> out;
  const auto vocab = static_cast<size_t>(dev.info().vocab_size);
  std::optional<StateSlotId> slot;
  if (dev.info().num_state_slots > 0) slot = StateSlotId(0);
  const auto n = static_cast<int32_t>(tokens.size());
  for (int32_t begin = 0; begin < n;) {
    const int32_t rows = begin < prefill ? std::min(chunk, prefill - begin) : 1;
    StepPlan plan;
    for (int32_t i = 0; i < rows; ++i) {
      plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(begin + i)]});
      plan.positions.push_back(begin + i);
      plan.outputs.push_back(OutputRow{i, OutputKind::kLogits});
    }
    plan.seqs.push_back(StepSeq{0, rows, begin, std::vector<BlockId>(table.begin(), table.end()), slot});
    plan.seqs.back().adapter_slot = adapter_slot;
    const StepResult r = run_step(dev, plan);
    if (r.logits.size() < static_cast<size_t>(rows) * vocab) return out;
    for (int32_t i = 0; i < rows; ++i) {
      const auto at = r.logits.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(i) * vocab);
      out.emplace_back(at, at + static_cast<ptrdiff_t>(vocab));
    }
    begin += rows;
  }
  return out;
}

void rewrite_gguf(const std::string& from, const std::string& to, const std::string& drop,
                  const std::string& replace, const std::vector<uint64_t>& shape, GgmlType replace_type) {
  auto full = GgufFile::open(from);
  ASSERT_TRUE(full.ok());
  GgufWriter w;
  for (const auto& [k, v] : full->metadata().entries()) w.set(k, v);
  for (const auto& t : full->tensors()) {
    if (t.name == drop) continue;
    if (t.name == replace) {
      const uint64_t rows = std::accumulate(shape.begin() + 1, shape.end(), uint64_t{1}, std::multiplies<>());
      const auto row_bytes = ggml_row_bytes(replace_type, shape[0]);
      ASSERT_TRUE(row_bytes.has_value());
      ASSERT_TRUE(w.add_tensor_bytes(t.name, shape, replace_type, std::vector<uint8_t>(*row_bytes * rows)).ok());
      continue;
    }
    auto bytes = full->tensor_data(t);
    ASSERT_TRUE(w.add_tensor_bytes(t.name, t.shape, t.type, {bytes.begin(), bytes.end()}).ok());
  }
  ASSERT_TRUE(w.write_file(to).ok());
}

void rewrite_gguf_metadata(const std::string& from, const std::string& to, const std::string& key,
                           const GgufValue& value) {
  auto full = GgufFile::open(from);
  ASSERT_TRUE(full.ok());
  GgufWriter w;
  for (const auto& [k, v] : full->metadata().entries()) w.set(k, v);
  w.set(key, value);
  for (const auto& t : full->tensors()) {
    auto bytes = full->tensor_data(t);
    ASSERT_TRUE(w.add_tensor_bytes(t.name, t.shape, t.type, {bytes.begin(), bytes.end()}).ok());
  }
  ASSERT_TRUE(w.write_file(to).ok());
}

void expect_prefill_chunkings_agree(const Model& model, const ForwardOptions& chunked_forms) {
  const auto tokens = fixed_prompt(45, static_cast<uint32_t>(model.hparams().vocab_size));
  const auto ref = ReferenceForward(model).logits(tokens);
  const ForwardOptions forms[2] = {ForwardOptions{}, chunked_forms};
  for (const bool chunked : {false, true}) {
    auto dev = make_test_device(model, {.limits = {.max_rows = 64, .max_outputs = 64, .max_seqs = 8},
                                        .forward = forms[chunked ? 1 : 0]});
    ASSERT_NE(dev, nullptr);
    const auto whole = logits_at_every_position(*dev, tokens, 37, 37, block_range(0, 4));
    const auto eights = logits_at_every_position(*dev, tokens, 37, 8, block_range(4, 4));
    const auto fives = logits_at_every_position(*dev, tokens, 37, 5, block_range(8, 4));
    const auto singles = logits_at_every_position(*dev, tokens, 0, 1, block_range(12, 4));
    ASSERT_EQ(whole.size(), tokens.size());
    ASSERT_EQ(singles.size(), tokens.size());
    if (!chunked) {
      EXPECT_EQ(whole, singles);
      EXPECT_EQ(eights, singles);
      EXPECT_EQ(fives, singles);
    }
    for (size_t pos = 0; pos < tokens.size(); ++pos) {
      EXPECT_LT(relative_error(singles[pos], whole[pos]), 2e-5) << "position " << pos;
      EXPECT_LT(relative_error(singles[pos], eights[pos]), 2e-5) << "position " << pos;
      EXPECT_LT(relative_error(singles[pos], fives[pos]), 2e-5) << "position " << pos;
      EXPECT_LT(relative_error(ref[pos], whole[pos]), 1e-4) << "chunked " << chunked << " position " << pos;
    }
  }
}

namespace {

// One step of `tokens` at [begin, begin + n) of the sequence in slot 0,
// logits for its last row (a verify step's: for every row, one after
// another); the await's status.
Status step_logits(Device& dev, std::span<const TokenId> tokens, int32_t begin, std::vector<float>& logits,
                   bool verify = false) {
  StepPlan plan;
  const auto n = static_cast<int32_t>(tokens.size());
  for (int32_t i = 0; i < n; ++i) {
    plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(i)]});
    plan.positions.push_back(begin + i);
    if (verify || i + 1 == n) plan.outputs.push_back(OutputRow{i, OutputKind::kLogits});
  }
  plan.seqs.push_back(StepSeq{0, n, begin, block_range(0, 4), StateSlotId(0), verify});
  Result<Ticket> t = dev.launch(plan);
  if (!t.ok()) return t.status();
  StepResult r;
  MET_RETURN_IF_ERROR(dev.await_result(*t, r));
  logits = r.logits;
  return ok_status();
}

}  // namespace

void expect_rewound_steps_are_exact(const Model& model, int32_t rollback) {
  const auto vocab = static_cast<uint32_t>(model.hparams().vocab_size);
  const std::vector<TokenId> prompt = fixed_prompt(12, vocab);
  const TokenId a = 3, b = 5, c = 7, d = 11;
  auto straight = make_test_device(model);
  std::vector<float> want_c, want_d, got;
  ASSERT_TRUE(step_logits(*straight, prompt, 0, got).ok());
  ASSERT_TRUE(step_logits(*straight, std::vector<TokenId>{c}, 12, want_c).ok());
  ASSERT_TRUE(step_logits(*straight, std::vector<TokenId>{d}, 13, want_d).ok());

  auto ringed = make_test_device(model, {.state_rollback = rollback});
  ASSERT_TRUE(step_logits(*ringed, prompt, 0, got).ok());
  ASSERT_TRUE(step_logits(*ringed, std::vector<TokenId>{a}, 12, got).ok());
  ASSERT_TRUE(step_logits(*ringed, std::vector<TokenId>{b}, 13, got).ok());  // two tokens past 12
  ASSERT_TRUE(step_logits(*ringed, std::vector<TokenId>{c}, 12, got).ok());
  EXPECT_EQ(got, want_c);
  ASSERT_TRUE(step_logits(*ringed, std::vector<TokenId>{d}, 13, got).ok());
  EXPECT_EQ(got, want_d);
  // Positions 14.. were never run; past the ring's depth is refused.
  for (int32_t k = 0; k < rollback; ++k) {
    ASSERT_TRUE(step_logits(*ringed, std::vector<TokenId>{a}, 14 + k, got).ok());
  }
  const Status too_far = step_logits(*ringed, std::vector<TokenId>{a}, 13, got);
  EXPECT_NE(too_far.message().find("no state after 13 tokens"), std::string::npos) << too_far.message();
}

namespace {

// Slot 0's state after `position` tokens, as a spill image reads it.
std::vector<uint8_t> state_image(Device& dev, int64_t position) {
  std::vector<uint8_t> bytes(static_cast<size_t>(dev.info().state_slot_bytes));
  const Status st = dev.read_state_slot(StateSlotId(0), position, bytes);
  EXPECT_TRUE(st.ok()) << st.message();
  return bytes;
}

}  // namespace

void expect_verify_steps_rewind_exactly(const Model& model, int32_t drafts) {
  const auto vocab = static_cast<uint32_t>(model.hparams().vocab_size);
  const std::vector<TokenId> prompt = fixed_prompt(12, vocab);
  std::vector<TokenId> rows;  // the decode row's token, then the drafts
  for (int32_t i = 0; i <= drafts; ++i) rows.push_back(static_cast<TokenId>((29 * i + 3) % vocab));
  const TokenId next = 13;  // what the sequence runs after the accepted prefix
  // want[j]: logits after rows [0, j], decoded one at a time; after[j]: then
  // `next`; image[j]: the state before `next`.
  std::vector<std::vector<float>> want(rows.size()), after(rows.size());
  std::vector<std::vector<uint8_t>> image(rows.size());
  std::vector<float> got;
  for (size_t j = 0; j < rows.size(); ++j) {
    auto straight = make_test_device(model);
    ASSERT_TRUE(step_logits(*straight, prompt, 0, got).ok());
    for (size_t i = 0; i <= j; ++i) {
      ASSERT_TRUE(step_logits(*straight, std::span(&rows[i], 1), static_cast<int32_t>(12 + i), want[i]).ok());
    }
    image[j] = state_image(*straight, static_cast<int64_t>(13 + j));
    ASSERT_TRUE(step_logits(*straight, std::span(&next, 1), static_cast<int32_t>(13 + j), after[j]).ok());
  }
  const size_t v = vocab;
  for (size_t j = 0; j < rows.size(); ++j) {
    for (const bool spill : {false, true}) {
      auto dev = make_test_device(model, {.state_drafts = drafts});
      ASSERT_TRUE(step_logits(*dev, prompt, 0, got).ok());
      ASSERT_TRUE(step_logits(*dev, rows, 12, got, true).ok());
      ASSERT_EQ(got.size(), rows.size() * v);
      for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_TRUE(std::equal(want[i].begin(), want[i].end(), got.begin() + static_cast<ptrdiff_t>(i * v)))
            << "verify row " << i;
      }
      // Rows [0, j] accepted: the sequence goes on from 13 + j (after a
      // spill image of that state, replayed for it, when `spill`).
      if (spill) {
        EXPECT_EQ(state_image(*dev, static_cast<int64_t>(13 + j)), image[j]) << j + 1 << " accepted";
      }
      ASSERT_TRUE(step_logits(*dev, std::span(&next, 1), static_cast<int32_t>(13 + j), got).ok());
      EXPECT_EQ(got, after[j]) << "continued after " << j + 1 << " of " << rows.size() << " rows";
    }
  }
  // A verify step from an accepted prefix, its own prefix accepted in turn:
  // rows 0 and 1, then rows 2 and 3 of a verify of rows 2.., then `next`.
  if (drafts >= 3) {
    auto dev = make_test_device(model, {.state_drafts = drafts});
    ASSERT_TRUE(step_logits(*dev, prompt, 0, got).ok());
    ASSERT_TRUE(step_logits(*dev, rows, 12, got, true).ok());
    ASSERT_TRUE(step_logits(*dev, std::span(rows).subspan(2), 14, got, true).ok());
    EXPECT_TRUE(std::equal(want[2].begin(), want[2].end(), got.begin())) << "a verify step after a replay";
    ASSERT_TRUE(step_logits(*dev, std::span(&next, 1), 16, got).ok());
    EXPECT_EQ(got, after[3]) << "continued after a verify step from a replayed prefix";
  }
  auto dev = make_test_device(model, {.state_drafts = drafts});
  rows.push_back(5);
  const Status refused = step_logits(*dev, rows, 0, got, true);
  EXPECT_NE(refused.message().find(fmt::format("may verify {}", drafts)), std::string::npos) << refused.message();
}

double relative_error(std::span<const float> ref, std::span<const float> got) {
  const std::vector<double> wide(ref.begin(), ref.end());
  return relative_error(std::span<const double>(wide), got);
}

double relative_error(std::span<const double> ref, std::span<const float> got) {
  double max_ref = 0, max_err = 0;
  for (size_t v = 0; v < ref.size(); ++v) {
    max_ref = std::max(max_ref, std::fabs(ref[v]));
    max_err = std::max(max_err, std::fabs(ref[v] - got[v]));
  }
  return max_err / max_ref;
}

LogitsAgreement expect_logits_agree(const std::vector<std::vector<float>>& ref,
                                    const std::vector<std::vector<float>>& got, double tolerance,
                                    std::span<const double> margins, double min_margin) {
  LogitsAgreement a;
  EXPECT_EQ(got.size(), ref.size());
  for (size_t pos = 0; pos < std::min(ref.size(), got.size()); ++pos) {
    const double margin = pos < margins.size() ? margins[pos] : min_margin;
    if (margin < min_margin) continue;
    ++a.compared;
    const double err = relative_error(ref[pos], got[pos]);
    a.worst = std::max(a.worst, err);
    EXPECT_LT(err, tolerance) << "position " << pos << ", routing margin " << margin;
  }
  return a;
}

RandomModelSpec small_model_spec(Arch arch, GgmlType dtype) {
  RandomModelSpec s;
  s.arch = arch;
  s.num_layers = 2;
  s.embedding_length = 256;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 512;
  s.vocab_size = 600;
  s.dtype = dtype;
  s.seed = 11;
  return s;
}

// 4 trunk layers (0-2 gated delta, 3 attention), one MTP block; 2 key heads
// and 4 value heads, so value head h reads key head h % 2 (qwen3next: h / 2).
RandomModelSpec hybrid_spec(Arch arch, GgmlType dtype, uint32_t vocab) {
  RandomModelSpec s;
  s.arch = arch;
  s.num_layers = 4;
  s.embedding_length = 128;
  s.num_heads = 2;
  s.num_kv_heads = 1;
  s.head_dim = 64;
  s.feed_forward_length = 256;
  s.vocab_size = vocab;
  s.context_length = 512;
  s.ssm_state_size = 32;
  s.ssm_group_count = 2;
  s.ssm_time_step_rank = 4;
  s.nextn_predict_layers = 1;
  s.dtype = dtype;
  s.seed = 17;
  if (arch != Arch::kQwen35) {
    s.num_experts = 4;
    s.num_experts_used = 2;
    s.expert_feed_forward_length = 64;
    s.shared_expert_feed_forward_length = 96;
  }
  return s;
}

}  // namespace met::testing
