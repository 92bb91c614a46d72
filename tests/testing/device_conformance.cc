// The Device conformance suite (see device_conformance.h).
#include "testing/device_conformance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "testing/model_test_support.h"

namespace met::testing {
namespace {

constexpr int32_t kBlocksApart = 1;  // a gap between seqs' block ranges

// One sequence's plan for the run.
struct SeqPlan {
  int32_t join_step = 0;
  int32_t chunk = 1;
  std::vector<TokenId> prompt;
  int32_t fed = 0;          // positions fed so far
  int32_t decoded = 0;      // decode rows run
  TokenId last_argmax = -1;
  int32_t last_output = -1;  // its output index in the step launched last
  std::optional<int32_t> pending_fed_position;
};

struct Launched {
  Ticket ticket;
  std::vector<size_t> output_seq;  // the run's seq of each output
  StepPlan plan;
};

class Driver {
 public:
  Driver(Device& dev, const ConformanceOptions& o) : dev_(dev), o_(o), rng_(o.seed) {}

  ConformanceRun run() {
    make_seqs();
    for (int32_t step = 0; !all_done(); ++step) {
      const bool ahead = pending_.has_value() && coin(2);
      if (!ahead) settle();
      StepPlan plan = build(step, ahead);
      if (plan.inputs.empty()) continue;
      auto ticket = dev_.launch(plan);
      EXPECT_TRUE(ticket.ok()) << ticket.status().to_string();
      if (!ticket.ok()) break;
      settle();
      pending_ = Launched{*ticket, std::move(output_seq_), std::move(plan)};
      output_seq_.clear();
      ++run_.steps;
    }
    settle();
    return std::move(run_);
  }

 private:
  bool coin(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_) == 0; }
  int32_t uniform(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng_); }

  void make_seqs() {
    const int32_t block_tokens = dev_.info().kv_block_tokens;
    int32_t next_block = 0;
    for (int32_t s = 0; s < o_.num_seqs; ++s) {
      SeqPlan p;
      p.join_step = 2 * s;
      p.chunk = uniform(1, o_.max_chunk);
      for (int32_t i = uniform(3, o_.max_prompt); i > 0; --i) {
        p.prompt.push_back(uniform(1, dev_.info().vocab_size - 1));
      }
      ConformanceSeq rec;
      const int32_t positions = static_cast<int32_t>(p.prompt.size()) + o_.decode_steps + o_.extra_positions;
      for (int32_t b = 0; b < (positions + block_tokens - 1) / block_tokens; ++b) rec.table.emplace_back(next_block++);
      std::shuffle(rec.table.begin(), rec.table.end(), rng_);  // scattered, as a real pool's
      next_block += kBlocksApart;
      plans_.push_back(std::move(p));
      run_.seqs.push_back(std::move(rec));
    }
    EXPECT_LE(next_block, dev_.info().num_kv_blocks) << "the device's pool is too small for the run";
  }

  bool done(size_t s) const { return plans_[s].decoded >= o_.decode_steps; }
  bool all_done() const {
    for (size_t s = 0; s < plans_.size(); ++s) {
      if (!done(s)) return false;
    }
    return true;
  }

  std::vector<TokenId> bans_for(const SeqPlan& p) {
    std::vector<TokenId> banned;
    if (coin(4) && p.last_argmax >= 0) banned.push_back(p.last_argmax);  // moves the argmax
    if (coin(3)) {
      for (int32_t k = uniform(1, 3); k > 0; --k) banned.push_back(uniform(0, dev_.info().vocab_size - 1));
    }
    std::sort(banned.begin(), banned.end());
    banned.erase(std::unique(banned.begin(), banned.end()), banned.end());
    return banned;
  }

  void add_output(StepPlan& plan, int32_t row, SeqPlan& p) {
    const std::vector<TokenId> banned = bans_for(p);
    const OutputKind kind = coin(2) ? OutputKind::kLogits : OutputKind::kArgmax;
    p.last_output = static_cast<int32_t>(plan.outputs.size());
    output_seq_.push_back(static_cast<size_t>(&p - plans_.data()));
    plan.outputs.push_back({row, kind, static_cast<int32_t>(plan.banned.size()), static_cast<int32_t>(banned.size())});
    plan.banned.insert(plan.banned.end(), banned.begin(), banned.end());
  }

  // Rows of seq s for this step; false when it has none.
  bool add_seq(StepPlan& plan, size_t s, bool ahead, bool& prefill, bool& decode) {
    SeqPlan& p = plans_[s];
    ConformanceSeq& rec = run_.seqs[s];
    const auto row_begin = static_cast<int32_t>(plan.inputs.size());
    const auto prompt_len = static_cast<int32_t>(p.prompt.size());
    int32_t rows = 0;
    if (p.fed < prompt_len) {
      rows = std::min(p.chunk, prompt_len - p.fed);
      for (int32_t i = 0; i < rows; ++i) {
        plan.inputs.push_back(FeedToken{p.prompt[static_cast<size_t>(p.fed + i)]});
        plan.positions.push_back(p.fed + i);
        rec.tokens.push_back(p.prompt[static_cast<size_t>(p.fed + i)]);
      }
      prefill = true;
    } else {
      rows = 1;
      if (ahead) {
        plan.inputs.push_back(FeedFromRow{p.last_output});
        p.pending_fed_position = p.fed;
        rec.tokens.push_back(-1);
        ++run_.fed_rows;
      } else {
        plan.inputs.push_back(FeedToken{p.last_argmax});
        rec.tokens.push_back(p.last_argmax);
      }
      plan.positions.push_back(p.fed);
      ++p.decoded;
      decode = true;
    }
    plan.seqs.push_back(StepSeq{row_begin, rows, p.fed, rec.table, std::nullopt});
    p.fed += rows;
    rec.chunks.push_back(rows);
    const bool last_prompt_row = p.fed == prompt_len;
    if (p.fed > prompt_len || last_prompt_row || coin(2)) add_output(plan, row_begin + rows - 1, p);
    else p.last_output = -1;
    return true;
  }

  StepPlan build(int32_t step, bool ahead) {
    StepPlan plan;
    bool prefill = false, decode = false;
    for (size_t s = 0; s < plans_.size(); ++s) {
      if (step < plans_[s].join_step || done(s)) continue;
      // A decode row fed ahead needs an output of its seq in the step before.
      if (ahead && plans_[s].fed >= static_cast<int32_t>(plans_[s].prompt.size()) && plans_[s].last_output < 0) continue;
      add_seq(plan, s, ahead, prefill, decode);
    }
    if (prefill && decode) ++run_.mixed_steps;
    return plan;
  }

  // Awaits the step in flight, checks and records its outputs.
  void settle();

  Device& dev_;
  ConformanceOptions o_;
  std::mt19937 rng_;
  std::vector<SeqPlan> plans_;
  ConformanceRun run_;
  std::optional<Launched> pending_;
  std::vector<size_t> output_seq_;  // of the plan being built
};

// The contract every output meets, whatever the device.
void check_output(const ConformanceOutput& out, int32_t vocab, const char* where) {
  for (const TokenId b : out.banned) {
    EXPECT_NE(out.argmax, b) << where << ": a banned id won the argmax at position " << out.position;
  }
  EXPECT_GE(out.argmax, 0) << where;
  EXPECT_LT(out.argmax, vocab) << where;
  if (out.kind != OutputKind::kLogits) return;
  ASSERT_EQ(std::ssize(out.logits), vocab) << where;
  for (const TokenId b : out.banned) {
    EXPECT_EQ(out.logits[static_cast<size_t>(b)], -INFINITY) << where << ": banned id " << b << " at position " << out.position;
  }
  const auto first_max = std::max_element(out.logits.begin(), out.logits.end()) - out.logits.begin();
  EXPECT_EQ(out.argmax, first_max) << where << ": the argmax is not the logits' first maximum at position "
                                   << out.position;
}

void Driver::settle() {
  if (!pending_) return;
  StepResult result;
  const Status s = dev_.await_result(pending_->ticket, result);
  EXPECT_TRUE(s.ok()) << s.to_string();
  const Launched launched = std::move(*pending_);
  pending_.reset();
  if (!s.ok()) return;
  const int32_t vocab = dev_.info().vocab_size;
  for (size_t o = 0; o < launched.plan.outputs.size(); ++o) {
    const OutputRow& row = launched.plan.outputs[o];
    ConformanceOutput out;
    out.position = launched.plan.positions[static_cast<size_t>(row.row)];
    out.kind = row.kind;
    out.banned.assign(launched.plan.banned.begin() + row.banned_begin,
                      launched.plan.banned.begin() + row.banned_begin + row.num_banned);
    out.argmax = result.argmax[o];
    if (row.kind == OutputKind::kLogits) {
      out.logits.assign(result.logits.begin() + static_cast<ptrdiff_t>(o) * vocab,
                        result.logits.begin() + static_cast<ptrdiff_t>(o + 1) * vocab);
    }
    check_output(out, vocab, "mixed run");
    const size_t seq = launched.output_seq[o];
    SeqPlan& p = plans_[seq];
    p.last_argmax = out.argmax;
    if (p.pending_fed_position) {
      // The row fed from this output ran in the step launched after it.
      run_.seqs[seq].tokens[static_cast<size_t>(*p.pending_fed_position)] = out.argmax;
      p.pending_fed_position.reset();
    }
    run_.seqs[seq].outputs.push_back(std::move(out));
  }
}

}  // namespace

ConformanceRun run_mixed_plans(Device& dev, const ConformanceOptions& options) {
  return Driver(dev, options).run();
}

namespace {

// Launches `plan`, awaits it and appends its outputs to `rec`.
void run_alone(Device& dev, const StepPlan& plan, ConformanceSeq& rec, const char* where) {
  const StepResult result = run_step(dev, plan);
  const int32_t vocab = dev.info().vocab_size;
  for (size_t o = 0; o < plan.outputs.size() && o < result.argmax.size(); ++o) {
    const OutputRow& row = plan.outputs[o];
    ConformanceOutput out;
    out.position = plan.positions[static_cast<size_t>(row.row)];
    out.kind = row.kind;
    out.banned.assign(plan.banned.begin() + row.banned_begin, plan.banned.begin() + row.banned_begin + row.num_banned);
    out.argmax = result.argmax[o];
    if (row.kind == OutputKind::kLogits) {
      out.logits.assign(result.logits.begin() + static_cast<ptrdiff_t>(o) * vocab,
                        result.logits.begin() + static_cast<ptrdiff_t>(o + 1) * vocab);
    }
    check_output(out, vocab, where);
    rec.outputs.push_back(std::move(out));
  }
}

// One step of rows [begin, begin + rows) of a seq, tokens given, with the
// output `out` (if any) on its last row.
StepPlan seq_step(const std::vector<BlockId>& table, const std::vector<TokenId>& tokens, int32_t begin,
                  int32_t rows, const ConformanceOutput* out) {
  StepPlan plan;
  for (int32_t i = 0; i < rows; ++i) {
    plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(begin + i)]});
    plan.positions.push_back(begin + i);
  }
  plan.seqs.push_back(StepSeq{0, rows, begin, table, std::nullopt});
  if (out != nullptr) {
    plan.outputs.push_back({rows - 1, out->kind, 0, static_cast<int32_t>(out->banned.size())});
    plan.banned = out->banned;
  }
  return plan;
}

}  // namespace

ConformanceRun replay_each_alone(Device& dev, const ConformanceRun& run) {
  ConformanceRun replay;
  for (const ConformanceSeq& seq : run.seqs) {
    ConformanceSeq rec;
    rec.table = seq.table;
    rec.tokens = seq.tokens;
    rec.chunks = seq.chunks;
    int32_t begin = 0;
    size_t next_output = 0;
    for (const int32_t rows : seq.chunks) {
      const ConformanceOutput* out = nullptr;
      if (next_output < seq.outputs.size() && seq.outputs[next_output].position == begin + rows - 1) {
        out = &seq.outputs[next_output++];
      }
      run_alone(dev, seq_step(seq.table, seq.tokens, begin, rows, out), rec, "replay alone");
      begin += rows;
      ++replay.steps;
    }
    replay.seqs.push_back(std::move(rec));
  }
  return replay;
}

void expect_same_outputs(const ConformanceRun& a, const ConformanceRun& b, double tolerance) {
  ASSERT_EQ(a.seqs.size(), b.seqs.size());
  for (size_t s = 0; s < a.seqs.size(); ++s) {
    const auto& x = a.seqs[s].outputs;
    const auto& y = b.seqs[s].outputs;
    ASSERT_EQ(x.size(), y.size()) << "seq " << s;
    for (size_t o = 0; o < x.size(); ++o) {
      ASSERT_EQ(x[o].position, y[o].position) << "seq " << s << " output " << o;
      EXPECT_EQ(x[o].argmax, y[o].argmax) << "seq " << s << " position " << x[o].position;
      if (tolerance == 0.0) {
        EXPECT_EQ(x[o].logits, y[o].logits) << "seq " << s << " position " << x[o].position;
      } else if (!x[o].logits.empty() && !y[o].logits.empty()) {
        EXPECT_LT(relative_error(x[o].logits, y[o].logits), tolerance) << "seq " << s << " position " << x[o].position;
      }
    }
  }
}

void expect_kv_moves_between_devices(Device& from, Device& to, const ConformanceRun& run, int32_t steps,
                                     double tolerance) {
  ASSERT_FALSE(run.seqs.empty());
  const ConformanceSeq& seq = run.seqs[0];
  ASSERT_FALSE(seq.outputs.empty());
  ASSERT_EQ(from.info().kv_block_bytes, to.info().kv_block_bytes) << "the devices' KV blocks differ in size";
  // The blocks go to the top of `to`'s pool, in reverse order.
  std::vector<BlockId> moved;
  std::vector<uint8_t> bytes(static_cast<size_t>(from.info().kv_block_bytes));
  for (size_t i = 0; i < seq.table.size(); ++i) {
    moved.emplace_back(to.info().num_kv_blocks - 1 - static_cast<int32_t>(i));
    const Status r = from.read_kv_block(seq.table[i], bytes);
    ASSERT_TRUE(r.ok()) << r.to_string();
    const Status w = to.write_kv_block(moved.back(), bytes);
    ASSERT_TRUE(w.ok()) << w.to_string();
  }
  ConformanceRun here, there;
  here.seqs.resize(1);
  there.seqs.resize(1);
  std::vector<TokenId> tokens = seq.tokens;
  tokens.push_back(seq.outputs.back().argmax);
  const ConformanceOutput logits_out{};  // kLogits, no bans
  for (int32_t i = 0; i < steps; ++i) {
    const auto position = static_cast<int32_t>(tokens.size()) - 1;
    run_alone(from, seq_step(seq.table, tokens, position, 1, &logits_out), here.seqs[0], "KV left in place");
    run_alone(to, seq_step(moved, tokens, position, 1, &logits_out), there.seqs[0], "KV moved");
    if (here.seqs[0].outputs.empty()) return;
    tokens.push_back(here.seqs[0].outputs.back().argmax);
  }
  expect_same_outputs(here, there, tolerance);
}

}  // namespace met::testing
