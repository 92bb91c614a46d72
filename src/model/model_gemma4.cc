// gemma4's weight binding: each layer at its own head size, KV heads and FFN
// width, shared-KV layers without K/V, optional V and layer output scale,
// and the per-layer embeddings. Tested by tests/model/dense_archs_test.cc.
#include <fmt/format.h>

#include "model/model.h"

namespace met {

Status Model::bind_per_layer_embeddings() {
  const ModelHParams& hp = hparams_;
  const uint64_t pl = hp.embedding_length_per_layer, all = pl * hp.num_layers;
  if (pl == 0) return ok_status();
  MET_ASSIGN_OR_RETURN(weights_.per_layer_token_embd,
                       bind_matrix("per_layer_token_embd.weight", all, hp.vocab_size));
  MET_ASSIGN_OR_RETURN(weights_.per_layer_model_proj,
                       bind_packed("per_layer_model_proj.weight", hp.embedding_length, all));
  MET_ASSIGN_OR_RETURN(weights_.per_layer_proj_norm, bind_vector("per_layer_proj_norm.weight", pl));
  return ok_status();
}

// Q and O always; K, its norm and (when the file has it) V where the layer
// keeps KV; else the layer whose KV it reads.
Status Model::bind_gemma4_layer(uint32_t layer, LayerWeights& l) {
  const ModelHParams& hp = hparams_;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, hd = hp.layer_head_dim(layer), ff = hp.layer_ffn_length(layer);
  const uint64_t q_dim = hd * hp.num_heads, kv_dim = hd * hp.layer_kv_heads(layer);
  MET_ASSIGN_OR_RETURN(l.attn_norm, bind_vector(name("attn_norm.weight"), embd));
  MET_ASSIGN_OR_RETURN(l.wq, bind_packed(name("attn_q.weight"), embd, q_dim));
  MET_ASSIGN_OR_RETURN(l.q_norm, bind_vector(name("attn_q_norm.weight"), hd));
  if (hp.layer_has_kv(layer)) {
    MET_ASSIGN_OR_RETURN(l.wk, bind_packed(name("attn_k.weight"), embd, kv_dim));
    MET_ASSIGN_OR_RETURN(l.wv, bind_packed_or(name("attn_v.weight"), embd, kv_dim, cpu::WeightMatrix{}));
    MET_ASSIGN_OR_RETURN(l.k_norm, bind_vector(name("attn_k_norm.weight"), hd));
  } else {
    l.kv_from = hp.kv_source_layer(layer);
  }
  MET_ASSIGN_OR_RETURN(l.wo, bind_packed(name("attn_output.weight"), q_dim, embd));
  MET_ASSIGN_OR_RETURN(l.attn_post_norm, bind_vector(name("post_attention_norm.weight"), embd));
  MET_ASSIGN_OR_RETURN(l.out_scale, bind_vector_or_null(name("layer_output_scale.weight"), 1));
  l.window = hp.layer_window(layer);
  MET_ASSIGN_OR_RETURN(l.ffn_norm, bind_vector(name("ffn_norm.weight"), embd));
  MET_ASSIGN_OR_RETURN(l.w_gate, bind_packed(name("ffn_gate.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.w_up, bind_packed(name("ffn_up.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.w_down, bind_packed(name("ffn_down.weight"), ff, embd));
  MET_ASSIGN_OR_RETURN(l.ffn_post_norm, bind_vector(name("post_ffw_norm.weight"), embd));
  const uint64_t pl = hp.embedding_length_per_layer;
  if (pl == 0) return ok_status();
  MET_ASSIGN_OR_RETURN(l.pe_gate, bind_packed(name("inp_gate.weight"), embd, pl));
  MET_ASSIGN_OR_RETURN(l.pe_proj, bind_packed(name("proj.weight"), pl, embd));
  MET_ASSIGN_OR_RETURN(l.pe_post_norm, bind_vector(name("post_norm.weight"), embd));
  return ok_status();
}

size_t Model::count_gemma4_matrices() const {
  const ModelHParams& hp = hparams_;
  const bool per_layer = hp.embedding_length_per_layer > 0;
  size_t n = (weights_.tied_output ? 0 : 1) + (per_layer ? 1 : 0);
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    n += 2 + 3 + (per_layer ? 2 : 0);  // q, o; the FFN; the per-layer gate and projection
    if (!hp.layer_has_kv(i)) continue;
    n += file_.find_tensor(fmt::format("blk.{}.attn_v.weight", i)) != nullptr ? 2 : 1;
  }
  return n;
}

}  // namespace met
