// The reference forward pass of gemma4 (see reference_forward.h).
#include <cmath>

#include "testing/reference_forward.h"

namespace met::testing {
namespace {

// Each of `heads` heads of v (hd wide) RMS-normed by w (null: no weight).
void norm_heads(std::vector<double>& v, size_t heads, size_t hd, const float* w, double eps) {
  const std::vector<float> ones(hd, 1.0f);
  for (size_t h = 0; h < heads; ++h) {
    std::vector<double> head(v.begin() + static_cast<ptrdiff_t>(h * hd),
                             v.begin() + static_cast<ptrdiff_t>((h + 1) * hd));
    const auto normed = rms_norm(head, w != nullptr ? w : ones.data(), hd, eps);
    std::copy(normed.begin(), normed.end(), v.begin() + static_cast<ptrdiff_t>(h * hd));
  }
}

}  // namespace

Rows ReferenceForward::per_layer_inputs(std::span<const TokenId> tokens, const Rows& x) const {
  const ModelHParams& hp = model_.hparams();
  const size_t pl = hp.embedding_length_per_layer, all = pl * hp.num_layers, embd = hp.embedding_length;
  Rows out(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<double> proj = matvec(per_layer_model_proj_, x[t], all);
    for (double& e : proj) e /= std::sqrt(static_cast<double>(embd));
    out[t].resize(all);
    for (size_t layer = 0; layer < hp.num_layers; ++layer) {
      std::vector<double> slice(proj.begin() + static_cast<ptrdiff_t>(layer * pl),
                                proj.begin() + static_cast<ptrdiff_t>((layer + 1) * pl));
      const auto normed = rms_norm(slice, per_layer_proj_norm_.data(), pl, hp.rms_norm_eps);
      for (size_t i = 0; i < pl; ++i) {
        const double token = per_layer_token_embd_[static_cast<size_t>(tokens[t]) * all + layer * pl + i];
        out[t][layer * pl + i] = (normed[i] + token * std::sqrt(static_cast<double>(pl))) / std::sqrt(2.0);
      }
    }
  }
  return out;
}

void ReferenceForward::gemma4_attention(const Layer& l, Rows& x, std::vector<Rows>& keys,
                                        std::vector<Rows>& values) const {
  const ModelHParams& hp = model_.hparams();
  const uint32_t il = l.index;
  const size_t hd = hp.layer_head_dim(il), nh = hp.num_heads, nkv = hp.layer_kv_heads(il), T = x.size();
  const bool swa = hp.layer_is_swa(il);
  const double base = swa ? hp.rope_freq_base_swa : hp.rope_freq_base;
  const float* factors = swa ? nullptr : model_.weights().rope_freqs;
  const double eps = hp.rms_norm_eps;
  Rows q(T);
  for (size_t t = 0; t < T; ++t) {
    const auto xn = pre_norm(x[t], l.attn_norm);
    q[t] = matvec(l.wq, xn, nh * hd);
    norm_heads(q[t], nh, hd, l.q_norm.data(), eps);
    rope(q[t], nh, hd, hp.layer_rope_dims(il), base, true, static_cast<int>(t), factors, 1.0);
    if (!hp.layer_has_kv(il)) continue;
    std::vector<double> k = matvec(l.wk, xn, nkv * hd);
    std::vector<double> v = l.wv.empty() ? k : matvec(l.wv, xn, nkv * hd);
    norm_heads(k, nkv, hd, l.k_norm.data(), eps);
    norm_heads(v, nkv, hd, nullptr, eps);
    rope(k, nkv, hd, hp.layer_rope_dims(il), base, true, static_cast<int>(t), factors, 1.0);
    keys[il].push_back(std::move(k));
    values[il].push_back(std::move(v));
  }
  const Rows& k = keys[hp.kv_source_layer(il)];
  const Rows& v = values[hp.kv_source_layer(il)];
  for (size_t t = 0; t < T; ++t) {
    const size_t first = l.window > 0 && t + 1 > l.window ? t + 1 - l.window : 0;
    std::vector<double> attn(nh * hd, 0.0);
    for (size_t h = 0; h < nh; ++h) {
      const size_t kvh = h / (nh / nkv);
      std::vector<double> scores(t + 1 - first);
      double mx = -1e300, sum = 0.0;
      for (size_t s = first; s <= t; ++s) {
        double dot = 0.0;
        for (size_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[s][kvh * hd + i];
        scores[s - first] = dot * static_cast<double>(hp.attention_scale);
        mx = std::max(mx, scores[s - first]);
      }
      for (double& sc : scores) sum += (sc = std::exp(sc - mx));
      for (size_t s = first; s <= t; ++s) {
        for (size_t i = 0; i < hd; ++i) attn[h * hd + i] += scores[s - first] / sum * v[s][kvh * hd + i];
      }
    }
    add_residual(x[t], matvec(l.wo, attn, hp.embedding_length), l.attn_post_norm);
  }
}

void ReferenceForward::per_layer_block(const Layer& l, const std::vector<double>& inputs,
                                       std::vector<double>& x) const {
  const ModelHParams& hp = model_.hparams();
  const size_t pl = hp.embedding_length_per_layer;
  if (pl > 0) {
    std::vector<double> g = matvec(l.pe_gate, x, pl);
    for (size_t i = 0; i < pl; ++i) g[i] = gelu_tanh(g[i]) * inputs[l.index * pl + i];
    add_residual(x, matvec(l.pe_proj, g, x.size()), l.pe_post_norm);
  }
  if (l.out_scale.empty()) return;
  for (double& e : x) e *= static_cast<double>(l.out_scale[0]);
}

Rows ReferenceForward::gemma4_trunk(std::span<const TokenId> tokens) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, T = tokens.size();
  Rows x(T, std::vector<double>(embd));
  for (size_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < embd; ++i) {
      x[t][i] = token_embd_[static_cast<size_t>(tokens[t]) * embd + i] * static_cast<double>(hp.embedding_scale);
    }
  }
  const Rows inputs = hp.embedding_length_per_layer > 0 ? per_layer_inputs(tokens, x) : Rows(T);
  std::vector<Rows> keys(hp.num_layers), values(hp.num_layers);
  double margin = 0.0;  // dense: unused
  for (const Layer& l : layers_) {
    gemma4_attention(l, x, keys, values);
    for (size_t t = 0; t < T; ++t) {
      add_residual(x[t], ffn(l, pre_norm(x[t], l.ffn_norm), margin), l.ffn_post_norm);
      per_layer_block(l, inputs[t], x[t]);
    }
  }
  return x;
}

}  // namespace met::testing
