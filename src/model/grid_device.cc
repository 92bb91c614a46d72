// GridDevice (see grid_device.h).
#include "model/grid_device.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cuda/rope_table.h"
#include "backend/cuda/weight_tiling.h"
#include "core/log.h"
#include "tensor/quantize.h"

namespace met {
namespace {

constexpr int32_t kDepth = 2;  // steps in flight

Result<cuda::HdWeightType> weight_type(const GgufTensorInfo& t) {
  switch (t.type) {
    case GgmlType::kF32: return cuda::HdWeightType::kF32;
    case GgmlType::kF16: return cuda::HdWeightType::kF16;
    case GgmlType::kBF16: return cuda::HdWeightType::kBF16;
    case GgmlType::kQ8_0: return cuda::HdWeightType::kQ8_0;
    case GgmlType::kQ4_K: return cuda::HdWeightType::kQ4_K;
    case GgmlType::kQ6_K: return cuda::HdWeightType::kQ6_K;
    default:
      return unimplemented("grid device: tensor '{}' is {}, which it does not read yet", t.name,
                           ggml_type_name(t.type));
  }
}

// The first feature of `model` the grid program does not run, or empty.
std::string unsupported_feature(const Model& model) {
  const ArchTraits& t = model.traits();
  const ModelHParams& hp = model.hparams();
  if (t.qk_norm_full) return "q/k norms over whole rows";
  if (t.moe) return "experts";
  if (t.gated_attention || t.gated_delta || t.mamba2) return "recurrent or gated layers";
  if (t.post_norms || t.no_pre_norms || t.ffn_geglu || t.ffn_relu2) return "its norms or FFN";
  if (t.layer_shapes || t.encoder || t.gpt_oss) return "its layer shapes";
  if (hp.sliding_window != 0) return "sliding windows";
  if (hp.embedding_scale != 0.0f || hp.residual_scale != 0.0f || hp.attention_scale != 0.0f ||
      hp.logit_scale != 0.0f || hp.final_logit_softcap != 0.0f || hp.attn_logit_softcap != 0.0f) {
    return "scales or soft-caps";
  }
  if (!hp.uses_rope || hp.no_rope_layer_step != 0 || hp.rope_sections[0] != 0) return "its rope";
  if (hp.head_dim > static_cast<uint32_t>(cuda::kMaxGridHeadDim)) return "heads past 256 dims";
  if (hp.feed_forward_length == 0) return "layers without a dense FFN";
  return {};
}

}  // namespace

template <typename T>
Result<T*> GridDevice::allocate(int64_t count) {
  MET_ASSIGN_OR_RETURN(void* p, backend_->allocate(static_cast<size_t>(count) * sizeof(T)));
  device_memory_.push_back(p);
  return static_cast<T*>(p);
}

Result<const uint8_t*> GridDevice::upload(std::span<const uint8_t> bytes) {
  MET_ASSIGN_OR_RETURN(uint8_t* p, allocate<uint8_t>(std::ssize(bytes)));
  MET_RETURN_IF_ERROR(backend_->to_device(p, bytes.data(), bytes.size()));
  return p;
}

Result<cuda::MatrixRef> GridDevice::upload_matrix(const std::string& name, int64_t rows, int64_t cols) {
  const GgufTensorInfo* t = model_.file().find_tensor(name);
  if (t == nullptr) return not_found("grid device: tensor '{}' is missing", name);
  if (t->shape.size() != 2 || static_cast<int64_t>(t->shape[0]) != cols || static_cast<int64_t>(t->shape[1]) < rows) {
    return invalid_argument("grid device: tensor '{}' is not {} x {}", name, rows, cols);
  }
  MET_ASSIGN_OR_RETURN(cuda::HdWeightType type, weight_type(*t));
  const auto row_bytes = static_cast<int64_t>(t->num_bytes / t->shape[1]);
  const std::span<const uint8_t> bytes = model_.file().tensor_data(*t).first(static_cast<size_t>(rows * row_bytes));
  MET_ASSIGN_OR_RETURN(const std::optional<cuda::MatrixRef> tiled, upload_tiled(type, bytes, rows, cols));
  if (tiled.has_value()) return *tiled;
  MET_ASSIGN_OR_RETURN(const uint8_t* data, upload(bytes));
  model_.release_mapped_pages(bytes);  // the device holds them now
  return cuda::MatrixRef{type, data, rows, cols, row_bytes};
}

Result<std::optional<cuda::MatrixRef>> GridDevice::upload_tiled(cuda::HdWeightType type,
                                                                 std::span<const uint8_t> bytes, int64_t rows,
                                                                 int64_t cols) {
  using cuda::HdWeightType;
  std::vector<uint8_t> tiled;
  HdWeightType tiled_type = type;
  if (type == HdWeightType::kQ8_0 && cuda::can_tile_q8_0(cols)) {
    tiled_type = HdWeightType::kQ8_0Tiled;
    tiled.resize(bytes.size());
    cuda::tile_q8_0_rows(bytes, cols, tiled);
  } else if (type == HdWeightType::kQ4_K && cuda::can_tile_k_quant(cols)) {
    tiled_type = HdWeightType::kQ4_KTiled;
    tiled.resize(static_cast<size_t>(rows * cuda::q4_k_tiled_row_bytes(cols)));
    cuda::tile_q4_k_rows(bytes, cols, tiled);
  } else if (type == HdWeightType::kQ6_K && cuda::can_tile_k_quant(cols)) {
    tiled_type = HdWeightType::kQ6_KTiled;
    tiled.resize(static_cast<size_t>(rows * cuda::q6_k_tiled_row_bytes(cols)));
    cuda::tile_q6_k_rows(bytes, cols, tiled);
  } else {
    return std::optional<cuda::MatrixRef>{};
  }
  MET_ASSIGN_OR_RETURN(const uint8_t* data, upload(tiled));
  model_.release_mapped_pages(bytes);
  return std::optional<cuda::MatrixRef>{cuda::MatrixRef{tiled_type, data, rows, cols, std::ssize(tiled) / rows}};
}

Result<const float*> GridDevice::upload_vector(const std::string& name, int64_t n) {
  const GgufTensorInfo* t = model_.file().find_tensor(name);
  if (t == nullptr) return not_found("grid device: tensor '{}' is missing", name);
  if (static_cast<int64_t>(t->num_elements) != n) return invalid_argument("grid device: tensor '{}' is not {} long", name, n);
  std::vector<float> values(static_cast<size_t>(n));
  MET_RETURN_IF_ERROR(dequantize_row(t->type, model_.file().tensor_data(*t), values));
  MET_ASSIGN_OR_RETURN(float* p, allocate<float>(n));
  MET_RETURN_IF_ERROR(backend_->to_device(p, values.data(), values.size() * sizeof(float)));
  return p;
}

Status GridDevice::bind_weights() {
  const ModelHParams& hp = model_.hparams();
  const int64_t embd = hp.embedding_length, q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), ff = hp.feed_forward_length;
  MET_ASSIGN_OR_RETURN(const cuda::MatrixRef table, upload_matrix("token_embd.weight", hp.vocab_size, embd));
  grid_.embd_type = table.type;
  grid_.embd_table = table.data;
  grid_.embd_row_bytes = table.row_bytes;
  layers_.resize(hp.num_layers);
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    cuda::GridLayer& l = layers_[i];
    MET_ASSIGN_OR_RETURN(l.attn_norm, upload_vector(b + "attn_norm.weight", embd));
    MET_ASSIGN_OR_RETURN(l.wq, upload_matrix(b + "attn_q.weight", q_dim, embd));
    MET_ASSIGN_OR_RETURN(l.wk, upload_matrix(b + "attn_k.weight", kv_dim, embd));
    MET_ASSIGN_OR_RETURN(l.wv, upload_matrix(b + "attn_v.weight", kv_dim, embd));
    MET_ASSIGN_OR_RETURN(l.wo, upload_matrix(b + "attn_output.weight", embd, q_dim));
    if (model_.traits().qkv_bias) {
      MET_ASSIGN_OR_RETURN(l.bq, upload_vector(b + "attn_q.bias", q_dim));
      MET_ASSIGN_OR_RETURN(l.bk, upload_vector(b + "attn_k.bias", kv_dim));
      MET_ASSIGN_OR_RETURN(l.bv, upload_vector(b + "attn_v.bias", kv_dim));
    }
    if (model_.traits().qk_norm) {
      MET_ASSIGN_OR_RETURN(l.q_norm, upload_vector(b + "attn_q_norm.weight", hp.head_dim));
      MET_ASSIGN_OR_RETURN(l.k_norm, upload_vector(b + "attn_k_norm.weight", hp.head_dim));
    }
    MET_ASSIGN_OR_RETURN(l.ffn_norm, upload_vector(b + "ffn_norm.weight", embd));
    MET_ASSIGN_OR_RETURN(l.gate, upload_matrix(b + "ffn_gate.weight", ff, embd));
    MET_ASSIGN_OR_RETURN(l.up, upload_matrix(b + "ffn_up.weight", ff, embd));
    MET_ASSIGN_OR_RETURN(l.down, upload_matrix(b + "ffn_down.weight", embd, ff));
  }
  grid_.layers = layers_.data();
  MET_ASSIGN_OR_RETURN(grid_.output_norm, upload_vector("output_norm.weight", embd));
  if (model_.file().find_tensor("output.weight") == nullptr) {
    grid_.output = table;  // tied to the embedding
  } else {
    MET_ASSIGN_OR_RETURN(grid_.output, upload_matrix("output.weight", hp.vocab_size, embd));
  }
  return ok_status();
}

Status GridDevice::make_buffers(const GridDeviceOptions& o) {
  const ModelHParams& hp = model_.hparams();
  const int64_t rows = o.limits.max_rows, outs = o.limits.max_outputs;
  const int64_t embd = hp.embedding_length, ff = hp.feed_forward_length;
  MET_ASSIGN_OR_RETURN(scratch_.x, allocate<float>(rows * embd));
  MET_ASSIGN_OR_RETURN(scratch_.xn, allocate<float>(rows * embd));
  MET_ASSIGN_OR_RETURN(scratch_.q, allocate<float>(rows * hp.q_dim()));
  MET_ASSIGN_OR_RETURN(scratch_.k, allocate<float>(rows * hp.kv_dim()));
  MET_ASSIGN_OR_RETURN(scratch_.v, allocate<float>(rows * hp.kv_dim()));
  MET_ASSIGN_OR_RETURN(scratch_.attn, allocate<float>(rows * hp.q_dim()));
  MET_ASSIGN_OR_RETURN(scratch_.tmp, allocate<float>(rows * embd));
  MET_ASSIGN_OR_RETURN(scratch_.gate, allocate<float>(rows * ff));
  MET_ASSIGN_OR_RETURN(scratch_.up, allocate<float>(rows * ff));
  MET_ASSIGN_OR_RETURN(scratch_.out_x, allocate<float>(outs * embd));
  MET_ASSIGN_OR_RETURN(scratch_.logits, allocate<float>(outs * hp.vocab_size));
  capacity_ = cuda::staging_capacity(info_, o.banned_per_output);
  layout_ = cuda::staging_layout(capacity_);
  MET_ASSIGN_OR_RETURN(scratch_.records, allocate<float>(int64_t{capacity_.max_partitions} * hp.num_heads *
                                                         cuda::attn_record_floats(static_cast<int32_t>(hp.head_dim))));
  for (int32_t d = 0; d < kDepth; ++d) {
    MET_ASSIGN_OR_RETURN(argmax_[d], allocate<int32_t>(outs));
    MET_ASSIGN_OR_RETURN(device_staging_[d], allocate<uint8_t>(layout_.total_bytes));
    MET_ASSIGN_OR_RETURN(void* a, backend_->allocate_host(static_cast<size_t>(outs) * sizeof(int32_t)));
    host_memory_.push_back(a);
    host_argmax_[d] = static_cast<int32_t*>(a);
    MET_ASSIGN_OR_RETURN(void* l, backend_->allocate_host(static_cast<size_t>(outs * hp.vocab_size) * sizeof(float)));
    host_memory_.push_back(l);
    host_logits_[d] = static_cast<float*>(l);
    in_flight_[d].kinds.reserve(static_cast<size_t>(outs));
  }
  cuda::GridBackend* backend = backend_.get();
  MET_ASSIGN_OR_RETURN(cuda::StagingRing ring,
                       cuda::StagingRing::create(
                           layout_, kDepth, [backend](size_t bytes) { return backend->allocate_host(bytes); },
                           [backend](void* p) { backend->release_host(p); }));
  ring_ = std::make_unique<cuda::StagingRing>(std::move(ring));
  const std::vector<float> rope = cuda::rope_table(model_.rope_params(), info_.max_context);
  MET_ASSIGN_OR_RETURN(float* table, allocate<float>(std::ssize(rope)));
  MET_RETURN_IF_ERROR(backend_->to_device(table, rope.data(), rope.size() * sizeof(float)));
  grid_.rope_table = table;
  return ok_status();
}

namespace {

DeviceInfo device_info(const ModelHParams& hp, const cpu::KvLayout& kv, int64_t block_bytes,
                       const GridDeviceOptions& o) {
  DeviceInfo info;
  info.vocab_size = static_cast<int32_t>(hp.vocab_size);
  info.num_kv_blocks = o.num_kv_blocks;
  info.kv_block_tokens = cpu::kBlockTokens;
  info.max_context = o.max_context > 0 ? o.max_context : static_cast<int32_t>(hp.context_length);
  info.kv_block_bytes = block_bytes;
  info.kv_dtype = o.kv_dtype;
  info.num_layers = kv.num_layers;
  info.num_kv_heads = kv.num_kv_heads;
  info.head_dim = kv.head_dim;
  info.max_rows = o.limits.max_rows;
  info.max_seqs = o.limits.max_seqs;
  info.max_outputs = o.limits.max_outputs;
  info.hidden_size = static_cast<int32_t>(hp.embedding_length);
  return info;
}

// The program's shapes (its pointers are bound later).
cuda::GridModel grid_shape(const Model& model) {
  const ModelHParams& hp = model.hparams();
  cuda::GridModel g;
  g.num_layers = static_cast<int32_t>(hp.num_layers);
  g.embd = static_cast<int32_t>(hp.embedding_length);
  g.heads = static_cast<int32_t>(hp.num_heads);
  g.kv_heads = static_cast<int32_t>(hp.num_kv_heads);
  g.head_dim = static_cast<int32_t>(hp.head_dim);
  g.ff = static_cast<int32_t>(hp.feed_forward_length);
  g.vocab = static_cast<int32_t>(hp.vocab_size);
  g.rope_dims = static_cast<int32_t>(hp.rope_dims);
  g.neox = model.traits().rope_layout == cpu::RopeLayout::kNeox;
  g.eps = hp.rms_norm_eps;
  g.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  return g;
}

// The CPU's block layout (cpu::KvCache) over a pool at `base`.
cuda::KvView kv_view(const cpu::KvLayout& kv, int64_t block_bytes, uint8_t* base) {
  cuda::KvView v;
  v.base = base;
  v.block_bytes = block_bytes;
  v.row_bytes = kv.dtype == GgmlType::kQ8_0 ? int64_t{kv.head_dim} / cuda::kHdQk * cuda::kHdQ8_0Bytes
                                            : int64_t{kv.head_dim} * (kv.dtype == GgmlType::kF32 ? 4 : 2);
  v.block_tokens = cpu::kBlockTokens;
  v.head_stride = v.block_tokens * v.row_bytes;
  v.kv_stride = kv.num_kv_heads * v.head_stride;
  v.layer_stride = 2 * v.kv_stride;
  v.type = kv.dtype == GgmlType::kF32    ? cuda::HdKvType::kF32
           : kv.dtype == GgmlType::kQ8_0 ? cuda::HdKvType::kQ8_0
                                         : cuda::HdKvType::kF16;
  return v;
}

}  // namespace

int32_t kv_blocks_for_free_memory(int64_t free_bytes, int64_t block_bytes) {
  const int64_t usable = free_bytes - kKvFreeMemoryReserveBytes;
  if (usable <= 0 || block_bytes <= 0) return 0;
  const auto share = static_cast<int64_t>(static_cast<double>(usable) * kKvFreeMemoryShare);
  return static_cast<int32_t>(std::min<int64_t>(share / block_bytes, std::numeric_limits<int32_t>::max()));
}

Status GridDevice::make_kv_pool(cpu::KvLayout kv, int64_t block_bytes) {
  if (kv.num_blocks == 0) {
    const std::optional<int64_t> free = backend_->free_memory_bytes();
    if (!free) {
      return invalid_argument("grid device: the {} backend cannot size the KV pool itself; give it a size",
                              backend_->name());
    }
    kv.num_blocks = kv_blocks_for_free_memory(*free, block_bytes);
    if (kv.num_blocks < 1) {
      return out_of_range("grid device: {:.2f} GiB free after the weights holds no KV block of {} bytes",
                          static_cast<double>(*free) / (1 << 30), block_bytes);
    }
    const int64_t per_seq = (int64_t{info_.max_context} + cpu::kBlockTokens - 1) / cpu::kBlockTokens;
    MET_LOG_INFO("KV pool: {} blocks ({:.2f} GiB) from free device memory: {} sequences of the full {} tokens",
                 kv.num_blocks, static_cast<double>(kv.num_blocks) * static_cast<double>(block_bytes) / (1 << 30),
                 kv.num_blocks / per_seq, info_.max_context);
  }
  MET_ASSIGN_OR_RETURN(const int64_t pool_bytes, cpu::kv_cache_bytes(kv));
  MET_ASSIGN_OR_RETURN(uint8_t* pool, allocate<uint8_t>(pool_bytes));
  info_.num_kv_blocks = kv.num_blocks;
  grid_.kv = kv_view(kv, block_bytes, pool);
  return ok_status();
}

Result<std::unique_ptr<GridDevice>> GridDevice::create(const Model& model, std::unique_ptr<cuda::GridBackend> backend,
                                                       const GridDeviceOptions& options) {
  const std::string missing = unsupported_feature(model);
  if (!missing.empty()) {
    return unimplemented("grid device: {} models with {} do not run on it yet", model.hparams().arch, missing);
  }
  if (options.kv_dtype != GgmlType::kF16 && options.kv_dtype != GgmlType::kF32 &&
      options.kv_dtype != GgmlType::kQ8_0) {
    return unimplemented("grid device: a {} KV cache (F16, F32 or Q8_0 only)", ggml_type_name(options.kv_dtype));
  }
  const ModelHParams& hp = model.hparams();
  const cpu::KvLayout kv{options.kv_dtype, static_cast<int32_t>(hp.num_layers), static_cast<int32_t>(hp.num_kv_heads),
                         static_cast<int32_t>(hp.head_dim), options.num_kv_blocks};
  MET_ASSIGN_OR_RETURN(const int64_t block_bytes, cpu::kv_block_bytes(kv));
  std::unique_ptr<GridDevice> dev(new GridDevice(model, std::move(backend)));
  dev->info_ = device_info(hp, kv, block_bytes, options);
  dev->grid_ = grid_shape(model);
  MET_RETURN_IF_ERROR(dev->bind_weights());
  MET_RETURN_IF_ERROR(dev->make_buffers(options));
  MET_RETURN_IF_ERROR(dev->make_kv_pool(kv, block_bytes));  // last: it may take what the rest left free
  return dev;
}

GridDevice::~GridDevice() {
  for (int32_t d = 0; d < kDepth; ++d) {
    if (in_flight_[d].busy) (void)backend_->wait(in_flight_[d].ticket);
  }
  ring_.reset();
  for (void* p : host_memory_) backend_->release_host(p);
  for (void* p : device_memory_) backend_->release(p);
}

Status GridDevice::check_plan(const StepPlan& plan) const {
  MET_RETURN_IF_ERROR(validate_plan(plan, info_.num_kv_blocks, info_.max_context, info_.kv_block_tokens, 0));
  MET_RETURN_IF_ERROR(validate_state_slots(plan, 0, 0));
  MET_RETURN_IF_ERROR(validate_mtp_chains(plan, 0, 0));
  MET_RETURN_IF_ERROR(validate_adapter_slots(plan, 0));
  if (plan.num_rows() > info_.max_rows || std::ssize(plan.seqs) > info_.max_seqs ||
      std::ssize(plan.outputs) > info_.max_outputs) {
    return out_of_range("grid device: a step of {} rows, {} seqs, {} outputs is past its {}, {}, {}", plan.num_rows(),
                        plan.seqs.size(), plan.outputs.size(), info_.max_rows, info_.max_seqs, info_.max_outputs);
  }
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    if (is_hidden_output(plan.outputs[o].kind)) {
      return unimplemented("grid device: output {} asks for a hidden state, which it does not give yet", o);
    }
  }
  for (size_t r = 0; r < plan.inputs.size(); ++r) {
    if (const auto* fed = std::get_if<FeedFromRow>(&plan.inputs[r])) {
      const int32_t had = last_outputs_.value_or(0);
      if (fed->output_index < 0 || fed->output_index >= had) {
        return invalid_argument("grid device: row {} is fed from output {} of a step that had {}", r,
                                fed->output_index, had);
      }
    }
  }
  return ok_status();
}

cuda::StepView GridDevice::staged_view(const uint8_t* d) const {
  return cuda::StepView{reinterpret_cast<const int32_t*>(d + layout_.tokens),
                        reinterpret_cast<const int32_t*>(d + layout_.feeds),
                        reinterpret_cast<const int32_t*>(d + layout_.positions),
                        reinterpret_cast<const int32_t*>(d + layout_.row_seq),
                        reinterpret_cast<const cuda::PackedSeq*>(d + layout_.seqs),
                        reinterpret_cast<const cuda::PackedOutput*>(d + layout_.outputs),
                        reinterpret_cast<const int32_t*>(d + layout_.banned),
                        reinterpret_cast<const cuda::PackedPartition*>(d + layout_.partitions),
                        reinterpret_cast<const int32_t*>(d + layout_.tables)};
}

Result<Ticket> GridDevice::launch(const StepPlan& plan) {
  MET_RETURN_IF_ERROR(check_plan(plan));
  const uint64_t ticket = next_ticket_;
  const auto slot = static_cast<int32_t>(ticket % kDepth);
  if (in_flight_[slot].busy) return internal_error("grid device: more than {} steps in flight", kDepth);
  MET_ASSIGN_OR_RETURN(const std::span<uint8_t> staging, ring_->acquire(Ticket(ticket)));
  Result<cuda::PackedHeader> header = cuda::pack_plan(plan, capacity_, layout_, 0, staging);
  if (!header.ok()) {
    ring_->release(Ticket(ticket));
    return header.status();
  }
  cuda::GridStep step;
  step.ticket = ticket;
  step.host_staging = staging.data();
  step.device_staging = device_staging_[slot];
  step.staged_bytes = cuda::packed_bytes(layout_, *header);
  step.view = staged_view(device_staging_[slot]);
  step.counts = {header->num_rows, header->num_outputs, header->num_partitions, header->num_seqs};
  step.model = &grid_;
  step.scratch = scratch_;
  step.scratch.argmax = argmax_[slot];
  step.scratch.prev_argmax = argmax_[(slot + 1) % kDepth];
  step.host_argmax = host_argmax_[slot];
  InFlight& f = in_flight_[slot];
  f.kinds.clear();
  bool logits = false;
  for (const OutputRow& o : plan.outputs) {
    f.kinds.push_back(o.kind);
    logits = logits || o.kind == OutputKind::kLogits;
  }
  step.host_logits = logits ? host_logits_[slot] : nullptr;
  const Status launched = backend_->launch(step);
  if (!launched.ok()) {
    ring_->release(Ticket(ticket));
    return launched;
  }
  f.busy = true;
  f.ticket = ticket;
  ++next_ticket_;
  last_outputs_ = header->num_outputs;
  return Ticket(ticket);
}

Status GridDevice::await_result(Ticket ticket, StepResult& out) {
  const auto slot = static_cast<int32_t>(ticket.value() % kDepth);
  InFlight& f = in_flight_[slot];
  if (!f.busy || f.ticket != ticket.value() || ticket.value() != next_await_) {
    return invalid_argument("grid device: step {} is not the oldest in flight", ticket.value());
  }
  const Status waited = backend_->wait(ticket.value());
  f.busy = false;
  ++next_await_;
  ring_->release(ticket);
  MET_RETURN_IF_ERROR(waited);
  const auto outputs = static_cast<int64_t>(f.kinds.size());
  const int64_t vocab = info_.vocab_size;
  out.vocab_size = info_.vocab_size;
  out.argmax.assign(host_argmax_[slot], host_argmax_[slot] + outputs);
  out.logits.resize(static_cast<size_t>(outputs * vocab));
  for (int64_t o = 0; o < outputs; ++o) {
    if (f.kinds[static_cast<size_t>(o)] != OutputKind::kLogits) continue;
    std::copy_n(host_logits_[slot] + o * vocab, vocab, out.logits.begin() + o * vocab);
  }
  out.hidden.clear();
  out.hidden_size = 0;
  out.mtp_argmax.clear();
  out.mtp_chain.clear();
  out.mtp_chain_width = 0;
  out.busy_ns = 0;
  return ok_status();
}

Status GridDevice::read_kv_block(BlockId block, std::span<uint8_t> bytes) {
  if (in_flight_[0].busy || in_flight_[1].busy) return internal_error("grid device: KV read while a step runs");
  if (block.value() < 0 || block.value() >= info_.num_kv_blocks || std::ssize(bytes) != info_.kv_block_bytes) {
    return invalid_argument("grid device: KV block {} of {} bytes", block.value(), bytes.size());
  }
  return backend_->to_host(bytes.data(), grid_.kv.base + block.value() * info_.kv_block_bytes, bytes.size());
}

Status GridDevice::write_kv_block(BlockId block, std::span<const uint8_t> bytes) {
  if (in_flight_[0].busy || in_flight_[1].busy) return internal_error("grid device: KV write while a step runs");
  if (block.value() < 0 || block.value() >= info_.num_kv_blocks || std::ssize(bytes) != info_.kv_block_bytes) {
    return invalid_argument("grid device: KV block {} of {} bytes", block.value(), bytes.size());
  }
  return backend_->to_device(grid_.kv.base + block.value() * info_.kv_block_bytes, bytes.data(), bytes.size());
}

}  // namespace met
