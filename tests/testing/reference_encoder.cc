// The reference encoder forward.
#include "testing/reference_encoder.h"

#include <cmath>

#include <fmt/format.h>

#include "core/check.h"
#include "tensor/quantize.h"

namespace met::testing {
namespace {

void add_to(std::vector<double>& y, const std::vector<float>& b) {
  for (size_t i = 0; i < b.size(); ++i) y[i] += b[i];
}

// NeoX rotation of each head: pair (i, i + d/2) by pos * base^(-2i/d).
void rotate_halves(std::vector<double>& v, size_t heads, size_t d, double base, size_t pos) {
  for (size_t h = 0; h < heads; ++h) {
    for (size_t i = 0; i < d / 2; ++i) {
      const double theta = static_cast<double>(pos) * std::pow(base, -2.0 * static_cast<double>(i) / d);
      double& a = v[h * d + i];
      double& b = v[h * d + i + d / 2];
      const double x0 = a, x1 = b;
      a = x0 * std::cos(theta) - x1 * std::sin(theta);
      b = x0 * std::sin(theta) + x1 * std::cos(theta);
    }
  }
}

}  // namespace

std::vector<float> ReferenceEncoder::tensor(const std::string& name) const {
  const GgufTensorInfo* t = model_.file().find_tensor(name);
  if (t == nullptr) return {};
  std::vector<float> out(t->num_elements);
  const Status s = dequantize_row(t->type, model_.file().tensor_data(*t), out);
  MET_CHECK(s.ok(), "{}", s.to_string());
  return out;
}

ReferenceEncoder::ReferenceEncoder(const Model& model) : model_(model) {
  const ModelHParams& hp = model.hparams();
  const size_t embd = hp.embedding_length;
  token_embd_ = tensor("token_embd.weight");
  token_types_ = tensor("token_types.weight");
  position_ = tensor("position_embd.weight");
  norm_ = tensor("token_embd_norm.weight");
  norm_b_ = tensor("token_embd_norm.bias");
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    auto name = [i](const char* what) { return fmt::format("blk.{}.{}", i, what); };
    Layer l;
    const std::vector<float> qkv = tensor(name("attn_qkv.weight"));
    if (!qkv.empty()) {
      const auto third = static_cast<ptrdiff_t>(embd * embd);
      l.wq.assign(qkv.begin(), qkv.begin() + third);
      l.wk.assign(qkv.begin() + third, qkv.begin() + 2 * third);
      l.wv.assign(qkv.begin() + 2 * third, qkv.end());
    } else {
      l.wq = tensor(name("attn_q.weight")), l.wk = tensor(name("attn_k.weight")), l.wv = tensor(name("attn_v.weight"));
      l.bq = tensor(name("attn_q.bias")), l.bk = tensor(name("attn_k.bias")), l.bv = tensor(name("attn_v.bias"));
    }
    l.wo = tensor(name("attn_output.weight")), l.bo = tensor(name("attn_output.bias"));
    l.attn_norm = tensor(name("attn_output_norm.weight")), l.attn_norm_b = tensor(name("attn_output_norm.bias"));
    l.up = tensor(name("ffn_up.weight")), l.up_b = tensor(name("ffn_up.bias"));
    l.gate = tensor(name("ffn_gate.weight"));
    l.down = tensor(name("ffn_down.weight")), l.down_b = tensor(name("ffn_down.bias"));
    l.out_norm = tensor(name("layer_output_norm.weight")), l.out_norm_b = tensor(name("layer_output_norm.bias"));
    layers_.push_back(std::move(l));
  }
}

std::vector<double> ReferenceEncoder::layer_norm(const std::vector<double>& x, const std::vector<float>& w,
                                                 const std::vector<float>& b) const {
  double mean = 0.0, var = 0.0;
  for (double v : x) mean += v / static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean) / static_cast<double>(x.size());
  std::vector<double> out(x.size());
  const double inv = 1.0 / std::sqrt(var + model_.hparams().layer_norm_eps);
  for (size_t i = 0; i < x.size(); ++i) out[i] = (x[i] - mean) * inv * w[i] + b[i];
  return out;
}

Rows ReferenceEncoder::attention(const Layer& l, const Rows& x) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, hd = hp.head_dim, nh = hp.num_heads, T = x.size();
  Rows q(T), k(T), v(T), out(T);
  for (size_t t = 0; t < T; ++t) {
    q[t] = matvec(l.wq, x[t], embd), k[t] = matvec(l.wk, x[t], embd), v[t] = matvec(l.wv, x[t], embd);
    add_to(q[t], l.bq), add_to(k[t], l.bk), add_to(v[t], l.bv);
    if (model_.arch() == Arch::kNomicBert) {
      rotate_halves(q[t], nh, hd, hp.rope_freq_base, t);
      rotate_halves(k[t], nh, hd, hp.rope_freq_base, t);
    }
  }
  for (size_t t = 0; t < T; ++t) {
    std::vector<double> attn(embd, 0.0);
    for (size_t h = 0; h < nh; ++h) {
      std::vector<double> s(T);
      double mx = -INFINITY, sum = 0.0;
      for (size_t u = 0; u < T; ++u) {
        s[u] = 0.0;
        for (size_t d = 0; d < hd; ++d) s[u] += q[t][h * hd + d] * k[u][h * hd + d];
        s[u] /= std::sqrt(static_cast<double>(hd));
        mx = std::max(mx, s[u]);
      }
      for (size_t u = 0; u < T; ++u) sum += (s[u] = std::exp(s[u] - mx));
      for (size_t u = 0; u < T; ++u) {
        for (size_t d = 0; d < hd; ++d) attn[h * hd + d] += s[u] / sum * v[u][h * hd + d];
      }
    }
    out[t] = matvec(l.wo, attn, embd);
    add_to(out[t], l.bo);
  }
  return out;
}

std::vector<double> ReferenceEncoder::ffn(const Layer& l, const std::vector<double>& x) const {
  const size_t embd = model_.hparams().embedding_length, ff = model_.hparams().feed_forward_length;
  std::vector<double> u = matvec(l.up, x, ff);
  add_to(u, l.up_b);
  if (!l.gate.empty()) {
    const std::vector<double> g = matvec(l.gate, x, ff);
    for (size_t i = 0; i < ff; ++i) u[i] *= silu(g[i]);
  } else {
    for (double& e : u) e = 0.5 * e * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (e + 0.044715 * e * e * e)));
  }
  std::vector<double> d = matvec(l.down, u, embd);
  add_to(d, l.down_b);
  return d;
}

Rows ReferenceEncoder::hidden(std::span<const TokenId> tokens) const {
  const size_t embd = model_.hparams().embedding_length, T = tokens.size();
  Rows x(T);
  for (size_t t = 0; t < T; ++t) {
    x[t].assign(embd, 0.0);
    for (size_t i = 0; i < embd; ++i) {
      x[t][i] = token_embd_[static_cast<size_t>(tokens[t]) * embd + i];
      if (!token_types_.empty()) x[t][i] += token_types_[i];
      if (!position_.empty()) x[t][i] += position_[t * embd + i];
    }
    x[t] = layer_norm(x[t], norm_, norm_b_);
  }
  for (const Layer& l : layers_) {
    const Rows a = attention(l, x);
    for (size_t t = 0; t < T; ++t) {
      for (size_t i = 0; i < embd; ++i) x[t][i] += a[t][i];
      x[t] = layer_norm(x[t], l.attn_norm, l.attn_norm_b);
      std::vector<double> f = ffn(l, x[t]);
      for (size_t i = 0; i < embd; ++i) f[i] += x[t][i];
      x[t] = layer_norm(f, l.out_norm, l.out_norm_b);
    }
  }
  return x;
}

}  // namespace met::testing
