// ForwardPass's MTP block (ForwardOptions::mtp; forward_pass.h): the
// model's first nextn block after the trunk on every row (in a step without
// guesses only its keys and values), then the chains
// (StepSeq::mtp_chain). Tested by tests/model/hybrid_model_test.cc and
// tests/model/mtp_chain_test.cc.
#include <algorithm>

#include "backend/cpu/kernels/ops.h"
#include "model/forward_pass.h"
#include "model/linear.h"
#include "backend/cpu/block_tokens.h"

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
  if (!plan.mtp_guesses) {
    // Nothing reads the block's output: only its keys and values, which
    // later rows' guesses attend to, are computed.
    store_kv_only(ctx, layer, plan);
    return;
  }
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
  const int64_t embd = hp.embedding_length;
  const auto [r0, r1] = ctx.split(plan.num_rows());
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t o = row_output_[static_cast<size_t>(r)];
    const TokenId next = o >= 0 ? result.argmax[static_cast<size_t>(o)] : row_next_[static_cast<size_t>(r)];
    float* in = &mtp_in_[static_cast<size_t>(r * 2 * embd)];
    cpu::rms_norm(&x_[static_cast<size_t>(r * embd)], model_.weights().output_norm, embd, hp.rms_norm_eps, in + embd);
    mtp_input_row(next, in + embd, in);
  }
  ctx.barrier();
}

void ForwardPass::mtp_input_row(TokenId next, const float* h, float* in) const {
  const ModelHParams& hp = model_.hparams();
  const MtpWeights& m = model_.weights().mtp[0];
  const int64_t embd = hp.embedding_length;
  cpu::embedding_row(m.embed_tokens.type, m.embed_tokens.data, embd, next, in);
  cpu::rms_norm(in, m.enorm, embd, hp.rms_norm_eps, in);
  cpu::rms_norm(h, m.hnorm, embd, hp.rms_norm_eps, in + embd);
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

// Chain step j of a seq whose last row is at position p: the block at
// position p + j reads [enorm(embedding of its guess from step j - 1);
// hnorm(its hidden state there after shared_head_norm)] (step 0: the row's
// own MTP output), as llama.cpp's draft-mtp feeds h_nextn back. Its keys go
// to the seq's two scratch blocks, which stand in for the blocks from p + 1
// on (the first given a copy of the block layer's slots before p + 1).
void ForwardPass::run_mtp_chain(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result) {
  // Every thread reads the same plan: a step without chains costs no barrier.
  if (std::none_of(plan.seqs.begin(), plan.seqs.end(), [](const StepSeq& s) { return s.mtp_chain > 0; })) return;
  ctx.barrier();  // mtp_output's argmax and out_x_ are read below
  if (ctx.ith() == 0) begin_chain(plan, result);
  ctx.barrier();
  const ModelHParams& hp = model_.hparams();
  const auto layer = static_cast<int>(hp.num_layers);
  const int32_t longest = chain_.empty() ? 0 : chain_.front().length;
  for (int32_t j = 1; j <= longest; ++j) {
    if (ctx.ith() == 0) chain_step_plan(j);
    ctx.barrier();
    const int32_t rows = chain_plan_.num_rows();
    chain_inputs(ctx, rows);
    const Product proj[] = {{&model_.weights().mtp[0].eh_proj, x_.data()}};
    linear(ctx, mtp_in_.data(), rows, 2 * static_cast<int64_t>(hp.embedding_length), proj, act_);
    attention_block(ctx, layer, chain_plan_);
    ffn_block(ctx, layer, rows);
    chain_output(ctx, j, rows, result);
    ctx.barrier();
  }
}

void ForwardPass::begin_chain(const StepPlan& plan, const StepResult& result) {
  chain_.clear();
  for (size_t i = 0; i < plan.seqs.size() && static_cast<int32_t>(chain_.size()) < chain_seqs_; ++i) {
    const StepSeq& s = plan.seqs[i];
    if (s.mtp_chain <= 0) continue;
    const int32_t last = s.row_begin + s.num_rows - 1;
    chain_.push_back(ChainSeq{static_cast<int32_t>(i), row_output_[static_cast<size_t>(last)],
                              std::min(s.mtp_chain, chain_max_), s.num_cached + s.num_rows});
  }
  // Longest first, so chain step j's rows are a prefix (ties in plan order).
  std::sort(chain_.begin(), chain_.end(), [](const ChainSeq& a, const ChainSeq& b) {
    return a.length != b.length ? a.length > b.length : a.seq < b.seq;
  });
  const int32_t layer = kind_index_.back();
  const auto embd = static_cast<size_t>(model_.hparams().embedding_length);
  for (size_t i = 0; i < chain_.size(); ++i) {
    const ChainSeq& c = chain_[i];
    const StepSeq& s = plan.seqs[static_cast<size_t>(c.seq)];
    const BlockId s0(first_scratch_ + 2 * static_cast<int32_t>(i));
    const auto full = static_cast<size_t>(c.first_pos / cpu::kBlockTokens);
    std::vector<BlockId>& table = chain_plan_.seqs[i].block_table;
    assign_block_table(table, std::span<const BlockId>(s.block_table).first(full));
    table.push_back(s0);
    table.push_back(BlockId(s0.value() + 1));
    const int32_t partial = c.first_pos % cpu::kBlockTokens;
    if (partial != 0) kv_.copy_slots(layer, s.block_table[full], s0, partial);
    const float* h = &out_x_[static_cast<size_t>(c.output) * embd];
    std::copy(h, h + embd, &chain_h_[i * embd]);
    chain_tok_[i] = result.mtp_argmax[static_cast<size_t>(c.output)];
  }
}

int32_t ForwardPass::chain_step_plan(int32_t j) {
  chain_plan_.inputs.clear();
  chain_plan_.positions.clear();
  attn_seqs_.clear();
  for (size_t i = 0; i < chain_.size(); ++i) {
    StepSeq& s = chain_plan_.seqs[i];
    const bool runs = chain_[i].length >= j;
    s.row_begin = static_cast<int32_t>(i);
    s.num_rows = runs ? 1 : 0;
    s.num_cached = chain_[i].first_pos + j - 1;
    if (!runs) continue;
    chain_plan_.inputs.push_back(FeedToken{chain_tok_[i]});
    chain_plan_.positions.push_back(s.num_cached);
    attn_seqs_.push_back(cpu::AttnSeq{s.block_table, s.num_cached, s.row_begin, 1, true});
  }
  for (size_t i = chain_.size(); i < chain_plan_.seqs.size(); ++i) chain_plan_.seqs[i].num_rows = 0;
  return chain_plan_.num_rows();
}

void ForwardPass::chain_inputs(cpu::ThreadCtx& ctx, int32_t rows) {
  const int64_t embd = model_.hparams().embedding_length;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    mtp_input_row(chain_tok_[static_cast<size_t>(r)], &chain_h_[static_cast<size_t>(r * embd)],
                  &mtp_in_[static_cast<size_t>(r * 2 * embd)]);
  }
  ctx.barrier();
}

void ForwardPass::chain_output(cpu::ThreadCtx& ctx, int32_t j, int32_t rows, StepResult& result) {
  const ModelHParams& hp = model_.hparams();
  const MtpWeights& m = model_.weights().mtp[0];
  const int64_t embd = hp.embedding_length, vocab = hp.vocab_size;
  {
    const auto [r0, r1] = ctx.split(rows);
    for (int64_t r = r0; r < r1; ++r) {
      float* h = &out_x_[static_cast<size_t>(r * embd)];
      cpu::rms_norm(&x_[static_cast<size_t>(r * embd)], m.shared_head_norm, embd, hp.rms_norm_eps, h);
      std::copy(h, h + embd, &chain_h_[static_cast<size_t>(r * embd)]);
    }
    ctx.barrier();
  }
  const Product head[] = {{&m.shared_head_head, mtp_logits_.data()}};
  linear(ctx, out_x_.data(), rows, embd, head, act_);
  const auto [r0, r1] = ctx.split(rows);
  const auto width = static_cast<size_t>(chain_max_);
  for (int64_t r = r0; r < r1; ++r) {
    const auto token = static_cast<TokenId>(cpu::argmax(&mtp_logits_[static_cast<size_t>(r * vocab)], vocab));
    chain_tok_[static_cast<size_t>(r)] = token;
    result.mtp_chain[static_cast<size_t>(chain_[static_cast<size_t>(r)].output) * width + static_cast<size_t>(j - 1)] =
        token;
  }
}

}  // namespace met
