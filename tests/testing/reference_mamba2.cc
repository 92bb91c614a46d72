// The reference Mamba2 scan, and ReferenceForward's Mamba2 layers.
#include "testing/reference_mamba2.h"

#include <cmath>

#include "core/check.h"
#include "testing/reference_forward.h"
#include "testing/reference_recurrent.h"

namespace met::testing {

Rows ssm_scan(const SsmScanShape& shape, const Rows& x, const Rows& b, const Rows& c, const Rows& dt,
              std::span<const float> dt_bias, std::span<const float> a, std::span<const float> d,
              std::vector<double>& state) {
  const size_t heads = shape.num_heads, hd = shape.head_dim, ds = shape.d_state;
  MET_CHECK(state.size() == heads * hd * ds, "scan state of {} floats for {} heads of {} x {}", state.size(), heads,
            hd, ds);
  Rows y(x.size(), std::vector<double>(heads * hd, 0.0));
  for (size_t t = 0; t < x.size(); ++t) {
    for (size_t h = 0; h < heads; ++h) {
      const size_t g = h / (heads / shape.num_groups);
      const double step = softplus(dt[t][h] + dt_bias[h]);
      const double decay = std::exp(step * a[h]);
      for (size_t p = 0; p < hd; ++p) {
        const double xp = x[t][h * hd + p];
        double* s = &state[(h * hd + p) * ds];
        double acc = 0.0;
        for (size_t n = 0; n < ds; ++n) {
          s[n] = decay * s[n] + step * xp * b[t][g * ds + n];
          acc += s[n] * c[t][g * ds + n];
        }
        y[t][h * hd + p] = acc + d[h] * xp;
      }
    }
  }
  return y;
}

void ReferenceForward::mamba2(const Layer& l, Rows& x) const {
  const ModelHParams& hp = model_.hparams();
  const size_t embd = hp.embedding_length, T = x.size(), inner = hp.ssm_inner_size, conv = hp.conv_dim();
  const size_t heads = hp.ssm_time_step_rank, groups = hp.ssm_group_count, ds = hp.ssm_state_size;
  const size_t d_conv = hp.ssm_conv_kernel, group = inner / groups;
  const double eps = hp.rms_norm_eps;
  Rows z(T), xbc(T), dt(T);
  for (size_t t = 0; t < T; ++t) {
    auto proj = matvec(l.ssm_in, rms_norm(x[t], l.attn_norm.data(), embd, eps), hp.mamba_in_proj_dim());
    z[t].assign(proj.begin(), proj.begin() + static_cast<ptrdiff_t>(inner));
    xbc[t].assign(proj.begin() + static_cast<ptrdiff_t>(inner), proj.begin() + static_cast<ptrdiff_t>(inner + conv));
    dt[t].assign(proj.begin() + static_cast<ptrdiff_t>(inner + conv), proj.end());
  }
  std::vector<double> conv_state(conv * (d_conv - 1), 0.0);
  Rows mixed = short_conv(l.ssm_conv, d_conv, xbc, conv_state);
  Rows xs(T), bs(T), cs(T);
  for (size_t t = 0; t < T; ++t) {
    for (size_t ch = 0; ch < conv; ++ch) {
      mixed[t][ch] = silu(mixed[t][ch] + (l.ssm_conv_b.empty() ? 0.0 : l.ssm_conv_b[ch]));
    }
    xs[t].assign(mixed[t].begin(), mixed[t].begin() + static_cast<ptrdiff_t>(inner));
    bs[t].assign(mixed[t].begin() + static_cast<ptrdiff_t>(inner),
                 mixed[t].begin() + static_cast<ptrdiff_t>(inner + groups * ds));
    cs[t].assign(mixed[t].begin() + static_cast<ptrdiff_t>(inner + groups * ds), mixed[t].end());
  }
  std::vector<double> state(inner * ds, 0.0);
  const Rows y = ssm_scan({heads, inner / heads, groups, ds}, xs, bs, cs, dt, l.ssm_dt, l.ssm_a, l.ssm_d, state);
  for (size_t t = 0; t < T; ++t) {
    std::vector<double> gated(inner);
    for (size_t i = 0; i < inner; ++i) gated[i] = y[t][i] * silu(z[t][i]);
    std::vector<double> normed(inner);
    for (size_t g = 0; g < groups; ++g) {
      std::vector<double> part(gated.begin() + static_cast<ptrdiff_t>(g * group),
                               gated.begin() + static_cast<ptrdiff_t>((g + 1) * group));
      auto n = rms_norm(part, l.ssm_norm.data() + g * group, group, eps);
      std::copy(n.begin(), n.end(), normed.begin() + static_cast<ptrdiff_t>(g * group));
    }
    add_residual(x[t], matvec(l.ssm_out, normed, embd));
  }
}

}  // namespace met::testing
