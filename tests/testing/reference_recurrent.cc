// The reference recurrence, and ReferenceForward's gated delta layers.
#include "testing/reference_recurrent.h"

#include <cmath>

#include "core/check.h"
#include "testing/reference_forward.h"

namespace met::testing {

Rows short_conv(std::span<const float> kernel, size_t d_conv, const Rows& x, std::vector<double>& state) {
  const size_t channels = kernel.size() / d_conv, keep = d_conv - 1;
  MET_CHECK(state.size() == channels * keep, "conv state of {} floats for {} channels", state.size(), channels);
  Rows y(x.size(), std::vector<double>(channels));
  std::vector<double> window(d_conv);
  for (size_t c = 0; c < channels; ++c) {
    for (size_t j = 0; j < keep; ++j) window[j] = state[c * keep + j];
    for (size_t t = 0; t < x.size(); ++t) {
      window[keep] = x[t][c];
      double acc = 0.0;
      for (size_t j = 0; j < d_conv; ++j) acc += static_cast<double>(kernel[c * d_conv + j]) * window[j];
      y[t][c] = acc;
      for (size_t j = 0; j < keep; ++j) window[j] = window[j + 1];
    }
    for (size_t j = 0; j < keep; ++j) state[c * keep + j] = window[j];
  }
  return y;
}

Rows gated_delta_rule(const GatedDeltaShape& shape, const Rows& q, const Rows& k, const Rows& v, const Rows& g,
                      const Rows& beta, std::vector<double>& state) {
  const size_t d = shape.head_dim, hv = shape.num_v_heads, hk = shape.num_k_heads;
  MET_CHECK(state.size() == hv * d * d, "delta state of {} floats for {} heads of {}", state.size(), hv, d);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Rows o(q.size(), std::vector<double>(hv * d, 0.0));
  std::vector<double> delta(d);
  for (size_t t = 0; t < q.size(); ++t) {
    for (size_t h = 0; h < hv; ++h) {
      double* s = &state[h * d * d];
      const size_t kv = shape.grouped ? h / (hv / hk) : h % hk;
      const double* qh = &q[t][kv * d];
      const double* kh = &k[t][kv * d];
      const double* vh = &v[t][h * d];
      const double decay = std::exp(g[t][h]);
      for (size_t i = 0; i < d * d; ++i) s[i] *= decay;
      for (size_t j = 0; j < d; ++j) {
        double sk = 0.0;
        for (size_t i = 0; i < d; ++i) sk += s[i * d + j] * kh[i];
        delta[j] = beta[t][h] * (vh[j] - sk);
      }
      for (size_t i = 0; i < d; ++i) {
        for (size_t j = 0; j < d; ++j) s[i * d + j] += kh[i] * delta[j];
      }
      for (size_t j = 0; j < d; ++j) {
        double sq = 0.0;
        for (size_t i = 0; i < d; ++i) sq += s[i * d + j] * qh[i];
        o[t][h * d + j] = sq * scale;
      }
    }
  }
  return o;
}

void ReferenceForward::gated_delta(const Layer& l, Rows& x) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, T = x.size(), d = hp.ssm_state_size;
  const size_t hk = hp.ssm_group_count, hv = hp.ssm_time_step_rank, key_dim = hk * d, value_dim = hv * d;
  const size_t conv_dim = hp.conv_dim(), d_conv = hp.ssm_conv_kernel;
  const double eps = hp.rms_norm_eps;
  Rows qkv(T), z(T), beta(T), g(T);
  for (size_t t = 0; t < T; ++t) {
    auto xn = rms_norm(x[t], l.attn_norm.data(), embd, eps);
    qkv[t] = matvec(l.wqkv, xn, conv_dim);
    z[t] = matvec(l.wgate, xn, value_dim);
    if (l.ssm_ba.empty()) {
      beta[t] = matvec(l.ssm_beta, xn, hv);
      g[t] = matvec(l.ssm_alpha, xn, hv);
    } else {  // qwen3next: per key head, its value heads' betas then their alphas
      const auto ba = matvec(l.ssm_ba, xn, 2 * hv);
      const size_t per_key = hv / hk;
      beta[t].resize(hv);
      g[t].resize(hv);
      for (size_t h = 0; h < hv; ++h) {
        beta[t][h] = ba[2 * per_key * (h / per_key) + h % per_key];
        g[t][h] = ba[2 * per_key * (h / per_key) + per_key + h % per_key];
      }
    }
    for (size_t h = 0; h < hv; ++h) {
      beta[t][h] = sigmoid(beta[t][h]);
      g[t][h] = softplus(g[t][h] + l.ssm_dt[h]) * l.ssm_a[h];
    }
  }
  std::vector<double> conv_state(conv_dim * (d_conv - 1), 0.0);
  Rows mixed = short_conv(l.ssm_conv, d_conv, qkv, conv_state);
  Rows q(T), k(T), v(T);
  for (size_t t = 0; t < T; ++t) {
    for (double& e : mixed[t]) e = silu(e);
    q[t].assign(mixed[t].begin(), mixed[t].begin() + key_dim);
    k[t].assign(mixed[t].begin() + key_dim, mixed[t].begin() + 2 * key_dim);
    v[t].assign(mixed[t].begin() + 2 * key_dim, mixed[t].end());
    for (size_t h = 0; h < hk; ++h) {
      l2_normalize(q[t], h * d, d, eps);
      l2_normalize(k[t], h * d, d, eps);
    }
  }
  std::vector<double> ssm_state(hv * d * d, 0.0);
  Rows o = gated_delta_rule({hk, hv, d, hp.ssm_grouped_v_heads}, q, k, v, g, beta, ssm_state);
  for (size_t t = 0; t < T; ++t) {
    std::vector<double> gated(value_dim);
    for (size_t h = 0; h < hv; ++h) {
      std::vector<double> head(o[t].begin() + h * d, o[t].begin() + (h + 1) * d);
      auto n = rms_norm(head, l.ssm_norm.data(), d, eps);
      for (size_t j = 0; j < d; ++j) gated[h * d + j] = n[j] * silu(z[t][h * d + j]);
    }
    auto out = matvec(l.ssm_out, gated, embd);
    for (size_t i = 0; i < embd; ++i) x[t][i] += out[i];
  }
}

}  // namespace met::testing
