// The reference forward pass.
#include "testing/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/check.h"
#include "tensor/quantize.h"

namespace met::testing {
namespace {

std::vector<float> load(const Model& m, const std::string& name) {
  const GgufTensorInfo* t = m.file().find_tensor(name);
  if (t == nullptr) return {};
  std::vector<float> out(t->num_elements);
  Status s = dequantize_row(t->type, m.file().tensor_data(*t), out);
  MET_CHECK(s.ok(), "{}", s.to_string());
  return out;
}

// y[n] = sum_k w[n][k] x[k], in double, for the matrix at w.
std::vector<double> matvec(const float* w, const std::vector<double>& x, size_t rows) {
  const size_t cols = x.size();
  std::vector<double> y(rows, 0.0);
  for (size_t n = 0; n < rows; ++n) {
    double acc = 0.0;
    for (size_t k = 0; k < cols; ++k) acc += static_cast<double>(w[n * cols + k]) * x[k];
    y[n] = acc;
  }
  return y;
}

std::vector<double> matvec(const std::vector<float>& w, const std::vector<double>& x, size_t rows) {
  return matvec(w.data(), x, rows);
}

// down · (silu(gate · x) * (up · x)) for the matrices at gate, up, down.
std::vector<double> swiglu_ffn(const float* gate, const float* up, const float* down, const std::vector<double>& x,
                               size_t ff) {
  auto g = matvec(gate, x, ff);
  auto u = matvec(up, x, ff);
  for (size_t i = 0; i < ff; ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
  return matvec(down, g, x.size());
}

std::vector<double> rms_norm(const std::vector<double>& x, const float* w, size_t n, double eps) {
  double ss = 0.0;
  for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] * scale * w[i];
  return out;
}

// Rotates each head's first rope_dims dims by pos * base^(-2i/rope_dims).
void rope(std::vector<double>& x, size_t num_heads, size_t head_dim, size_t rope_dims, double base,
          bool neox, int pos) {
  for (size_t h = 0; h < num_heads; ++h) {
    double* v = &x[h * head_dim];
    for (size_t i = 0; i < rope_dims / 2; ++i) {
      const double theta = pos * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dims));
      const size_t a = neox ? i : 2 * i;
      const size_t b = neox ? i + rope_dims / 2 : 2 * i + 1;
      const double x0 = v[a], x1 = v[b];
      v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
      v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
    }
  }
}

}  // namespace

ReferenceForward::ReferenceForward(const Model& m) : model_(m) {
  token_embd_ = load(m, "token_embd.weight");
  output_norm_ = load(m, "output_norm.weight");
  output_ = m.weights().tied_output ? token_embd_ : load(m, "output.weight");
  for (uint32_t i = 0; i < m.hparams().num_layers; ++i) {
    auto n = [i](const char* what) { return "blk." + std::to_string(i) + "." + what; };
    Layer& l = layers_.emplace_back();
    l.attn_norm = load(m, n("attn_norm.weight"));
    l.wq = load(m, n("attn_q.weight"));
    l.wk = load(m, n("attn_k.weight"));
    l.wv = load(m, n("attn_v.weight"));
    l.wo = load(m, n("attn_output.weight"));
    l.bq = load(m, n("attn_q.bias"));
    l.bk = load(m, n("attn_k.bias"));
    l.bv = load(m, n("attn_v.bias"));
    l.q_norm = load(m, n("attn_q_norm.weight"));
    l.k_norm = load(m, n("attn_k_norm.weight"));
    l.ffn_norm = load(m, n("ffn_norm.weight"));
    l.w_gate = load(m, n("ffn_gate.weight"));
    l.w_up = load(m, n("ffn_up.weight"));
    l.w_down = load(m, n("ffn_down.weight"));
    l.router = load(m, n("ffn_gate_inp.weight"));
    l.gate_exps = load(m, n("ffn_gate_exps.weight"));
    l.up_exps = load(m, n("ffn_up_exps.weight"));
    l.down_exps = load(m, n("ffn_down_exps.weight"));
    l.shexp_gate_inp = load(m, n("ffn_gate_inp_shexp.weight"));
    l.shexp_gate = load(m, n("ffn_gate_shexp.weight"));
    l.shexp_up = load(m, n("ffn_up_shexp.weight"));
    l.shexp_down = load(m, n("ffn_down_shexp.weight"));
  }
}

std::vector<double> ReferenceForward::ffn(const Layer& l, const std::vector<double>& xn, double& margin) const {
  if (!l.router.empty()) return moe_ffn(l, xn, margin);
  return swiglu_ffn(l.w_gate.data(), l.w_up.data(), l.w_down.data(), xn, model_.hparams().feed_forward_length);
}

std::vector<double> ReferenceForward::moe_ffn(const Layer& l, const std::vector<double>& xn,
                                              double& margin) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = xn.size(), ff = hp.expert_feed_forward_length, n = hp.expert_count;
  std::vector<double> p = matvec(l.router, xn, n);
  if (hp.expert_used_count < n) {
    std::vector<double> sorted = p;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    margin = std::min(margin, sorted[hp.expert_used_count - 1] - sorted[hp.expert_used_count]);
  }
  const double mx = *std::max_element(p.begin(), p.end());
  double sum = 0.0;
  for (double& v : p) sum += (v = std::exp(v - mx));
  for (double& v : p) v /= sum;
  std::vector<size_t> order(n);
  for (size_t e = 0; e < n; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&p](size_t a, size_t b) { return p[a] > p[b]; });
  order.resize(hp.expert_used_count);
  double wsum = 0.0;
  for (size_t e : order) wsum += p[e];
  const double scale = model_.traits().moe_norm_weights ? 1.0 / std::max(wsum, 6.103515625e-5) : 1.0;
  std::vector<double> out(embd, 0.0);
  for (size_t e : order) {
    auto d = swiglu_ffn(&l.gate_exps[e * ff * embd], &l.up_exps[e * ff * embd], &l.down_exps[e * embd * ff], xn, ff);
    for (size_t i = 0; i < embd; ++i) out[i] += p[e] * scale * d[i];
  }
  if (l.shexp_gate_inp.empty()) return out;
  const double g = matvec(l.shexp_gate_inp, xn, 1)[0];
  const double gate = 1.0 / (1.0 + std::exp(-g));
  auto sh = swiglu_ffn(l.shexp_gate.data(), l.shexp_up.data(), l.shexp_down.data(), xn,
                       hp.expert_shared_feed_forward_length);
  for (size_t i = 0; i < embd; ++i) out[i] += gate * sh[i];
  return out;
}

std::vector<std::vector<float>> ReferenceForward::logits(std::span<const TokenId> tokens,
                                                         std::vector<double>* routing_margins) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, hd = hp.head_dim, nh = hp.num_heads, nkv = hp.num_kv_heads;
  const size_t q_dim = nh * hd, kv_dim = nkv * hd, vocab = hp.vocab_size;
  const bool neox = model_.traits().rope_layout == cpu::RopeLayout::kNeox;
  const size_t T = tokens.size();
  std::vector<std::vector<double>> x(T, std::vector<double>(embd));
  for (size_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < embd; ++i) x[t][i] = token_embd_[static_cast<size_t>(tokens[t]) * embd + i];
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> margin(T, kInf);
  for (size_t li = 0; li < layers_.size(); ++li) {
    const Layer& l = layers_[li];
    std::vector<double> layer_margin(T, kInf);
    std::vector<std::vector<double>> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      auto xn = rms_norm(x[t], l.attn_norm.data(), embd, hp.rms_norm_eps);
      q[t] = matvec(l.wq, xn, q_dim);
      k[t] = matvec(l.wk, xn, kv_dim);
      v[t] = matvec(l.wv, xn, kv_dim);
      for (size_t i = 0; !l.bq.empty() && i < q_dim; ++i) q[t][i] += l.bq[i];
      for (size_t i = 0; !l.bk.empty() && i < kv_dim; ++i) k[t][i] += l.bk[i], v[t][i] += l.bv[i];
      if (!l.q_norm.empty()) {
        for (size_t h = 0; h < nh; ++h) {
          std::vector<double> head(q[t].begin() + h * hd, q[t].begin() + (h + 1) * hd);
          auto nrm = rms_norm(head, l.q_norm.data(), hd, hp.rms_norm_eps);
          std::copy(nrm.begin(), nrm.end(), q[t].begin() + h * hd);
        }
        for (size_t h = 0; h < nkv; ++h) {
          std::vector<double> head(k[t].begin() + h * hd, k[t].begin() + (h + 1) * hd);
          auto nrm = rms_norm(head, l.k_norm.data(), hd, hp.rms_norm_eps);
          std::copy(nrm.begin(), nrm.end(), k[t].begin() + h * hd);
        }
      }
      rope(q[t], nh, hd, hp.rope_dims, hp.rope_freq_base, neox, static_cast<int>(t));
      rope(k[t], nkv, hd, hp.rope_dims, hp.rope_freq_base, neox, static_cast<int>(t));
    }
    for (size_t t = 0; t < T; ++t) {
      std::vector<double> attn(q_dim, 0.0);
      for (size_t h = 0; h < nh; ++h) {
        const size_t kvh = h / (nh / nkv);
        std::vector<double> scores(t + 1);
        double mx = -1e300;
        for (size_t s = 0; s <= t; ++s) {
          double dot = 0.0;
          for (size_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[s][kvh * hd + i];
          scores[s] = dot / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, scores[s]);
        }
        double sum = 0.0;
        for (double& sc : scores) sum += (sc = std::exp(sc - mx));
        for (size_t s = 0; s <= t; ++s) {
          for (size_t i = 0; i < hd; ++i) attn[h * hd + i] += scores[s] / sum * v[s][kvh * hd + i];
        }
      }
      auto o = matvec(l.wo, attn, embd);
      for (size_t i = 0; i < embd; ++i) x[t][i] += o[i];
      auto xn = rms_norm(x[t], l.ffn_norm.data(), embd, hp.rms_norm_eps);
      auto d = ffn(l, xn, layer_margin[t]);
      for (size_t i = 0; i < embd; ++i) x[t][i] += d[i];
    }
    for (size_t t = 0; t < T; ++t) margin[t] = std::min(margin[t], layer_margin[t]);
  }
  if (routing_margins != nullptr) *routing_margins = margin;
  std::vector<std::vector<float>> out(T);
  for (size_t t = 0; t < T; ++t) {
    auto xn = rms_norm(x[t], output_norm_.data(), embd, hp.rms_norm_eps);
    auto lg = matvec(output_, xn, vocab);
    out[t].assign(lg.begin(), lg.end());
  }
  return out;
}

}  // namespace met::testing
