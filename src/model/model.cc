// Model loading and weight binding. Tested by tests/model/model_test.cc.
#include "model/model.h"

#include <algorithm>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/cpu/kernels/moe_routing.h"
#include "tensor/quantize.h"

namespace met {

ArchTraits arch_traits(Arch arch) {
  ArchTraits t;
  switch (arch) {
    case Arch::kLlama:
    case Arch::kMistral:
      break;
    case Arch::kQwen2:
      t.qkv_bias = true;
      t.rope_layout = cpu::RopeLayout::kNeox;
      break;
    case Arch::kQwen3:
      t.qk_norm = true;
      t.rope_layout = cpu::RopeLayout::kNeox;
      break;
    case Arch::kQwen3Moe:
      t.qk_norm = true;
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.moe = true;
      t.moe_norm_weights = true;  // llama.cpp's qwen3moe graph: norm_w = true
      break;
    case Arch::kMixtral:
      t.moe = true;
      t.moe_norm_weights = true;  // llama.cpp's llama graph: norm_w = true
      break;
    case Arch::kGptOss:
      t.qkv_bias = true;
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.moe = true;
      t.gpt_oss = true;
      t.post_attention_norm = true;
      break;
    case Arch::kQwen35:
    case Arch::kQwen35Moe:
    case Arch::kQwen3Next:
      // IMROPE with text positions: NeoX rope over rope_dims (read_hparams
      // refuses sections that leave a pair unrotated); qwen3next's is NeoX.
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.qk_norm = true;
      t.gated_attention = true;
      t.post_attention_norm = true;
      t.gated_delta = true;
      t.moe = arch != Arch::kQwen35;
      t.moe_norm_weights = t.moe;  // llama.cpp's qwen35moe and qwen3next graphs: norm_w = true
      break;
    case Arch::kGraniteHybrid:
      t.mamba2 = true;  // rope (when hp.uses_rope) is llama.cpp's LLAMA_ROPE_TYPE_NORM
      break;
    case Arch::kNemotronH:
      t.mamba2 = true;  // no rope
      t.ffn_relu2 = true;
      break;
    case Arch::kGranite:
    case Arch::kSmollm3:
      break;  // llama.cpp's LLAMA_ROPE_TYPE_NORM
    case Arch::kGemma2:
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.post_norms = true;
      t.ffn_geglu = true;
      break;
    case Arch::kGemma3:
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.qk_norm = true;
      t.post_norms = true;
      t.ffn_geglu = true;
      break;
    case Arch::kGemma4:
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.qk_norm = true;
      t.post_norms = true;
      t.ffn_geglu = true;
      t.layer_shapes = true;
      break;
    case Arch::kPhi3:
      t.rope_layout = cpu::RopeLayout::kNeox;
      break;
    case Arch::kBert:
      t.encoder = true;
      break;
    case Arch::kNomicBert:
      t.encoder = true;
      t.rope_layout = cpu::RopeLayout::kNeox;
      break;
    case Arch::kOlmo2:
      t.rope_layout = cpu::RopeLayout::kNeox;
      t.qk_norm = true;
      t.qk_norm_full = true;
      t.post_norms = true;
      t.no_pre_norms = true;
      break;
  }
  return t;
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const LoadProgress& progress,
                                           WeightPacking packing) {
  MET_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(path));
  Result<std::unique_ptr<Model>> m = from_file(std::move(file), progress, packing);
  if (!m.ok()) return m.status().with_prefix(path);
  return m;
}

Result<std::unique_ptr<Model>> Model::from_file(GgufFile file, const LoadProgress& progress,
                                                WeightPacking packing) {
  std::unique_ptr<Model> m(new Model(std::move(file)));
  m->packing_ = packing;
  // Only pages of a read-only file mapping may be dropped; an assembled or
  // parsed file's bytes may be owned memory.
  m->file_is_mapped_ = m->file_.is_mapped_file();
  m->progress_ = progress;
  Status s = m->bind();
  m->progress_ = nullptr;
  MET_RETURN_IF_ERROR(s);
  m->fault_in_kept_pages();
  return m;
}

void Model::fault_in_kept_pages() {
  std::vector<std::span<const uint8_t>> kept = std::move(bound_in_place_);
  std::vector<std::span<const uint8_t>> copied = std::move(copied_out_);
  if (!file_is_mapped_) return;
  std::sort(copied.begin(), copied.end(), [](auto a, auto b) { return a.data() < b.data(); });
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uint8_t sum = 0;
  for (std::span<const uint8_t> t : kept) {
    // Copies of a tensor (its experts' too) are disjoint and lie within it:
    // it is kept unless they cover it end to end.
    const uint8_t* at = t.data();
    auto c = std::lower_bound(copied.begin(), copied.end(), at, [](auto x, const uint8_t* p) { return x.data() < p; });
    for (; c != copied.end() && c->data() == at && at < t.data() + t.size(); ++c) at += c->size();
    if (at >= t.data() + t.size()) continue;
    const auto begin = reinterpret_cast<uintptr_t>(t.data()) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(t.data() + t.size());
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);  // one read ahead of the touches
    for (uintptr_t p = begin; p < end; p += page) sum ^= *reinterpret_cast<const volatile uint8_t*>(p);
  }
  asm volatile("" : : "r"(sum));  // the reads stay
}

void Model::drop_mapped_copy(std::span<const uint8_t> bytes) {
  copied_out_.push_back(bytes);
  release_mapped_pages(bytes);
}

void Model::release_mapped_pages(std::span<const uint8_t> bytes) const {
  if (!file_is_mapped_ || bytes.empty()) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) / page * page;
  // A hint: the mapping is read-only and private, so a later read (a test's
  // reference forward) faults the file's bytes back in unchanged.
  if (begin < end) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Result<cpu::WeightMatrix> Model::bind_tensor(const std::string& name, const std::vector<uint64_t>& shape) {
  const GgufTensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) return not_found("tensor '{}' is missing", name);
  if (t->shape != shape) {
    return invalid_argument("tensor '{}' has shape {}, expected [{}]", name, fmt::join(t->shape, ", "),
                            fmt::join(shape, ", "));
  }
  const uint64_t cols = shape[0];
  if (!cpu::matmul_supports(t->type, static_cast<int64_t>(cols))) {
    return unimplemented("tensor '{}' is {}, which met's CPU kernels do not support", name,
                         ggml_type_name(t->type));
  }
  cpu::WeightMatrix w;
  w.type = t->type;
  w.data = file_.tensor_data(*t).data();
  bound_in_place_.push_back(file_.tensor_data(*t));
  w.rows = static_cast<int64_t>(t->num_elements / cols);
  w.cols = static_cast<int64_t>(cols);
  w.row_bytes = *ggml_row_bytes(t->type, cols);
  return w;
}

Result<cpu::WeightMatrix> Model::bind_matrix(const std::string& name, uint64_t cols, uint64_t rows) {
  return bind_tensor(name, {cols, rows});
}

cpu::WeightMatrix Model::pack(cpu::WeightMatrix w) {
  // A matrix whose type has no packed layout is copied as it is: the file's
  // mapping is in 4 KiB pages, the arena in huge ones (huge_page_memory.h).
  if (packing_ == WeightPacking::kForCpu) {
    packed_.push_back(cpu::PackedMatrix::pack(w, cpu::preferred_layout(w.type), arena_));
    // Nothing reads the mapped copy again: drop its pages so resident memory
    // holds the weights once, not twice.
    drop_mapped_copy({w.data, layout_bytes(cpu::WeightLayout::kRows, w.type, w.rows, w.cols)});
    w = packed_.back().matrix();
  }
  if (progress_) progress_(++num_matrices_bound_, num_matrices_total_);
  return w;
}

cpu::WeightMatrix Model::keep_rows(const cpu::WeightMatrix& w, std::span<const int64_t> rows) {
  const cpu::WeightLayout layout = cpu::preferred_layout(w.type);
  if (layout == cpu::WeightLayout::kRows || packing_ == WeightPacking::kNone) {
    packed_.push_back(cpu::PackedMatrix::gather_rows(w, rows, arena_));
  } else {
    cpu::WeightArena scratch;  // the row-major copy lives only until it is packed
    const cpu::PackedMatrix gathered = cpu::PackedMatrix::gather_rows(w, rows, scratch);
    packed_.push_back(cpu::PackedMatrix::pack(gathered.matrix(), layout, arena_));
  }
  if (progress_) progress_(++num_matrices_bound_, num_matrices_total_);
  return packed_.back().matrix();
}

Result<cpu::WeightMatrix> Model::bind_packed(const std::string& name, uint64_t cols, uint64_t rows) {
  MET_ASSIGN_OR_RETURN(cpu::WeightMatrix w, bind_matrix(name, cols, rows));
  return pack(w);
}

Result<cpu::WeightMatrix> Model::bind_packed_or(const std::string& name, uint64_t cols, uint64_t rows,
                                                const cpu::WeightMatrix& fallback) {
  if (file_.find_tensor(name) == nullptr) return fallback;
  return bind_packed(name, cols, rows);
}

Result<std::vector<cpu::WeightMatrix>> Model::bind_experts(const std::string& name, uint64_t cols,
                                                           uint64_t rows, uint64_t experts) {
  MET_ASSIGN_OR_RETURN(cpu::WeightMatrix all, bind_tensor(name, {cols, rows, experts}));
  std::vector<cpu::WeightMatrix> out;
  out.reserve(experts);
  for (uint64_t e = 0; e < experts; ++e) {
    cpu::WeightMatrix w = all;
    w.rows = static_cast<int64_t>(rows);
    w.data = all.data + e * rows * all.row_bytes;
    out.push_back(pack(w));
  }
  return out;
}

Status Model::bind_moe(uint32_t layer, MoeWeights& moe) {
  const ModelHParams& hp = hparams_;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  const uint64_t embd = hp.embedding_length, ff = hp.expert_feed_forward_length, n = hp.expert_count;
  moe.norm_weights = traits_.moe_norm_weights;
  moe.num_used = static_cast<int32_t>(hp.expert_used_count);
  MET_ASSIGN_OR_RETURN(moe.router, bind_matrix(name("ffn_gate_inp.weight"), embd, n));
  MET_ASSIGN_OR_RETURN(moe.gate, bind_experts(name("ffn_gate_exps.weight"), embd, ff, n));
  MET_ASSIGN_OR_RETURN(moe.down, bind_experts(name("ffn_down_exps.weight"), ff, embd, n));
  MET_ASSIGN_OR_RETURN(moe.up, bind_experts(name("ffn_up_exps.weight"), embd, ff, n));
  if (traits_.gpt_oss) {
    moe.gating = MoeGating::kTopKSoftmax;
    moe.activation = MoeActivation::kSwiGluOai;
    MET_ASSIGN_OR_RETURN(moe.router_bias, bind_floats(name("ffn_gate_inp.bias"), {n}));
    MET_ASSIGN_OR_RETURN(moe.gate_bias, bind_floats(name("ffn_gate_exps.bias"), {ff, n}));
    MET_ASSIGN_OR_RETURN(moe.down_bias, bind_floats(name("ffn_down_exps.bias"), {embd, n}));
    MET_ASSIGN_OR_RETURN(moe.up_bias, bind_floats(name("ffn_up_exps.bias"), {ff, n}));
  }
  const uint64_t sh = hp.expert_shared_feed_forward_length;
  moe.has_shared = sh > 0;
  if (!moe.has_shared) return ok_status();
  moe.shared_gated = arch_ != Arch::kGraniteHybrid;
  if (moe.shared_gated) {
    MET_ASSIGN_OR_RETURN(moe.shared_gate_inp, bind_tensor(name("ffn_gate_inp_shexp.weight"), {embd}));
  }
  MET_ASSIGN_OR_RETURN(moe.shared_gate, bind_packed(name("ffn_gate_shexp.weight"), embd, sh));
  MET_ASSIGN_OR_RETURN(moe.shared_up, bind_packed(name("ffn_up_shexp.weight"), embd, sh));
  MET_ASSIGN_OR_RETURN(moe.shared_down, bind_packed(name("ffn_down_shexp.weight"), sh, embd));
  return ok_status();
}

size_t Model::count_matrices() const {
  if (traits_.layer_shapes) return count_gemma4_matrices();
  const ModelHParams& hp = hparams_;
  size_t ffn = 3;
  if (traits_.moe) ffn = 3 * hp.expert_count + (hp.expert_shared_feed_forward_length > 0 ? 3 : 0);
  size_t n = weights_.tied_output ? 0 : 1;
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    if (!traits_.mamba2) {
      n += (hp.layer_is_recurrent(i) ? (arch_ == Arch::kQwen3Next ? 4 : 5) : 4) + ffn;
    } else if (hp.layer_is_ffn_only(i)) {
      n += 2;
    } else {
      n += (hp.layer_is_recurrent(i) ? 2 : 4) + (traits_.ffn_relu2 ? 0 : ffn);
    }
  }
  for (uint32_t i = 0; i < hp.nextn_predict_layers; ++i) {
    const std::string head = fmt::format("blk.{}.nextn.shared_head_head.weight", hp.num_layers + i);
    n += 4 + ffn + 1 + (file_.find_tensor(head) != nullptr ? 1 : 0);
  }
  return n;
}

Result<const float*> Model::bind_vector(const std::string& name, uint64_t n) {
  return bind_floats(name, {n});
}

Result<const float*> Model::bind_vector_or_null(const std::string& name, uint64_t n) {
  if (file_.find_tensor(name) == nullptr) return nullptr;
  return bind_floats(name, {n});
}

Result<const float*> Model::bind_floats(const std::string& name, const std::vector<uint64_t>& shape) {
  const GgufTensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) return not_found("tensor '{}' is missing", name);
  if (t->shape != shape) {
    return invalid_argument("tensor '{}' has shape [{}], expected [{}]", name, fmt::join(t->shape, ", "),
                            fmt::join(shape, ", "));
  }
  const uint64_t n = t->num_elements;
  const auto bytes = file_.tensor_data(*t);
  if (t->type == GgmlType::kF32 && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) == 0) {
    bound_in_place_.push_back(bytes);
    return reinterpret_cast<const float*>(bytes.data());
  }
  std::vector<float> values(n);
  Status s = dequantize_row(t->type, bytes, values);
  if (!s.ok()) return s.with_prefix(fmt::format("tensor '{}'", name));
  owned_vectors_.push_back(std::move(values));
  return owned_vectors_.back().data();
}

Status Model::bind_attention(uint32_t layer, LayerWeights& l) {
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  if (!traits_.no_pre_norms) {
    MET_ASSIGN_OR_RETURN(l.attn_norm, bind_vector(name("attn_norm.weight"), embd));
  }
  const uint64_t q_rows = traits_.gated_attention ? 2 * uint64_t{hp.q_dim()} : hp.q_dim();
  MET_ASSIGN_OR_RETURN(l.wq, bind_packed(name("attn_q.weight"), embd, q_rows));
  MET_ASSIGN_OR_RETURN(l.wk, bind_packed(name("attn_k.weight"), embd, hp.kv_dim()));
  MET_ASSIGN_OR_RETURN(l.wv, bind_packed(name("attn_v.weight"), embd, hp.kv_dim()));
  MET_ASSIGN_OR_RETURN(l.wo, bind_packed(name("attn_output.weight"), hp.q_dim(), embd));
  if (traits_.qkv_bias) {
    MET_ASSIGN_OR_RETURN(l.bq, bind_vector(name("attn_q.bias"), hp.q_dim()));
    MET_ASSIGN_OR_RETURN(l.bk, bind_vector(name("attn_k.bias"), hp.kv_dim()));
    MET_ASSIGN_OR_RETURN(l.bv, bind_vector(name("attn_v.bias"), hp.kv_dim()));
  }
  if (traits_.qk_norm) {
    const bool full = traits_.qk_norm_full;
    MET_ASSIGN_OR_RETURN(l.q_norm, bind_vector(name("attn_q_norm.weight"), full ? hp.q_dim() : hp.head_dim));
    MET_ASSIGN_OR_RETURN(l.k_norm, bind_vector(name("attn_k_norm.weight"), full ? hp.kv_dim() : hp.head_dim));
  }
  if (traits_.post_norms) {
    MET_ASSIGN_OR_RETURN(l.attn_post_norm, bind_vector(name("post_attention_norm.weight"), embd));
  }
  if (traits_.gpt_oss) {
    MET_ASSIGN_OR_RETURN(l.bo, bind_vector(name("attn_output.bias"), embd));
    MET_ASSIGN_OR_RETURN(l.sinks, bind_vector(name("attn_sinks.weight"), hp.num_heads));
  }
  l.window = hp.layer_window(layer);
  return ok_status();
}

Status Model::bind() {
  MET_ASSIGN_OR_RETURN(hparams_, read_hparams(file_.metadata()));
  const std::string& gguf_arch = hparams_.arch;
  std::optional<Arch> arch = parse_arch(gguf_arch);
  if (!arch) {
    return unimplemented("architecture '{}' is not supported (met runs llama, mistral, mixtral, qwen2, qwen3, "
                         "qwen3moe, gpt-oss, qwen35, qwen35moe, qwen3next, granitehybrid, nemotron_h, gemma3, "
                         "granite, smollm3, olmo2, phi3, gemma2, gemma4, bert, nomic-bert)",
                         gguf_arch);
  }
  arch_ = *arch;
  if (arch_ == Arch::kLlama && hparams_.is_moe()) arch_ = Arch::kMixtral;
  traits_ = arch_traits(arch_);
  if (arch_ == Arch::kGraniteHybrid && hparams_.is_moe()) {
    traits_.moe = true;  // llama.cpp's granite-hybrid graph: softmax gating, norm_w = true
    traits_.moe_norm_weights = true;
  }
  if (traits_.moe && !hparams_.is_moe()) return invalid_argument("{} needs {}.expert_count > 0", gguf_arch, gguf_arch);
  if (!traits_.moe && hparams_.is_moe()) {
    return unimplemented("{} with experts ({}.expert_count {}) is not supported", gguf_arch, gguf_arch,
                         hparams_.expert_count);
  }
  if (hparams_.expert_count > static_cast<uint32_t>(cpu::kMaxExperts)) {
    return invalid_argument("{}.expert_count {} is over {}", gguf_arch, hparams_.expert_count, cpu::kMaxExperts);
  }
  if (hparams_.vocab_size == 0) return invalid_argument("the model has no tokenizer.ggml.tokens");
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length, vocab = hp.vocab_size;
  MET_ASSIGN_OR_RETURN(weights_.token_embd, bind_matrix("token_embd.weight", embd, vocab));
  if (traits_.encoder) return bind_encoder();
  MET_ASSIGN_OR_RETURN(weights_.output_norm, bind_vector("output_norm.weight", embd));
  // gemma2 ties them always: llama.cpp's loader never reads its output.weight.
  weights_.tied_output = arch_ == Arch::kGemma2 || file_.find_tensor("output.weight") == nullptr;
  MET_RETURN_IF_ERROR(bind_rope_factors());
  num_matrices_total_ = count_matrices();
  if (weights_.tied_output) {
    weights_.output = weights_.token_embd;
  } else {
    MET_ASSIGN_OR_RETURN(weights_.output, bind_packed("output.weight", embd, vocab));
  }
  if (traits_.layer_shapes) MET_RETURN_IF_ERROR(bind_per_layer_embeddings());
  weights_.layers.resize(hp.num_layers);
  for (uint32_t i = 0; i < hp.num_layers; ++i) MET_RETURN_IF_ERROR(bind_layer(i, weights_.layers[i]));
  weights_.mtp.resize(hp.nextn_predict_layers);
  for (uint32_t i = 0; i < hp.nextn_predict_layers; ++i) {
    MET_RETURN_IF_ERROR(bind_mtp(hp.num_layers + i, weights_.mtp[i]));
  }
  return ok_status();
}

// Llama 3.x's rope_freqs, or phi3's LongRoPE factors: the long ones where
// the model's context is past the original one (what llama.cpp picks at its
// default context, the training one), else the short ones.
Status Model::bind_rope_factors() {
  const ModelHParams& hp = hparams_;
  // gemma4's are its global layers' ([key_length / 2], llama.cpp's shape).
  const uint64_t n = (traits_.layer_shapes ? hp.head_dim_full : hp.rope_dims) / 2;
  MET_ASSIGN_OR_RETURN(weights_.rope_freqs, bind_vector_or_null("rope_freqs.weight", n));
  if (weights_.rope_freqs != nullptr || file_.find_tensor("rope_factors_long.weight") == nullptr) return ok_status();
  const uint32_t original = hp.rope_scaling.original_context_length;
  const bool long_context = original > 0 && hp.context_length > original;
  MET_ASSIGN_OR_RETURN(weights_.rope_freqs,
                       bind_vector(long_context ? "rope_factors_long.weight" : "rope_factors_short.weight", n));
  return ok_status();
}

// Row slices [first, first + rows) of the matrix `name` (cols × total rows),
// each packed as its own matrix: phi3's fused attn_qkv and ffn_up.
Result<std::vector<cpu::WeightMatrix>> Model::bind_row_slices(const std::string& name, uint64_t cols,
                                                             std::span<const uint64_t> rows) {
  uint64_t total = 0;
  for (uint64_t r : rows) total += r;
  MET_ASSIGN_OR_RETURN(cpu::WeightMatrix all, bind_matrix(name, cols, total));
  std::vector<cpu::WeightMatrix> out;
  uint64_t first = 0;
  for (uint64_t r : rows) {
    cpu::WeightMatrix w = all;
    w.rows = static_cast<int64_t>(r);
    w.data = all.data + first * all.row_bytes;
    out.push_back(pack(w));
    first += r;
  }
  return out;
}

// phi3: attention from the fused attn_qkv, the FFN from the fused ffn_up.
Status Model::bind_phi3_layer(uint32_t layer, LayerWeights& l) {
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  if (file_.find_tensor(name("attn_qkv.weight")) == nullptr) {
    MET_RETURN_IF_ERROR(bind_attention(layer, l));  // llama.cpp also takes separate q, k, v
  } else {
    MET_ASSIGN_OR_RETURN(l.attn_norm, bind_vector(name("attn_norm.weight"), embd));
    const uint64_t qkv_rows[] = {hp.q_dim(), hp.kv_dim(), hp.kv_dim()};
    MET_ASSIGN_OR_RETURN(std::vector<cpu::WeightMatrix> qkv,
                         bind_row_slices(name("attn_qkv.weight"), embd, qkv_rows));
    l.wq = qkv[0], l.wk = qkv[1], l.wv = qkv[2];
    MET_ASSIGN_OR_RETURN(l.wo, bind_packed(name("attn_output.weight"), hp.q_dim(), embd));
  }
  MET_ASSIGN_OR_RETURN(l.ffn_norm, bind_vector(name("ffn_norm.weight"), embd));
  const uint64_t gate_up_rows[] = {ff, ff};
  MET_ASSIGN_OR_RETURN(std::vector<cpu::WeightMatrix> gate_up,
                       bind_row_slices(name("ffn_up.weight"), embd, gate_up_rows));
  l.w_gate = gate_up[0], l.w_up = gate_up[1];
  MET_ASSIGN_OR_RETURN(l.w_down, bind_packed(name("ffn_down.weight"), ff, embd));
  return ok_status();
}

Status Model::bind_layer(uint32_t layer, LayerWeights& l) {
  if (traits_.mamba2) return bind_mamba_hybrid_layer(layer, l);
  if (arch_ == Arch::kPhi3) return bind_phi3_layer(layer, l);
  if (traits_.layer_shapes) return bind_gemma4_layer(layer, l);
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.{}", layer, what); };
  if (traits_.gated_delta && hp.layer_is_recurrent(layer)) {
    l.kind = LayerKind::kGatedDelta;
    MET_ASSIGN_OR_RETURN(l.attn_norm, bind_vector(name("attn_norm.weight"), embd));
    MET_RETURN_IF_ERROR(bind_gated_delta(layer, l.gdn));
  } else {
    MET_RETURN_IF_ERROR(bind_attention(layer, l));
  }
  const char* ffn_norm = traits_.post_attention_norm ? "post_attention_norm.weight" : "ffn_norm.weight";
  if (!traits_.no_pre_norms) {
    MET_ASSIGN_OR_RETURN(l.ffn_norm, bind_vector(name(ffn_norm), embd));
  }
  if (traits_.post_norms) {
    MET_ASSIGN_OR_RETURN(l.ffn_post_norm, bind_vector(name("post_ffw_norm.weight"), embd));
  }
  if (traits_.moe) return bind_moe(layer, l.moe);
  MET_ASSIGN_OR_RETURN(l.w_gate, bind_packed(name("ffn_gate.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.w_up, bind_packed(name("ffn_up.weight"), embd, ff));
  MET_ASSIGN_OR_RETURN(l.w_down, bind_packed(name("ffn_down.weight"), ff, embd));
  return ok_status();
}

Status Model::bind_mtp(uint32_t layer, MtpWeights& m) {
  const ModelHParams& hp = hparams_;
  const uint64_t embd = hp.embedding_length, vocab = hp.vocab_size;
  auto name = [layer](std::string_view what) { return fmt::format("blk.{}.nextn.{}", layer, what); };
  MET_RETURN_IF_ERROR(bind_layer(layer, m.block));  // layer >= num_layers: an attention layer
  MET_ASSIGN_OR_RETURN(m.eh_proj, bind_packed(name("eh_proj.weight"), 2 * embd, embd));
  MET_ASSIGN_OR_RETURN(m.enorm, bind_vector(name("enorm.weight"), embd));
  MET_ASSIGN_OR_RETURN(m.hnorm, bind_vector(name("hnorm.weight"), embd));
  m.shared_head_norm = weights_.output_norm;
  if (file_.find_tensor(name("shared_head_norm.weight")) != nullptr) {
    MET_ASSIGN_OR_RETURN(m.shared_head_norm, bind_vector(name("shared_head_norm.weight"), embd));
  }
  m.embed_tokens = weights_.token_embd;
  if (file_.find_tensor(name("embed_tokens.weight")) != nullptr) {
    MET_ASSIGN_OR_RETURN(m.embed_tokens, bind_matrix(name("embed_tokens.weight"), embd, vocab));
  }
  MET_ASSIGN_OR_RETURN(m.shared_head_head,
                       bind_packed_or(name("shared_head_head.weight"), embd, vocab, weights_.output));
  return ok_status();
}

cpu::RopeParams Model::rope_params() const {
  cpu::RopeParams p;
  p.head_dim = static_cast<int32_t>(hparams_.head_dim);
  p.rope_dims = static_cast<int32_t>(hparams_.rope_dims);
  p.freq_base = hparams_.rope_freq_base;
  p.layout = traits_.rope_layout;
  p.freq_factors = weights_.rope_freqs;
  p.attn_factor = hparams_.rope_scaling.attn_factor;
  const RopeScaling& rs = hparams_.rope_scaling;
  switch (rs.kind) {
    case RopeScalingKind::kNone:
      break;
    case RopeScalingKind::kLinear:
      p.freq_scale = 1.0f / rs.factor;
      break;
    case RopeScalingKind::kYarn:
      p.freq_scale = 1.0f / rs.factor;
      p.ext_factor = 1.0f;
      p.original_context = static_cast<int32_t>(rs.original_context_length);
      break;
  }
  return p;
}

uint64_t Model::weight_bytes() const {
  uint64_t n = 0;
  for (const GgufTensorInfo& t : file_.tensors()) n += t.num_bytes;
  return n;
}

}  // namespace met
