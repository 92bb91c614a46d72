// Model's binding of the hybrid recurrent layers: gated delta (qwen35,
// qwen35moe, qwen3next, including qwen3next's legacy ssm_in) and Mamba2
// (granitehybrid, nemotron_h), split from model.cc. Tested by
// tests/model/qwen35_model_test.cc and tests/model/mamba2_model_test.cc.
#include <fmt/format.h>

#include "model/model.h"

namespace met {

Status Model::bind_gated_delta(uint32_t layer, GatedDeltaWeights& g) {
  const ModelHParams& hp = hparams_;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, conv = hp.conv_dim(), value = hp.ssm_value_dim();
  const uint64_t v_heads = hp.ssm_time_step_rank;
  if (arch_ == Arch::kQwen3Next && file_.find_tensor(name("attn_qkv.weight")) == nullptr &&
      file_.find_tensor(name("ssm_in.weight")) != nullptr) {
    MET_RETURN_IF_ERROR(bind_legacy_qkvz(layer, g));
  } else {
    MET_ASSIGN_OR_RETURN(g.wqkv, bind_packed(name("attn_qkv.weight"), embd, conv));
    MET_ASSIGN_OR_RETURN(g.wgate, bind_packed(name("attn_gate.weight"), embd, value));
  }
  MET_ASSIGN_OR_RETURN(g.conv, bind_floats(name("ssm_conv1d.weight"), {hp.ssm_conv_kernel, conv}));
  MET_ASSIGN_OR_RETURN(g.dt_bias, bind_vector(name("ssm_dt.bias"), v_heads));
  MET_ASSIGN_OR_RETURN(g.a, bind_vector(name("ssm_a"), v_heads));
  if (arch_ == Arch::kQwen3Next) {
    MET_ASSIGN_OR_RETURN(g.ba, bind_packed(name("ssm_ba.weight"), embd, 2 * v_heads));
  } else {
    MET_ASSIGN_OR_RETURN(g.beta, bind_packed(name("ssm_beta.weight"), embd, v_heads));
    MET_ASSIGN_OR_RETURN(g.alpha, bind_packed(name("ssm_alpha.weight"), embd, v_heads));
  }
  MET_ASSIGN_OR_RETURN(g.norm, bind_vector(name("ssm_norm.weight"), hp.ssm_state_size));
  MET_ASSIGN_OR_RETURN(g.out, bind_packed(name("ssm_out.weight"), value, embd));
  return ok_status();
}

// qwen3next files converted before llama.cpp split `ssm_in` (as its loader
// still reads them): per key head, its q, k, v and z rows in one matrix.
// Copied here into attn_qkv's order (every q, every k, every v) and
// attn_gate's (every z), so the layer runs one layout.
Status Model::bind_legacy_qkvz(uint32_t layer, GatedDeltaWeights& g) {
  const ModelHParams& hp = hparams_;
  const int64_t d = hp.ssm_state_size, key_heads = hp.ssm_group_count;
  const int64_t values = d * (hp.ssm_time_step_rank / hp.ssm_group_count);  // v (and z) rows per key head
  const int64_t block = 2 * d + 2 * values;
  const std::string name = fmt::format("blk.{}.ssm_in.weight", layer);
  const auto in_rows = static_cast<uint64_t>(key_heads * block);
  MET_ASSIGN_OR_RETURN(cpu::WeightMatrix in, bind_matrix(name, hp.embedding_length, in_rows));
  std::vector<int64_t> qkv, z;
  auto take = [key_heads, block](std::vector<int64_t>& rows, int64_t offset, int64_t count) {
    for (int64_t h = 0; h < key_heads; ++h) {
      for (int64_t r = 0; r < count; ++r) rows.push_back(h * block + offset + r);
    }
  };
  take(qkv, 0, d);
  take(qkv, d, d);
  take(qkv, 2 * d, values);
  take(z, 2 * d + values, values);
  g.wqkv = keep_rows(in, qkv);
  g.wgate = keep_rows(in, z);
  drop_mapped_copy({in.data, static_cast<size_t>(in.rows) * in.row_bytes});
  return ok_status();
}

Status Model::bind_mamba2(uint32_t layer, Mamba2Weights& m) {
  const ModelHParams& hp = hparams_;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, conv = hp.conv_dim(), inner = hp.ssm_inner_size;
  const uint64_t heads = hp.ssm_time_step_rank, groups = hp.ssm_group_count;
  MET_ASSIGN_OR_RETURN(m.in, bind_packed(name("ssm_in.weight"), embd, hp.mamba_in_proj_dim()));
  MET_ASSIGN_OR_RETURN(m.conv, bind_floats(name("ssm_conv1d.weight"), {hp.ssm_conv_kernel, conv}));
  MET_ASSIGN_OR_RETURN(m.conv_bias, bind_vector_or_null(name("ssm_conv1d.bias"), conv));
  MET_ASSIGN_OR_RETURN(m.dt_bias, bind_vector(name("ssm_dt.bias"), heads));
  MET_ASSIGN_OR_RETURN(m.a, bind_floats(name("ssm_a"), {1, heads}));
  MET_ASSIGN_OR_RETURN(m.d, bind_floats(name("ssm_d"), {1, heads}));
  MET_ASSIGN_OR_RETURN(m.norm, bind_floats(name("ssm_norm.weight"), {inner / groups, groups}));
  MET_ASSIGN_OR_RETURN(m.out, bind_packed(name("ssm_out.weight"), inner, embd));
  return ok_status();
}

Status Model::bind_mamba_hybrid_layer(uint32_t layer, LayerWeights& l) {
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  for (const char* bias : {"ffn_gate.bias", "ffn_up.bias", "ffn_down.bias"}) {
    if (file_.find_tensor(name(bias)) != nullptr) {
      return unimplemented("tensor '{}': met runs no FFN biases", name(bias));
    }
  }
  if (hp.layer_is_ffn_only(layer)) {
    l.kind = LayerKind::kFfnOnly;
    MET_ASSIGN_OR_RETURN(l.ffn_norm, bind_vector(name("attn_norm.weight"), embd));
    MET_ASSIGN_OR_RETURN(l.w_up, bind_packed(name("ffn_up.weight"), embd, ff));
    MET_ASSIGN_OR_RETURN(l.w_down, bind_packed(name("ffn_down.weight"), ff, embd));
    return ok_status();
  }
  if (hp.layer_is_recurrent(layer)) {
    l.kind = LayerKind::kMamba2;
    MET_ASSIGN_OR_RETURN(l.attn_norm, bind_vector(name("attn_norm.weight"), embd));
    MET_RETURN_IF_ERROR(bind_mamba2(layer, l.mamba));
  } else {
    MET_RETURN_IF_ERROR(bind_attention(layer, l));
    // llama.cpp reads q/k/v and output biases when the file has them.
    const bool qkv_bias = file_.find_tensor(name("attn_q.bias")) != nullptr ||
                          file_.find_tensor(name("attn_k.bias")) != nullptr ||
                          file_.find_tensor(name("attn_v.bias")) != nullptr;
    if (qkv_bias) {
      MET_ASSIGN_OR_RETURN(l.bq, bind_vector(name("attn_q.bias"), hp.q_dim()));
      MET_ASSIGN_OR_RETURN(l.bk, bind_vector(name("attn_k.bias"), hp.kv_dim()));
      MET_ASSIGN_OR_RETURN(l.bv, bind_vector(name("attn_v.bias"), hp.kv_dim()));
    }
    MET_ASSIGN_OR_RETURN(l.bo, bind_vector_or_null(name("attn_output.bias"), embd));
  }
  if (traits_.ffn_relu2) {  // nemotron_h: a mixer alone
    l.has_ffn = false;
    return ok_status();
  }
  MET_ASSIGN_OR_RETURN(l.ffn_norm, bind_vector(name("ffn_norm.weight"), embd));
  if (traits_.moe) return bind_moe(layer, l.moe);
  MET_ASSIGN_OR_RETURN(l.w_gate, bind_packed(name("ffn_gate.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.w_up, bind_packed(name("ffn_up.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.w_down, bind_packed(name("ffn_down.weight"), ff, embd));
  return ok_status();
}

}  // namespace met
