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

void add_bias(std::vector<double>& y, const float* b) {
  if (b == nullptr) return;
  for (size_t i = 0; i < y.size(); ++i) y[i] += b[i];
}

// Biases of one expert (null: none).
struct FfnBias {
  const float* gate = nullptr;
  const float* up = nullptr;
  const float* down = nullptr;
};

// down · act(gate · x, up · x) for the matrices at gate, up, down; act is
// silu(g) * u, or with `oai` gpt-oss's clamped g * sigmoid(1.702 g) * (u + 1).
std::vector<double> swiglu_ffn(const float* gate, const float* up, const float* down, const std::vector<double>& x,
                               size_t ff, bool oai = false, FfnBias bias = {}) {
  auto g = matvec(gate, x, ff);
  auto u = matvec(up, x, ff);
  add_bias(g, bias.gate);
  add_bias(u, bias.up);
  for (size_t i = 0; i < ff; ++i) {
    if (oai) {
      const double gc = std::min(g[i], 7.0), uc = std::clamp(u[i], -7.0, 7.0);
      g[i] = gc / (1.0 + std::exp(-1.702 * gc)) * (uc + 1.0);
    } else {
      g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
    }
  }
  auto d = matvec(down, g, x.size());
  add_bias(d, bias.down);
  return d;
}

// Gated attention's wq rows hold, per head, its query then its gate: keeps
// the queries in q and moves the gates to gate.
void split_query_gate(std::vector<double>& q, std::vector<double>& gate, size_t num_heads, size_t head_dim) {
  std::vector<double> query(num_heads * head_dim);
  gate.assign(num_heads * head_dim, 0.0);
  for (size_t h = 0; h < num_heads; ++h) {
    for (size_t i = 0; i < head_dim; ++i) {
      query[h * head_dim + i] = q[2 * h * head_dim + i];
      gate[h * head_dim + i] = q[(2 * h + 1) * head_dim + i];
    }
  }
  q = std::move(query);
}

}  // namespace

// phi3's fused matrices: attn_qkv's rows are Q's, K's, then V's; ffn_up's
// the gate's, then up's.
void ReferenceForward::split_fused(Layer& l) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  const auto rows = [&](const std::vector<float>& m, size_t first, size_t n) {
    return std::vector<float>(m.begin() + static_cast<ptrdiff_t>(first * embd),
                              m.begin() + static_cast<ptrdiff_t>((first + n) * embd));
  };
  if (!l.recurrent && l.wq.empty() && !l.wqkv.empty()) {
    l.wq = rows(l.wqkv, 0, hp.q_dim());
    l.wk = rows(l.wqkv, hp.q_dim(), hp.kv_dim());
    l.wv = rows(l.wqkv, hp.q_dim() + hp.kv_dim(), hp.kv_dim());
  }
  if (l.w_gate.empty() && l.w_up.size() == 2 * ff * embd) {
    l.w_gate = rows(l.w_up, 0, ff);
    l.w_up = rows(l.w_up, ff, ff);
  }
}

ReferenceForward::ReferenceForward(const Model& m) : model_(m) {
  token_embd_ = load(m, "token_embd.weight");
  output_norm_ = load(m, "output_norm.weight");
  output_ = m.weights().tied_output ? token_embd_ : load(m, "output.weight");
  per_layer_token_embd_ = load(m, "per_layer_token_embd.weight");
  per_layer_model_proj_ = load(m, "per_layer_model_proj.weight");
  per_layer_proj_norm_ = load(m, "per_layer_proj_norm.weight");
  const ModelHParams& hp = m.hparams();
  for (uint32_t i = 0; i < hp.num_layers; ++i) layers_.push_back(load_layer(i));
  if (hp.nextn_predict_layers == 0) return;
  const std::string mtp = "blk." + std::to_string(hp.num_layers) + ".";
  mtp_.block = load_layer(hp.num_layers);
  mtp_.eh_proj = load(m, mtp + "nextn.eh_proj.weight");
  mtp_.enorm = load(m, mtp + "nextn.enorm.weight");
  mtp_.hnorm = load(m, mtp + "nextn.hnorm.weight");
  mtp_.shared_head_norm = load(m, mtp + "nextn.shared_head_norm.weight");
  if (mtp_.shared_head_norm.empty()) mtp_.shared_head_norm = output_norm_;
  mtp_.embed = load(m, mtp + "nextn.embed_tokens.weight");
  if (mtp_.embed.empty()) mtp_.embed = token_embd_;
  mtp_.head = load(m, mtp + "nextn.shared_head_head.weight");
  if (mtp_.head.empty()) mtp_.head = output_;
}

ReferenceForward::Layer ReferenceForward::load_layer(uint32_t i) const {
  const Model& m = model_;
  auto n = [i](const char* what) { return "blk." + std::to_string(i) + "." + what; };
  Layer l;
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
  if (m.traits().post_norms) {
    l.attn_post_norm = load(m, n("post_attention_norm.weight"));
    l.ffn_post_norm = load(m, n("post_ffw_norm.weight"));
  } else if (l.ffn_norm.empty()) {
    l.ffn_norm = load(m, n("post_attention_norm.weight"));  // gpt-oss, qwen35
  }
  l.rope = m.hparams().layer_uses_rope(i);
  l.bo = load(m, n("attn_output.bias"));
  l.sinks = load(m, n("attn_sinks.weight"));
  l.router_b = load(m, n("ffn_gate_inp.bias"));
  l.gate_exps_b = load(m, n("ffn_gate_exps.bias"));
  l.up_exps_b = load(m, n("ffn_up_exps.bias"));
  l.down_exps_b = load(m, n("ffn_down_exps.bias"));
  l.window = m.hparams().layer_window(i);
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
  l.recurrent = m.hparams().layer_is_recurrent(i);
  l.wqkv = load(m, n("attn_qkv.weight"));
  l.wgate = load(m, n("attn_gate.weight"));
  l.ssm_conv = load(m, n("ssm_conv1d.weight"));
  l.ssm_dt = load(m, n("ssm_dt.bias"));
  l.ssm_a = load(m, n("ssm_a"));
  l.ssm_beta = load(m, n("ssm_beta.weight"));
  l.ssm_alpha = load(m, n("ssm_alpha.weight"));
  l.ssm_ba = load(m, n("ssm_ba.weight"));
  l.ssm_norm = load(m, n("ssm_norm.weight"));
  l.ssm_out = load(m, n("ssm_out.weight"));
  l.mamba2 = l.recurrent && m.hparams().ssm_kind == SsmKind::kMamba2;
  l.ffn_only = m.hparams().layer_is_ffn_only(i);
  if (l.ffn_only) l.ffn_norm = l.attn_norm;  // nemotron_h: the FFN reads attn_norm
  l.ssm_in = load(m, n("ssm_in.weight"));
  l.ssm_conv_b = load(m, n("ssm_conv1d.bias"));
  l.ssm_d = load(m, n("ssm_d"));
  l.index = i;
  l.out_scale = load(m, n("layer_output_scale.weight"));
  l.pe_gate = load(m, n("inp_gate.weight"));
  l.pe_proj = load(m, n("proj.weight"));
  l.pe_post_norm = load(m, n("post_norm.weight"));
  split_fused(l);
  return l;
}

void ReferenceForward::add_residual(std::vector<double>& x, const std::vector<double>& out,
                                    const std::vector<float>& post_norm) const {
  const ModelHParams& hp = model_.hparams();
  const std::vector<double> normed = post_norm.empty() ? out : rms_norm(out, post_norm.data(), out.size(),
                                                                           hp.rms_norm_eps);
  const float scale = hp.residual_scale;
  for (size_t i = 0; i < x.size(); ++i) x[i] += scale != 0.0f ? static_cast<double>(scale) * normed[i] : normed[i];
}

std::vector<double> ReferenceForward::pre_norm(const std::vector<double>& x, const std::vector<float>& norm) const {
  if (norm.empty()) return x;
  return rms_norm(x, norm.data(), x.size(), model_.hparams().rms_norm_eps);
}

std::vector<double> ReferenceForward::ffn(const Layer& l, const std::vector<double>& xn, double& margin) const {
  if (!l.router.empty()) return moe_ffn(l, xn, margin);
  if (l.w_gate.empty()) {  // nemotron_h: down · relu(up · x)²
    const size_t ff = model_.hparams().feed_forward_length;
    auto u = matvec(l.w_up, xn, ff);
    for (double& e : u) e = e > 0.0 ? e * e : 0.0;
    return matvec(l.w_down, u, xn.size());
  }
  const size_t ff = model_.traits().layer_shapes ? l.w_up.size() / xn.size() : model_.hparams().feed_forward_length;
  if (model_.traits().ffn_geglu) {  // gemma3: gelu(gate) * up, tanh approximation
    auto g = matvec(l.w_gate, xn, ff);
    const auto u = matvec(l.w_up, xn, ff);
    const double c = std::sqrt(2.0 / 3.14159265358979323846);
    for (size_t i = 0; i < ff; ++i) {
      g[i] = 0.5 * g[i] * (1.0 + std::tanh(c * (g[i] + 0.044715 * g[i] * g[i] * g[i]))) * u[i];
    }
    return matvec(l.w_down, g, xn.size());
  }
  return swiglu_ffn(l.w_gate.data(), l.w_up.data(), l.w_down.data(), xn, ff);
}

std::vector<std::pair<size_t, double>> ReferenceForward::route(const Layer& l, const std::vector<double>& xn,
                                                                double& margin) const {
  const ModelHParams& hp = model_.hparams();
  const size_t n = hp.expert_count, k = hp.expert_used_count;
  std::vector<double> p = matvec(l.router, xn, n);
  add_bias(p, l.router_b.empty() ? nullptr : l.router_b.data());
  if (k < n) {
    std::vector<double> sorted = p;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    margin = std::min(margin, sorted[k - 1] - sorted[k]);
  }
  auto softmax = [](std::vector<double>& v) {
    const double mx = *std::max_element(v.begin(), v.end());
    double sum = 0.0;
    for (double& e : v) sum += (e = std::exp(e - mx));
    for (double& e : v) e /= sum;
  };
  const bool top_k_first = model_.traits().gpt_oss;
  if (!top_k_first) softmax(p);
  std::vector<size_t> order(n);
  for (size_t e = 0; e < n; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&p](size_t a, size_t b) { return p[a] > p[b]; });
  order.resize(k);
  std::vector<double> w(k);
  for (size_t j = 0; j < k; ++j) w[j] = p[order[j]];
  if (top_k_first) {
    softmax(w);
  } else if (model_.traits().moe_norm_weights) {
    double wsum = 0.0;
    for (double v : w) wsum += v;
    for (double& v : w) v /= std::max(wsum, 6.103515625e-5);
  }
  std::vector<std::pair<size_t, double>> out;
  for (size_t j = 0; j < k; ++j) out.emplace_back(order[j], w[j]);
  return out;
}

std::vector<double> ReferenceForward::moe_ffn(const Layer& l, const std::vector<double>& xn,
                                              double& margin) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = xn.size(), ff = hp.expert_feed_forward_length;
  const bool oai = model_.traits().gpt_oss;
  std::vector<double> out(embd, 0.0);
  for (auto [e, weight] : route(l, xn, margin)) {
    FfnBias b;
    if (!l.gate_exps_b.empty()) b = {&l.gate_exps_b[e * ff], &l.up_exps_b[e * ff], &l.down_exps_b[e * embd]};
    auto d = swiglu_ffn(&l.gate_exps[e * ff * embd], &l.up_exps[e * ff * embd], &l.down_exps[e * embd * ff], xn,
                        ff, oai, b);
    for (size_t i = 0; i < embd; ++i) out[i] += weight * d[i];
  }
  if (l.shexp_up.empty()) return out;
  // granitehybrid's shared expert has no gate: its output is added whole.
  const double gate =
      l.shexp_gate_inp.empty() ? 1.0 : 1.0 / (1.0 + std::exp(-matvec(l.shexp_gate_inp, xn, 1)[0]));
  auto sh = swiglu_ffn(l.shexp_gate.data(), l.shexp_up.data(), l.shexp_down.data(), xn,
                       hp.expert_shared_feed_forward_length);
  for (size_t i = 0; i < embd; ++i) out[i] += gate * sh[i];
  return out;
}

void ReferenceForward::attention(const Layer& l, Rows& x) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, hd = hp.head_dim, nh = hp.num_heads, nkv = hp.num_kv_heads;
  const size_t q_dim = nh * hd, kv_dim = nkv * hd, T = x.size();
  const bool neox = model_.traits().rope_layout == cpu::RopeLayout::kNeox;
  const double score_scale = hp.attention_scale != 0.0f ? static_cast<double>(hp.attention_scale)
                                                         : 1.0 / std::sqrt(static_cast<double>(hd));
  const double base = l.window > 0 ? hp.rope_freq_base_swa : hp.rope_freq_base;
  auto head_norm = [&](std::vector<double>& v, size_t heads, const std::vector<float>& w) {
    if (w.size() == v.size()) {  // olmo2: one norm over all heads
      v = rms_norm(v, w.data(), v.size(), hp.rms_norm_eps);
      return;
    }
    for (size_t h = 0; h < heads; ++h) {
      std::vector<double> head(v.begin() + h * hd, v.begin() + (h + 1) * hd);
      auto nrm = rms_norm(head, w.data(), hd, hp.rms_norm_eps);
      std::copy(nrm.begin(), nrm.end(), v.begin() + h * hd);
    }
  };
  auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };
  const bool gated = model_.traits().gated_attention;
  Rows q(T), k(T), v(T), gate(T);
  for (size_t t = 0; t < T; ++t) {
    auto xn = pre_norm(x[t], l.attn_norm);
    q[t] = matvec(l.wq, xn, gated ? 2 * q_dim : q_dim);
    if (gated) split_query_gate(q[t], gate[t], nh, hd);
    k[t] = matvec(l.wk, xn, kv_dim);
    v[t] = matvec(l.wv, xn, kv_dim);
    add_bias(q[t], bias(l.bq));
    add_bias(k[t], bias(l.bk));
    add_bias(v[t], bias(l.bv));
    if (!l.q_norm.empty()) {
      head_norm(q[t], nh, l.q_norm);
      head_norm(k[t], nkv, l.k_norm);
    }
    if (l.rope) {
      const float* factors = model_.weights().rope_freqs;
      const double mscale = hp.rope_scaling.attn_factor;
      rope(q[t], nh, hd, hp.rope_dims, base, neox, static_cast<int>(t), factors, mscale);
      rope(k[t], nkv, hd, hp.rope_dims, base, neox, static_cast<int>(t), factors, mscale);
    }
  }
  Rows out(T);
  for (size_t t = 0; t < T; ++t) {
    const size_t first = l.window > 0 && t + 1 > l.window ? t + 1 - l.window : 0;  // t - s < window
    std::vector<double> attn(q_dim, 0.0);
    for (size_t h = 0; h < nh; ++h) {
      const size_t kvh = h / (nh / nkv);
      std::vector<double> scores(t + 1 - first);
      double mx = l.sinks.empty() ? -1e300 : static_cast<double>(l.sinks[h]);
      for (size_t s = first; s <= t; ++s) {
        double dot = 0.0;
        for (size_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[s][kvh * hd + i];
        scores[s - first] = dot * score_scale;
        if (hp.attn_logit_softcap > 0.0f) {
          const double cap = hp.attn_logit_softcap;
          scores[s - first] = cap * std::tanh(scores[s - first] / cap);
        }
        mx = std::max(mx, scores[s - first]);
      }
      double sum = l.sinks.empty() ? 0.0 : std::exp(static_cast<double>(l.sinks[h]) - mx);
      for (double& sc : scores) sum += (sc = std::exp(sc - mx));
      for (size_t s = first; s <= t; ++s) {
        for (size_t i = 0; i < hd; ++i) attn[h * hd + i] += scores[s - first] / sum * v[s][kvh * hd + i];
      }
    }
    if (gated) {
      for (size_t i = 0; i < q_dim; ++i) attn[i] *= sigmoid(gate[t][i]);
    }
    out[t] = matvec(l.wo, attn, embd);
    add_bias(out[t], bias(l.bo));
  }
  for (size_t t = 0; t < T; ++t) add_residual(x[t], out[t], l.attn_post_norm);
}

Rows ReferenceForward::trunk(std::span<const TokenId> tokens, std::vector<double>* routing_margins) const {
  if (model_.traits().layer_shapes) return gemma4_trunk(tokens);
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, T = tokens.size();
  Rows x(T, std::vector<double>(embd));
  for (size_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < embd; ++i) x[t][i] = token_embd_[static_cast<size_t>(tokens[t]) * embd + i];
    if (hp.embedding_scale == 0.0f) continue;
    for (double& e : x[t]) e *= static_cast<double>(hp.embedding_scale);
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> margin(T, kInf);
  for (const Layer& l : layers_) run_layer(l, x, margin);
  if (routing_margins != nullptr) *routing_margins = margin;
  return x;
}

void ReferenceForward::run_layer(const Layer& l, Rows& x, std::vector<double>& margin) const {
  if (l.mamba2) {
    mamba2(l, x);
  } else if (l.recurrent) {
    gated_delta(l, x);
  } else if (!l.ffn_only) {
    attention(l, x);
  }
  if (l.w_down.empty() && l.router.empty()) return;  // nemotron_h: a mixer alone
  for (size_t t = 0; t < x.size(); ++t) {
    add_residual(x[t], ffn(l, pre_norm(x[t], l.ffn_norm), margin[t]), l.ffn_post_norm);
  }
}

std::vector<std::vector<float>> ReferenceForward::logits(std::span<const TokenId> tokens,
                                                         std::vector<double>* routing_margins) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, vocab = hp.vocab_size, T = tokens.size();
  const Rows x = trunk(tokens, routing_margins);
  std::vector<std::vector<float>> out(T);
  for (size_t t = 0; t < T; ++t) {
    auto xn = rms_norm(x[t], output_norm_.data(), embd, hp.rms_norm_eps);
    auto lg = matvec(output_, xn, vocab);
    if (hp.logit_scale != 0.0f) {
      for (double& e : lg) e /= static_cast<double>(hp.logit_scale);
    }
    if (hp.final_logit_softcap != 0.0f) {
      const double cap = hp.final_logit_softcap;
      for (double& e : lg) e = cap * std::tanh(e / cap);
    }
    out[t].assign(lg.begin(), lg.end());
  }
  return out;
}

Rows ReferenceForward::hidden(std::span<const TokenId> tokens) const {
  const ModelHParams& hp = model_.hparams();
  Rows x = trunk(tokens, nullptr);
  for (auto& row : x) row = rms_norm(row, output_norm_.data(), hp.embedding_length, hp.rms_norm_eps);
  return x;
}

std::vector<double> pool_rows(const Rows& rows, Pooling p) {
  switch (p) {
    case Pooling::kCls: return rows.front();
    case Pooling::kLast: return rows.back();
    case Pooling::kMean:
    case Pooling::kNone: break;
  }
  std::vector<double> mean(rows.front().size(), 0.0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < mean.size(); ++i) mean[i] += r[i] / static_cast<double>(rows.size());
  }
  return mean;
}

namespace {

// eh_proj · [enorm(embedding of `token`); hnorm(h)].
std::vector<double> mtp_input(const ModelHParams& hp, const std::vector<float>& embed, const std::vector<float>& enorm,
                              const std::vector<float>& hnorm, const std::vector<float>& eh_proj, TokenId token,
                              const std::vector<double>& h) {
  const size_t embd = hp.embedding_length;
  std::vector<double> e(embed.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(token) * embd),
                        embed.begin() + static_cast<ptrdiff_t>((static_cast<size_t>(token) + 1) * embd));
  std::vector<double> in = rms_norm(e, enorm.data(), embd, hp.rms_norm_eps);
  const auto hn = rms_norm(h, hnorm.data(), embd, hp.rms_norm_eps);
  in.insert(in.end(), hn.begin(), hn.end());
  return matvec(eh_proj, in, embd);
}

}  // namespace

Rows ReferenceForward::mtp_inputs(std::span<const TokenId> tokens,
                                    std::span<const TokenId> next) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length;
  const Rows h = trunk(tokens, nullptr);
  Rows x(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto hn = rms_norm(h[t], output_norm_.data(), embd, hp.rms_norm_eps);
    x[t] = mtp_input(hp, mtp_.embed, mtp_.enorm, mtp_.hnorm, mtp_.eh_proj, next[t], hn);
  }
  return x;
}

std::vector<float> ReferenceForward::mtp_head(const std::vector<double>& x) const {
  const ModelHParams& hp = model_.hparams();
  const auto lg = matvec(mtp_.head, rms_norm(x, mtp_.shared_head_norm.data(), hp.embedding_length, hp.rms_norm_eps),
                         hp.vocab_size);
  return std::vector<float>(lg.begin(), lg.end());
}

std::vector<std::vector<float>> ReferenceForward::mtp_logits(std::span<const TokenId> tokens,
                                                             std::span<const TokenId> next) const {
  Rows x = mtp_inputs(tokens, next);
  std::vector<double> margin(x.size());
  run_layer(mtp_.block, x, margin);
  std::vector<std::vector<float>> out;
  for (const std::vector<double>& row : x) out.push_back(mtp_head(row));
  return out;
}

std::vector<std::vector<float>> ReferenceForward::mtp_chain_logits(std::span<const TokenId> tokens,
                                                                   std::span<const TokenId> next,
                                                                   std::span<const TokenId> fed) const {
  const ModelHParams& hp = model_.hparams();
  Rows in = mtp_inputs(tokens, next);
  std::vector<std::vector<float>> out;
  for (const TokenId token : fed) {
    Rows x = in;  // the layer over every row so far (its earlier rows do not depend on later ones)
    std::vector<double> margin(x.size());
    run_layer(mtp_.block, x, margin);
    const auto h = rms_norm(x.back(), mtp_.shared_head_norm.data(), hp.embedding_length, hp.rms_norm_eps);
    in.push_back(mtp_input(hp, mtp_.embed, mtp_.enorm, mtp_.hnorm, mtp_.eh_proj, token, h));
    x = in;
    margin.assign(x.size(), 0.0);
    run_layer(mtp_.block, x, margin);
    out.push_back(mtp_head(x.back()));
  }
  return out;
}

}  // namespace met::testing
