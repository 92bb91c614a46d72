// Model's binding of the encoders (bert, nomic-bert), split from model.cc.
// Tested by tests/model/encoder_model_test.cc.
#include <fmt/format.h>

#include "model/model.h"

namespace met {

Status Model::bind_encoder() {
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length;
  EncoderWeights& e = weights_.encoder;
  num_matrices_total_ = size_t{hp.num_layers} * 6 + 1;
  if (file_.find_tensor("token_types.weight") != nullptr) {
    if (hp.token_type_count == 0) {
      return invalid_argument("{} has token_types but tokenizer.ggml.token_type_count is 0 or absent", hp.arch);
    }
    MET_ASSIGN_OR_RETURN(e.token_type, bind_floats("token_types.weight", {embd, hp.token_type_count}));
  }
  if (arch_ == Arch::kBert) {
    MET_ASSIGN_OR_RETURN(e.position, bind_matrix("position_embd.weight", embd, hp.context_length));
  }
  MET_ASSIGN_OR_RETURN(e.norm, bind_vector("token_embd_norm.weight", embd));
  MET_ASSIGN_OR_RETURN(e.norm_b, bind_vector("token_embd_norm.bias", embd));
  weights_.layers.resize(hp.num_layers);
  for (uint32_t i = 0; i < hp.num_layers; ++i) MET_RETURN_IF_ERROR(bind_encoder_layer(i, weights_.layers[i]));
  return ok_status();
}

Status Model::bind_encoder_layer(uint32_t layer, LayerWeights& l) {
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  if (file_.find_tensor(name("attn_qkv.weight")) != nullptr) {
    const uint64_t rows[] = {hp.q_dim(), hp.kv_dim(), hp.kv_dim()};
    MET_ASSIGN_OR_RETURN(std::vector<cpu::WeightMatrix> qkv, bind_row_slices(name("attn_qkv.weight"), embd, rows));
    l.wq = qkv[0], l.wk = qkv[1], l.wv = qkv[2];
    if (file_.find_tensor(name("attn_qkv.bias")) != nullptr) {
      MET_ASSIGN_OR_RETURN(const float* b, bind_vector(name("attn_qkv.bias"), hp.q_dim() + 2 * uint64_t{hp.kv_dim()}));
      l.bq = b, l.bk = b + hp.q_dim(), l.bv = b + hp.q_dim() + hp.kv_dim();
    }
  } else {
    MET_ASSIGN_OR_RETURN(l.wq, bind_packed(name("attn_q.weight"), embd, hp.q_dim()));
    MET_ASSIGN_OR_RETURN(l.wk, bind_packed(name("attn_k.weight"), embd, hp.kv_dim()));
    MET_ASSIGN_OR_RETURN(l.wv, bind_packed(name("attn_v.weight"), embd, hp.kv_dim()));
    MET_ASSIGN_OR_RETURN(l.bq, bind_vector_or_null(name("attn_q.bias"), hp.q_dim()));
    MET_ASSIGN_OR_RETURN(l.bk, bind_vector_or_null(name("attn_k.bias"), hp.kv_dim()));
    MET_ASSIGN_OR_RETURN(l.bv, bind_vector_or_null(name("attn_v.bias"), hp.kv_dim()));
    if ((l.bq == nullptr) != (l.bk == nullptr) || (l.bq == nullptr) != (l.bv == nullptr)) {
      return invalid_argument("blk.{}: attn_q, attn_k and attn_v have biases only in part", layer);
    }
  }
  MET_ASSIGN_OR_RETURN(l.wo, bind_packed(name("attn_output.weight"), hp.q_dim(), embd));
  MET_ASSIGN_OR_RETURN(l.bo, bind_vector_or_null(name("attn_output.bias"), embd));
  MET_ASSIGN_OR_RETURN(l.attn_post_norm, bind_vector(name("attn_output_norm.weight"), embd));
  MET_ASSIGN_OR_RETURN(l.attn_post_norm_b, bind_vector(name("attn_output_norm.bias"), embd));
  MET_ASSIGN_OR_RETURN(l.w_up, bind_packed(name("ffn_up.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.b_up, bind_vector_or_null(name("ffn_up.bias"), ff));
  if (arch_ == Arch::kNomicBert) {
    MET_ASSIGN_OR_RETURN(l.w_gate, bind_packed(name("ffn_gate.weight"), embd, ff));
  }
  MET_ASSIGN_OR_RETURN(l.w_down, bind_packed(name("ffn_down.weight"), ff, embd));
  MET_ASSIGN_OR_RETURN(l.b_down, bind_vector_or_null(name("ffn_down.bias"), embd));
  MET_ASSIGN_OR_RETURN(l.ffn_post_norm, bind_vector(name("layer_output_norm.weight"), embd));
  MET_ASSIGN_OR_RETURN(l.ffn_post_norm_b, bind_vector(name("layer_output_norm.bias"), embd));
  return ok_status();
}

}  // namespace met
