// The mixture-of-experts FFN. Tested by tests/model/moe_ffn_test.cc.
#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/kernels/moe_routing.h"
#include "backend/cpu/kernels/ops.h"

namespace met {
namespace {

// Routing, grouping and gathering of up to this many (row, choice) slots run
// on thread 0 alone: two barriers fewer than splitting them (decode).
constexpr int64_t kSerialRouteSlots = 64;

// fn(e, begin, m, c0, c1) for ranges [c0, c1) of the output columns of the
// chosen experts e (those with slots, [begin, begin + m)), claimed guided
// (ThreadCtx::claim_range, in cpu::matmul_claim_tile against the most slots
// an expert has) over the chosen experts' columns end to end,
// never across an expert, so the threads finish within a column tile of
// each other whatever the routing or a core the host slows. (A static half
// of every expert's columns per thread left one thread waiting at the
// closing barrier on most layers at batch 1: the wait outlasted the spin,
// and the sleep and wake-up delayed the ops after it.)
// REQUIRES: thread 0 reset the claims before a barrier preceding the call.
template <class Fn>
void for_each_claimed_expert_range(cpu::ThreadCtx& ctx, const std::vector<int32_t>& offsets,
                                   const cpu::WeightMatrix& w, Fn&& fn) {
  const auto num_experts = static_cast<int32_t>(offsets.size()) - 1;
  const auto slots = [&](int32_t e) { return offsets[static_cast<size_t>(e) + 1] - offsets[static_cast<size_t>(e)]; };
  int64_t chosen = 0, most_slots = 0;
  for (int32_t e = 0; e < num_experts; ++e) {
    chosen += slots(e) > 0 ? 1 : 0;
    most_slots = std::max<int64_t>(most_slots, slots(e));
  }
  const int64_t cols = w.rows;
  const int64_t tile = cpu::matmul_claim_tile(w, most_slots);
  const auto cap = [&](int64_t at) { return (at / cols + 1) * cols; };
  for (;;) {
    const auto [c0, c1] = ctx.claim_range(chosen * cols, tile, cap);
    if (c0 == c1) return;
    int64_t k = c0 / cols;  // the k-th chosen expert: never touch an unchosen one's weights
    int32_t e = 0;
    while (slots(e) == 0 || k-- > 0) ++e;
    const int64_t base = c0 / cols * cols;
    fn(e, offsets[static_cast<size_t>(e)], slots(e), c0 - base, c1 - base);
  }
}

// Asks for floats [p, p + n) in cache ahead of use: a chosen expert's bias
// slice comes from memory (the step's weight stream evicts it), and the
// add that reads it right after the matmul stalled on it (2.6% of CPU time
// on gpt-oss at batch 1).
void prefetch_floats(const float* p, int64_t n) {
  constexpr int64_t kLineFloats = 16;
  for (int64_t i = 0; i < n; i += kLineFloats) __builtin_prefetch(p + i);
}

}  // namespace

MoeFfn::MoeFfn(const ModelHParams& hp, int64_t max_rows)
    : num_experts_(static_cast<int32_t>(hp.expert_count)),
      k_(static_cast<int32_t>(hp.expert_used_count)),
      embd_(hp.embedding_length),
      ff_(hp.expert_feed_forward_length),
      shared_ff_(hp.expert_shared_feed_forward_length),
      embd_act_bytes_(max_activation_row_bytes(embd_)),
      ff_act_bytes_(max_activation_row_bytes(ff_)),
      act_(max_rows, std::max(embd_, shared_ff_)) {
  const auto rows = static_cast<size_t>(max_rows);
  const size_t slots = rows * static_cast<size_t>(k_);
  logits_.resize(rows * static_cast<size_t>(num_experts_ + 1));
  ids_.resize(slots);
  weights_.resize(slots);
  offsets_.resize(static_cast<size_t>(num_experts_) + 1);
  slot_row_.resize(slots);
  pair_slot_.resize(slots);
  for (int s = 0; s < 2; ++s) {
    act_rows_[s].resize(rows * embd_act_bytes_);
    act_slots_[s].resize(slots * embd_act_bytes_);
  }
  act_down_.resize(slots * ff_act_bytes_);
  gate_.resize(slots * static_cast<size_t>(ff_));
  up_.resize(slots * static_cast<size_t>(ff_));
  down_.resize(slots * static_cast<size_t>(embd_));
  sh_gate_.resize(rows * static_cast<size_t>(shared_ff_));
  sh_up_.resize(rows * static_cast<size_t>(shared_ff_));
  sh_down_.resize(shared_ff_ > 0 ? rows * static_cast<size_t>(embd_) : 0);
}

void MoeFfn::route(cpu::ThreadCtx& ctx, const MoeWeights& w, const float* xn, int64_t rows) {
  const int64_t width = num_experts_ + 1;
  if (ctx.ith() == 0) ctx.reset_claims();  // run_experts claims after the barriers below
  const GgmlType gate_type = w.gate[0].type, up_type = w.up[0].type;
  const bool shared_gate = w.has_shared && w.shared_gated;
  {
    // Every input the layer prepares from xn, split by rows, then router
    // logits into columns [0, experts) and the shared gate into the last
    // column of each row: two products over one prepared input.
    const auto [r0, r1] = ctx.split(rows);
    cpu::prepare_activations(w.router.type, xn, embd_, embd_, r0, r1, act_.slot(0));
    if (shared_gate) cpu::prepare_activations(w.shared_gate_inp.type, xn, embd_, embd_, r0, r1, act_.slot(1));
    cpu::prepare_activations(gate_type, xn, embd_, embd_, r0, r1, act_rows_[0].data());
    if (up_type != gate_type) cpu::prepare_activations(up_type, xn, embd_, embd_, r0, r1, act_rows_[1].data());
    ctx.barrier();
    const auto [n0, n1] = ctx.split(w.router.rows, cpu::matmul_column_tile(w.router.type));
    if (n0 < n1) cpu::matmul(w.router, act_.slot(0), rows, logits_.data(), width, n0, n1);
    if (shared_gate && ctx.ith() == ctx.nth() - 1) {
      cpu::matmul(w.shared_gate_inp, act_.slot(1), rows, logits_.data() + num_experts_, width, 0, 1);
    }
    ctx.barrier();
  }
  const bool serial = rows * k_ <= kSerialRouteSlots;
  if (!serial) {
    const auto [r0, r1] = ctx.split(rows);
    route_rows(w, r0, r1);
    ctx.barrier();
  }
  if (ctx.ith() == 0) {
    if (serial) route_rows(w, 0, rows);
    cpu::group_by_expert(ids_.data(), rows, k_, num_experts_, offsets_.data(), slot_row_.data(),
                         pair_slot_.data());
    if (serial) gather_slots(w, 0, rows * k_);
  }
  ctx.barrier();
  if (serial) return;
  const auto [s0, s1] = ctx.split(rows * k_);
  gather_slots(w, s0, s1);
  ctx.barrier();
}

void MoeFfn::route_rows(const MoeWeights& w, int64_t r0, int64_t r1) {
  const int64_t width = num_experts_ + 1;
  for (int64_t r = r0; r < r1; ++r) {
    float* logits = &logits_[static_cast<size_t>(r * width)];
    if (w.router_bias != nullptr) cpu::add(logits, w.router_bias, num_experts_, logits);
    if (w.gating == MoeGating::kTopKSoftmax) {
      cpu::route_top_k_softmax(logits, num_experts_, k_, &ids_[r * k_], &weights_[r * k_]);
    } else {
      cpu::route_top_k(logits, num_experts_, k_, w.norm_weights, &ids_[r * k_], &weights_[r * k_]);
    }
  }
}

void MoeFfn::gather_slots(const MoeWeights& w, int64_t s0, int64_t s1) {
  const GgmlType gate_type = w.gate[0].type, up_type = w.up[0].type;
  cpu::gather_rows(act_rows_[0].data(), cpu::activation_row_bytes(gate_type, embd_), slot_row_.data(), s0, s1,
                   act_slots_[0].data());
  if (up_type != gate_type) {
    cpu::gather_rows(act_rows_[1].data(), cpu::activation_row_bytes(up_type, embd_), slot_row_.data(), s0, s1,
                     act_slots_[1].data());
  }
}

void MoeFfn::run_experts(cpu::ThreadCtx& ctx, const MoeWeights& w, int64_t rows) {
  const bool same_type = w.up[0].type == w.gate[0].type;
  const size_t gate_bytes = cpu::activation_row_bytes(w.gate[0].type, embd_);
  const size_t up_bytes = cpu::activation_row_bytes(w.up[0].type, embd_);
  const uint8_t* up_act = same_type ? act_slots_[0].data() : act_slots_[1].data();
  // Gate and up over the same columns, so this thread can bias and activate
  // its share at once.
  for_each_claimed_expert_range(ctx, offsets_, w.gate[0], [&](int32_t e, int32_t begin, int32_t m, int64_t c0,
                                                               int64_t c1) {
    const auto i = static_cast<size_t>(e);
    if (w.gate_bias != nullptr) {
      prefetch_floats(w.gate_bias + e * ff_ + c0, c1 - c0);
      prefetch_floats(w.up_bias + e * ff_ + c0, c1 - c0);
    }
    cpu::matmul(w.gate[i], act_slots_[0].data() + begin * gate_bytes, m, &gate_[begin * ff_], ff_, c0, c1);
    cpu::matmul(w.up[i], up_act + begin * up_bytes, m, &up_[begin * ff_], ff_, c0, c1);
    activate(w, e, begin, m, c0, c1);
  });
  ctx.barrier();
  const GgmlType down_type = w.down[0].type;
  const size_t down_bytes = cpu::activation_row_bytes(down_type, ff_);
  const auto [s0, s1] = ctx.split(rows * k_);
  if (s0 < s1) cpu::prepare_activations(down_type, gate_.data(), ff_, ff_, s0, s1, act_down_.data());
  if (ctx.ith() == 0) ctx.reset_claims();  // the gate and up claims ended with the barrier above
  ctx.barrier();
  for_each_claimed_expert_range(ctx, offsets_, w.down[0], [&](int32_t e, int32_t begin, int32_t m, int64_t c0,
                                                               int64_t c1) {
    if (w.down_bias != nullptr) prefetch_floats(w.down_bias + e * embd_ + c0, c1 - c0);
    cpu::matmul(w.down[static_cast<size_t>(e)], act_down_.data() + begin * down_bytes, m, &down_[begin * embd_],
                embd_, c0, c1);
    if (w.down_bias == nullptr) return;
    for (int64_t slot = begin; slot < begin + m; ++slot) {
      float* d = &down_[slot * embd_ + c0];
      cpu::add(d, w.down_bias + e * embd_ + c0, c1 - c0, d);
    }
  });
  ctx.barrier();
}

void MoeFfn::activate(const MoeWeights& w, int64_t e, int64_t begin, int64_t m, int64_t c0, int64_t c1) {
  for (int64_t slot = begin; slot < begin + m; ++slot) {
    float* g = &gate_[slot * ff_ + c0];
    float* u = &up_[slot * ff_ + c0];
    if (w.gate_bias != nullptr) {
      cpu::add(g, w.gate_bias + e * ff_ + c0, c1 - c0, g);
      cpu::add(u, w.up_bias + e * ff_ + c0, c1 - c0, u);
    }
    if (w.activation == MoeActivation::kSwiGluOai) {
      cpu::swiglu_oai(g, u, c1 - c0, g);
    } else {
      cpu::swiglu(g, u, c1 - c0, g);
    }
  }
}

void MoeFfn::run_shared(cpu::ThreadCtx& ctx, const MoeWeights& w, const float* xn, int64_t rows) {
  const Product gate_up[] = {{&w.shared_gate, sh_gate_.data()}, {&w.shared_up, sh_up_.data()}};
  linear(ctx, xn, rows, embd_, gate_up, act_);
  {
    const auto [r0, r1] = ctx.split(rows);
    if (r0 < r1) {
      cpu::swiglu(&sh_gate_[r0 * shared_ff_], &sh_up_[r0 * shared_ff_], (r1 - r0) * shared_ff_,
                  &sh_gate_[r0 * shared_ff_]);
    }
    ctx.barrier();
  }
  const Product down[] = {{&w.shared_down, sh_down_.data()}};
  linear(ctx, sh_gate_.data(), rows, shared_ff_, down, act_);
}

void MoeFfn::combine(cpu::ThreadCtx& ctx, const MoeWeights& w, int64_t rows, float* out) {
  const int64_t width = num_experts_ + 1;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    float* y = out + r * embd_;
    cpu::combine_experts(down_.data(), embd_, &pair_slot_[r * k_], &weights_[r * k_], k_, y);
    if (!w.has_shared) continue;
    const float* sh = &sh_down_[r * embd_];
    if (!w.shared_gated) {  // granitehybrid: added whole
      cpu::add(y, sh, embd_, y);
      continue;
    }
    const float g = logits_[static_cast<size_t>(r * width + num_experts_)];
    const float gate = 1.0f / (1.0f + std::exp(-g));
    for (int64_t i = 0; i < embd_; ++i) y[i] += gate * sh[i];
  }
  ctx.barrier();
}

void MoeFfn::run(cpu::ThreadCtx& ctx, const MoeWeights& w, const float* xn, int64_t rows, float* out) {
  route(ctx, w, xn, rows);
  run_experts(ctx, w, rows);
  if (w.has_shared) run_shared(ctx, w, xn, rows);
  combine(ctx, w, rows, out);
}

}  // namespace met
