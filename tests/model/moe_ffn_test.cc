// Tests for MoeFfn (src/model/moe_ffn.h) on hand-built F32 weights: its
// output against a double-precision definition, on 1 and 3 threads; experts
// no row chose are never read (their weights are NaN); the shared expert is
// added with its sigmoid gate; a batch large enough to route on every thread
// gives each row the bytes it gets alone, on any thread count.
#include "model/moe_ffn.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "testing/random_data.h"

namespace met::moe_ffn_test {
namespace {

constexpr int64_t kEmbd = 32, kFf = 16, kSharedFf = 24;
constexpr int32_t kExperts = 6, kUsed = 2;

cpu::WeightMatrix f32_matrix(const std::vector<float>& data, int64_t rows, int64_t cols, size_t offset = 0) {
  cpu::WeightMatrix w;
  w.type = GgmlType::kF32;
  w.data = reinterpret_cast<const uint8_t*>(data.data() + offset);
  w.rows = rows;
  w.cols = cols;
  w.row_bytes = static_cast<size_t>(cols) * sizeof(float);
  return w;
}

struct Fixture {
  std::vector<float> router, gate, up, down, sh_gate_inp, sh_gate, sh_up, sh_down;
  MoeWeights w;
  ModelHParams hp;
};

double silu(double g) { return g / (1.0 + std::exp(-g)); }

std::vector<double> ffn(const float* gate, const float* up, const float* down, const float* x, int64_t ff) {
  std::vector<double> h(static_cast<size_t>(ff)), y(kEmbd, 0.0);
  for (int64_t n = 0; n < ff; ++n) {
    double g = 0, u = 0;
    for (int64_t i = 0; i < kEmbd; ++i) g += double(gate[n * kEmbd + i]) * x[i], u += double(up[n * kEmbd + i]) * x[i];
    h[static_cast<size_t>(n)] = silu(g) * u;
  }
  for (int64_t n = 0; n < kEmbd; ++n) {
    for (int64_t i = 0; i < ff; ++i) y[static_cast<size_t>(n)] += double(down[n * ff + i]) * h[static_cast<size_t>(i)];
  }
  return y;
}

// Rows choose experts {1, 3} and {3, 4}: 0, 2 and 5 are poisoned with NaN.
Fixture make_fixture(bool shared, const std::vector<float>& x) {
  Fixture f;
  std::mt19937 rng(1);
  met::testing::UniformFloat u(-0.3f, 0.3f);
  auto fill = [&](std::vector<float>& v, size_t n) {
    v.resize(n);
    for (float& e : v) e = u(rng);
  };
  fill(f.gate, kExperts * kFf * kEmbd);
  fill(f.up, kExperts * kFf * kEmbd);
  fill(f.down, kExperts * kEmbd * kFf);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int32_t e : {0, 2, 5}) {
    std::fill_n(f.gate.begin() + e * kFf * kEmbd, kFf * kEmbd, nan);
    std::fill_n(f.up.begin() + e * kFf * kEmbd, kFf * kEmbd, nan);
    std::fill_n(f.down.begin() + e * kEmbd * kFf, kEmbd * kFf, nan);
  }
  // Router: row 0 of x is e_0, row 1 is e_1 (unit vectors), so logit[e] is
  // router[e][0] for row 0 and router[e][1] for row 1.
  f.router.assign(kExperts * kEmbd, 0.0f);
  const float logits0[kExperts] = {-2, 3, -1, 2.5f, 0, -3};
  const float logits1[kExperts] = {0, -1, -2, 4, 1.5f, -4};
  for (int32_t e = 0; e < kExperts; ++e) f.router[e * kEmbd] = logits0[e], f.router[e * kEmbd + 1] = logits1[e];
  f.hp.embedding_length = kEmbd;
  f.hp.expert_count = kExperts;
  f.hp.expert_used_count = kUsed;
  f.hp.expert_feed_forward_length = kFf;
  f.w.router = f32_matrix(f.router, kExperts, kEmbd);
  for (int32_t e = 0; e < kExperts; ++e) {
    f.w.gate.push_back(f32_matrix(f.gate, kFf, kEmbd, static_cast<size_t>(e * kFf * kEmbd)));
    f.w.up.push_back(f32_matrix(f.up, kFf, kEmbd, static_cast<size_t>(e * kFf * kEmbd)));
    f.w.down.push_back(f32_matrix(f.down, kEmbd, kFf, static_cast<size_t>(e * kEmbd * kFf)));
  }
  f.w.norm_weights = true;
  f.w.num_used = kUsed;
  (void)x;
  if (!shared) return f;
  f.hp.expert_shared_feed_forward_length = kSharedFf;
  fill(f.sh_gate_inp, kEmbd);
  fill(f.sh_gate, kSharedFf * kEmbd);
  fill(f.sh_up, kSharedFf * kEmbd);
  fill(f.sh_down, kEmbd * kSharedFf);
  f.w.has_shared = true;
  f.w.shared_gate_inp = f32_matrix(f.sh_gate_inp, 1, kEmbd);
  f.w.shared_gate = f32_matrix(f.sh_gate, kSharedFf, kEmbd);
  f.w.shared_up = f32_matrix(f.sh_up, kSharedFf, kEmbd);
  f.w.shared_down = f32_matrix(f.sh_down, kEmbd, kSharedFf);
  return f;
}

std::vector<double> expected_row(const Fixture& f, const float* x, int32_t a, int32_t b, float la, float lb) {
  // Renormalised top-2 softmax weights depend only on the two logits.
  const double wa = 1.0 / (1.0 + std::exp(double(lb) - la)), wb = 1.0 - wa;
  auto ya = ffn(&f.gate[a * kFf * kEmbd], &f.up[a * kFf * kEmbd], &f.down[a * kEmbd * kFf], x, kFf);
  auto yb = ffn(&f.gate[b * kFf * kEmbd], &f.up[b * kFf * kEmbd], &f.down[b * kEmbd * kFf], x, kFf);
  std::vector<double> y(kEmbd);
  for (int64_t i = 0; i < kEmbd; ++i) {
    const size_t j = static_cast<size_t>(i);
    y[j] = wa * ya[j] + wb * yb[j];
  }
  if (!f.w.has_shared) return y;
  double g = 0;
  for (int64_t i = 0; i < kEmbd; ++i) g += double(f.sh_gate_inp[static_cast<size_t>(i)]) * x[i];
  auto sh = ffn(f.sh_gate.data(), f.sh_up.data(), f.sh_down.data(), x, kSharedFf);
  for (int64_t i = 0; i < kEmbd; ++i) y[static_cast<size_t>(i)] += sh[static_cast<size_t>(i)] / (1.0 + std::exp(-g));
  return y;
}

class MoeFfnTest : public ::testing::TestWithParam<std::tuple<bool, int>> {};

TEST_P(MoeFfnTest, MatchesTheDefinitionAndNeverReadsUnchosenExperts) {
  const auto [shared, threads] = GetParam();
  std::vector<float> x(2 * kEmbd, 0.0f);
  x[0] = 1.0f;          // row 0 = e_0: experts 1 (3.0) and 3 (2.5)
  x[kEmbd + 1] = 1.0f;  // row 1 = e_1: experts 3 (4.0) and 4 (1.5)
  const Fixture f = make_fixture(shared, x);
  MoeFfn moe(f.hp, 8);
  std::vector<float> out(2 * kEmbd);
  cpu::WorkerPool pool(threads);
  for (int64_t rows : {1, 2}) {
    pool.run([&](cpu::ThreadCtx& ctx) { moe.run(ctx, f.w, x.data(), rows, out.data()); });
    const std::vector<double> want[2] = {expected_row(f, &x[0], 1, 3, 3.0f, 2.5f),
                                         expected_row(f, &x[kEmbd], 3, 4, 4.0f, 1.5f)};
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < kEmbd; ++i) {
        ASSERT_TRUE(std::isfinite(out[static_cast<size_t>(r * kEmbd + i)])) << "row " << r << " col " << i;
        EXPECT_NEAR(out[static_cast<size_t>(r * kEmbd + i)], want[r][static_cast<size_t>(i)], 1e-5)
            << "rows " << rows << " row " << r << " col " << i;
      }
    }
  }
}

TEST(MoeFfnBatches, RowsAreTheSameAloneOrInABatchOnAnyThreadCount) {
  // 40 rows are 80 (row, choice) slots: routed and gathered by every thread,
  // where 1 row is routed by thread 0 alone; the experts' columns are split
  // differently on each thread count.
  constexpr int64_t kRows = 40;
  std::mt19937 rng(7);
  met::testing::UniformFloat any(-1.0f, 1.0f), positive(0.1f, 1.0f);
  std::vector<float> x(static_cast<size_t>(kRows * kEmbd));
  for (float& v : x) v = any(rng);
  // Nonnegative x[0], x[1] keep every row on experts 1, 3 and 4 (the others'
  // weights are NaN; see make_fixture's router).
  for (int64_t r = 0; r < kRows; ++r) x[r * kEmbd] = positive(rng), x[r * kEmbd + 1] = positive(rng);
  for (const bool shared : {false, true}) {
    const Fixture f = make_fixture(shared, x);
    std::vector<float> first;
    for (const int threads : {1, 2, 3}) {
      MoeFfn moe(f.hp, kRows);
      cpu::WorkerPool pool(threads);
      std::vector<float> batch(x.size()), alone(kEmbd);
      pool.run([&](cpu::ThreadCtx& ctx) { moe.run(ctx, f.w, x.data(), kRows, batch.data()); });
      for (const float v : batch) ASSERT_TRUE(std::isfinite(v));
      if (first.empty()) first = batch;
      EXPECT_EQ(std::memcmp(batch.data(), first.data(), batch.size() * sizeof(float)), 0) << threads << " threads";
      for (const int64_t r : {0, 17, 39}) {
        pool.run([&](cpu::ThreadCtx& ctx) { moe.run(ctx, f.w, &x[r * kEmbd], 1, alone.data()); });
        EXPECT_EQ(std::memcmp(alone.data(), &batch[r * kEmbd], kEmbd * sizeof(float)), 0)
            << "row " << r << ", " << threads << " threads, shared " << shared;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedAndThreads, MoeFfnTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 3)),
                         [](const auto& param_info) {
                           return std::string(std::get<0>(param_info.param) ? "Shared" : "Routed") + "_" +
                                  std::to_string(std::get<1>(param_info.param)) + "threads";
                         });

}  // namespace
}  // namespace met::moe_ffn_test
