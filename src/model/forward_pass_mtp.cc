// ForwardPass's MTP block (ForwardOptions::mtp; forward_pass.h): the
// model's first nextn block after the trunk on every row. Tested by
// tests/model/hybrid_model_test.cc.
#include <algorithm>

#include "backend/cpu/kernels/ops.h"
#include "model/forward_pass.h"
#include "model/linear.h"

namespace met {

void ForwardPass::index_mtp_rows(const StepPlan& plan, std::span<const TokenId> tokens) {
  std::fill(row_output_.begin(), row_output_.begin() + plan.num_rows(), -1);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    row_output_[static_cast<size_t>(plan.outputs[o].row)] = static_cast<int32_t>(o);
  }
  for (const StepSeq& s : plan.seqs) {
    for (int32_t i = 0; i < s.num_rows; ++i) {
      const auto r = static_cast<size_t>(s.row_begin + i);
      row_next_[r] = tokens[i + 1 < s.num_rows ? r + 1 : r];
    }
  }
}

void ForwardPass::run_mtp(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result) {
  ctx.barrier();  // output()'s argmax is read below
  const ModelHParams& hp = model_.hparams();
  const int64_t rows = plan.num_rows(), embd = hp.embedding_length;
  mtp_inputs(ctx, plan, result);
  const Product proj[] = {{&model_.weights().mtp[0].eh_proj, x_.data()}};
  linear(ctx, mtp_in_.data(), rows, 2 * embd, proj, act_);
  const auto layer = static_cast<int>(hp.num_layers);
  attention_block(ctx, layer, plan);
  ffn_block(ctx, layer, rows);
  mtp_output(ctx, plan, result);
}

// Row r's input: [enorm(embedding of the token after r); hnorm(output_norm(h_r))].
// The token after r is r's argmax where r has an output, else the next row's
// token in its seq (a prompt chunk's last row without an output has
// neither: its own token stands in, and the block's KV there, which later
// rows attend to, is a wrong pair's: drafts may suffer, outputs never).
void ForwardPass::mtp_inputs(cpu::ThreadCtx& ctx, const StepPlan& plan, const StepResult& result) {
  const ModelHParams& hp = model_.hparams();
  const MtpWeights& m = model_.weights().mtp[0];
  const int64_t embd = hp.embedding_length;
  const auto [r0, r1] = ctx.split(plan.num_rows());
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t o = row_output_[static_cast<size_t>(r)];
    const TokenId next = o >= 0 ? result.argmax[static_cast<size_t>(o)] : row_next_[static_cast<size_t>(r)];
    float* in = &mtp_in_[static_cast<size_t>(r * 2 * embd)];
    cpu::embedding_row(m.embed_tokens.type, m.embed_tokens.data, embd, next, in);
    cpu::rms_norm(in, m.enorm, embd, hp.rms_norm_eps, in);
    cpu::rms_norm(&x_[static_cast<size_t>(r * embd)], model_.weights().output_norm, embd, hp.rms_norm_eps, in + embd);
    cpu::rms_norm(in + embd, m.hnorm, embd, hp.rms_norm_eps, in + embd);
  }
  ctx.barrier();
}

void ForwardPass::mtp_output(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result) {
  const ModelHParams& hp = model_.hparams();
  const MtpWeights& m = model_.weights().mtp[0];
  const int64_t embd = hp.embedding_length, vocab = hp.vocab_size;
  const auto num_out = static_cast<int64_t>(plan.outputs.size());
  {
    const auto [o0, o1] = ctx.split(num_out);
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t r = plan.outputs[static_cast<size_t>(o)].row;
      cpu::rms_norm(&x_[r * embd], m.shared_head_norm, embd, hp.rms_norm_eps, &out_x_[o * embd]);
    }
    ctx.barrier();
  }
  const Product head[] = {{&m.shared_head_head, mtp_logits_.data()}};
  linear(ctx, out_x_.data(), num_out, embd, head, act_);
  const auto [o0, o1] = ctx.split(num_out);
  for (int64_t o = o0; o < o1; ++o) {
    result.mtp_argmax[static_cast<size_t>(o)] =
        static_cast<TokenId>(cpu::argmax(&mtp_logits_[static_cast<size_t>(o * vocab)], vocab));
  }
}

}  // namespace met
