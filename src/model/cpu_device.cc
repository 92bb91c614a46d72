// CpuDevice. Tested by tests/model/cpu_device_test.cc.
#include "model/cpu_device.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "backend/cpu/block_tokens.h"

namespace met {
namespace {

// DeviceInfo::kv_window: the largest layer window when every layer is
// windowed, else 0 (some layer reads the whole context).
int32_t kv_window_of(const ModelHParams& hp) {
  uint32_t window = 0;
  for (uint32_t i = 0; i < hp.num_layers; ++i) {
    if (!hp.layer_is_swa(i)) return 0;
    window = std::max(window, hp.layer_window(i));
  }
  return static_cast<int32_t>(window);
}

// Layers of each kind: the KV cache holds the attention layers only.
int32_t count_layers(const Model& model, LayerKind kind) {
  int32_t n = 0;
  for (const LayerWeights& l : model.weights().layers) n += l.kind == kind ? 1 : 0;
  return n;
}

Result<std::optional<cpu::RecurrentState>> make_state(const Model& model, const CpuDeviceOptions& options) {
  const int32_t num_recurrent = count_layers(model, LayerKind::kGatedDelta) + count_layers(model, LayerKind::kMamba2);
  if (num_recurrent == 0) return std::optional<cpu::RecurrentState>();
  const ModelHParams& hp = model.hparams();
  cpu::RecurrentLayout layout;
  layout.num_layers = num_recurrent;
  layout.conv_floats = static_cast<int64_t>(hp.conv_state_floats());
  layout.ssm_floats = static_cast<int64_t>(hp.ssm_state_floats());
  if (options.num_state_snapshots < 0) return invalid_argument("--state-snapshots must be at least 0");
  layout.num_slots = options.limits.max_seqs + options.num_state_snapshots;
  layout.num_ring_slots = options.limits.max_seqs;
  layout.rollback = options.state_rollback;
  layout.checkpoints = options.state_drafts;
  layout.log_floats = std::max(count_layers(model, LayerKind::kGatedDelta) > 0 ? GatedDeltaLayer::log_floats(hp) : 0,
                               count_layers(model, LayerKind::kMamba2) > 0 ? Mamba2Layer::log_floats(hp) : 0);
  MET_ASSIGN_OR_RETURN(cpu::RecurrentState state, cpu::RecurrentState::create(layout));
  return std::optional<cpu::RecurrentState>(std::move(state));
}

}  // namespace

Result<std::unique_ptr<CpuDevice>> CpuDevice::create(const Model& model, const CpuDeviceOptions& options) {
  if (options.num_threads < 1) return invalid_argument("--threads must be at least 1");
  if (options.num_kv_blocks < 1) return invalid_argument("the KV pool needs at least one block");
  const ModelHParams& hp = model.hparams();
  if (options.forward.mtp && hp.nextn_predict_layers == 0) {
    return invalid_argument("the model has no MTP block (nextn_predict_layers is 0) to draft with");
  }
  cpu::KvLayout layout;
  layout.dtype = options.kv_dtype;
  layout.num_layers = ForwardPass::kv_layers(model, options.forward.mtp);
  layout.num_kv_heads = static_cast<int32_t>(hp.num_kv_heads);
  layout.head_dim = static_cast<int32_t>(hp.head_dim);
  // Chained MTP drafts keep their keys in scratch blocks past the pool's.
  layout.num_blocks = options.num_kv_blocks + ForwardPass::scratch_blocks(options.forward, options.limits);
  MET_ASSIGN_OR_RETURN(cpu::KvCache kv, cpu::KvCache::create(layout));
  MET_ASSIGN_OR_RETURN(std::optional<cpu::RecurrentState> state, make_state(model, options));
  return std::unique_ptr<CpuDevice>(new CpuDevice(model, std::move(kv), std::move(state), options));
}

CpuDevice::CpuDevice(const Model& model, cpu::KvCache kv, std::optional<cpu::RecurrentState> state,
                     const CpuDeviceOptions& options)
    : model_(model),
      kv_(std::move(kv)),
      state_(std::move(state)),
      options_(options),
      pool_(options.num_threads),
      forward_(model.traits().encoder
                   ? nullptr
                   : std::make_unique<ForwardPass>(model, kv_, state_.has_value() ? &*state_ : nullptr,
                                                   options.limits, options.num_threads, options.forward)),
      encoder_(model.traits().encoder ? std::make_unique<EncoderPass>(model, kv_, options.limits, options.num_threads)
                                      : nullptr) {
  pool_.set_phase_profile(options.phase_profile);
  info_.vocab_size = static_cast<int32_t>(model.hparams().vocab_size);
  info_.num_kv_blocks = options.num_kv_blocks;
  info_.kv_block_tokens = cpu::kBlockTokens;
  info_.max_context = static_cast<int32_t>(model.hparams().context_length);
  info_.kv_window = kv_window_of(model.hparams());
  info_.kv_block_bytes = static_cast<int64_t>(kv_.block_bytes());
  info_.kv_dtype = options.kv_dtype;
  info_.num_layers = kv_.layout().num_layers;
  if (state_.has_value()) {
    info_.num_state_slots = state_->layout().num_slots;
    info_.state_slot_bytes = state_->slot_bytes();
    info_.num_state_snapshot_slots = options.num_state_snapshots;
    info_.state_rollback = options.state_rollback;
    info_.state_drafts = options.state_drafts;
    // Without a ring deep enough for the lane, a step advances state it
    // cannot rewind: a launched step always stands.
    if (options.state_rollback < kLaneStateRollback) info_.fed_ahead_policy = FedAheadPolicy::kRepickOnly;
  }
  info_.num_experts = forward_ != nullptr ? forward_->expert_load().num_experts() : 0;
  info_.mtp_chain_seqs = ForwardPass::scratch_blocks(options.forward, options.limits) / 2;
  const int32_t chain = info_.mtp_chain_seqs > 0 ? std::clamp(options.forward.mtp_chain, 0, kMaxMtpChain) : 0;
  info_.mtp_drafts = options.forward.mtp ? 1 + chain : 0;
  info_.num_kv_heads = static_cast<int32_t>(model.hparams().num_kv_heads);
  info_.head_dim = static_cast<int32_t>(model.hparams().head_dim);
  info_.num_adapter_slots = options.forward.max_lora_rank > 0 && encoder_ == nullptr ? options.num_adapter_slots : 0;
  info_.max_lora_rank = info_.num_adapter_slots > 0 ? options.forward.max_lora_rank : 0;
  adapters_.resize(static_cast<size_t>(info_.num_adapter_slots));
  info_.hidden_size = static_cast<int32_t>(model.hparams().embedding_length);
  info_.causal = model.hparams().causal_attention;
  info_.has_head = info_.causal;  // the encoders (BERT family) have no head
  info_.pooling = model.hparams().pooling.value_or(info_.causal ? Pooling::kLast : Pooling::kCls);
  info_.max_rows = options.limits.max_rows;
  info_.max_seqs = options.limits.max_seqs;
  info_.max_outputs = options.limits.max_outputs;
  tokens_.reserve(static_cast<size_t>(options.limits.max_rows));
  thread_ = std::thread([this] { device_main(); });
}

CpuDevice::~CpuDevice() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status CpuDevice::check_plan(const StepPlan& plan) const {
  const ForwardLimits& lim = options_.limits;
  if (plan.num_rows() == 0) return invalid_argument("a step needs at least one row");
  if (plan.num_rows() > lim.max_rows) {
    return invalid_argument("step has {} rows, more than the device's {}", plan.num_rows(), lim.max_rows);
  }
  if (static_cast<int32_t>(plan.outputs.size()) > lim.max_outputs) {
    return invalid_argument("step has {} outputs, more than the device's {}", plan.outputs.size(),
                            lim.max_outputs);
  }
  if (static_cast<int32_t>(plan.seqs.size()) > lim.max_seqs) {
    return invalid_argument("step has {} sequences, more than the device's {}", plan.seqs.size(),
                            lim.max_seqs);
  }
  const int32_t max_context = info_.max_context > 0 ? info_.max_context : INT32_MAX;
  for (size_t i = 0; i < plan.banned.size(); ++i) {
    if (plan.banned[i] < 0 || plan.banned[i] >= info_.vocab_size) {
      return invalid_argument("step bans token {}, outside the vocabulary of {}", plan.banned[i], info_.vocab_size);
    }
  }
  MET_RETURN_IF_ERROR(validate_state_slots(plan, info_.num_state_slots, info_.state_drafts));
  MET_RETURN_IF_ERROR(validate_mtp_chains(plan, std::max(info_.mtp_drafts - 1, 0), info_.mtp_chain_seqs));
  MET_RETURN_IF_ERROR(check_adapters(plan));
  MET_RETURN_IF_ERROR(validate_model_outputs(plan, info_.has_head, info_.causal));
  return validate_plan(plan, info_.num_kv_blocks, max_context, cpu::kBlockTokens, info_.kv_window);
}

Result<Ticket> CpuDevice::launch(const StepPlan& plan) {
  MET_RETURN_IF_ERROR(check_plan(plan));
  const Ticket ticket(next_ticket_++);
  {
    MutexLock lock(mu_);
    std::unique_ptr<Step> step;
    if (!free_steps_.empty()) {
      step = std::move(free_steps_.back());
      free_steps_.pop_back();
    } else {
      step = std::make_unique<Step>();
    }
    step->ticket = ticket;
    copy_plan(plan, step->plan);
    step->adapters.resize(adapters_.size());
    step->adapter_ptrs.resize(adapters_.size());
    for (size_t i = 0; i < adapters_.size(); ++i) {
      step->adapters[i] = adapters_[i];
      step->adapter_ptrs[i] = adapters_[i].get();
    }
    step->done = false;
    steps_.push_back(std::move(step));
  }
  cv_.notify_all();
  return ticket;
}

Status CpuDevice::await_result(Ticket ticket, StepResult& out) {
  MutexLock lock(mu_);
  if (steps_.empty() || steps_.front()->ticket != ticket) {
    return internal_error("await_result: ticket {} is not the oldest step in flight", ticket.value());
  }
  while (!steps_.front()->done) cv_.wait(mu_);
  std::unique_ptr<Step> step = std::move(steps_.front());
  steps_.erase(steps_.begin());
  std::swap(out, step->result);
  Status status = std::move(step->status);
  step->status = ok_status();
  for (auto& a : step->adapters) a.reset();  // an unloaded adapter is freed once no step holds it
  free_steps_.push_back(std::move(step));
  return status;
}

void CpuDevice::device_main() {
  size_t next = 0;  // index in steps_ of the next step to run
  for (;;) {
    Step* step = nullptr;
    {
      MutexLock lock(mu_);
      for (;;) {
        if (stop_) return;
        next = 0;
        while (next < steps_.size() && steps_[next]->done) ++next;
        if (next < steps_.size()) break;
        cv_.wait(mu_);
      }
      step = steps_[next].get();  // stable: only await_result pops, and only done steps
    }
    const auto t0 = std::chrono::steady_clock::now();
    run_step(*step);
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    step->result.busy_ns = ns;
    busy_ns_.fetch_add(ns, std::memory_order_relaxed);
    {
      MutexLock lock(mu_);
      step->done = true;
    }
    cv_.notify_all();
  }
}

void CpuDevice::run_step(Step& step) {
  const StepPlan& plan = step.plan;
  tokens_.resize(static_cast<size_t>(plan.num_rows()));
  for (size_t r = 0; r < plan.inputs.size(); ++r) {
    const RowInput& in = plan.inputs[r];
    if (const auto* t = std::get_if<FeedToken>(&in)) {
      tokens_[r] = t->id;
    } else {
      const auto& f = std::get<FeedFromRow>(in);
      const size_t i = static_cast<size_t>(f.output_index);
      tokens_[r] = i < prev_argmax_.size() ? prev_argmax_[i] : 0;
    }
  }
  if (encoder_ != nullptr) {
    encoder_->prepare_result(plan, step.result);
    pool_.run([&](cpu::ThreadCtx& ctx) { encoder_->run(ctx, plan, tokens_, step.result); });
    prev_argmax_.assign(step.result.argmax.begin(), step.result.argmax.end());
    return;
  }
  forward_->prepare_result(plan, step.result);
  forward_->prepare_adapters(plan, step.adapter_ptrs);
  step.status = forward_->prepare_states(plan);
  if (!step.status.ok()) return;
  pool_.run([&](cpu::ThreadCtx& ctx) { forward_->run(ctx, plan, tokens_, step.result); });
  prev_argmax_.assign(step.result.argmax.begin(), step.result.argmax.end());
}

Status CpuDevice::check_adapters(const StepPlan& plan) const {
  MET_RETURN_IF_ERROR(validate_adapter_slots(plan, info_.num_adapter_slots));
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const int32_t slot = plan.seqs[i].adapter_slot;
    if (slot != kNoAdapterSlot && adapters_[static_cast<size_t>(slot)] == nullptr) {
      return invalid_argument("step plan: seq {} runs adapter slot {}, which holds no adapter", i, slot);
    }
  }
  return ok_status();
}

Status CpuDevice::bind_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) {
  if (slot < 0 || slot >= info_.num_adapter_slots) {
    return invalid_argument("adapter slot {} is outside the device's {}", slot, info_.num_adapter_slots);
  }
  if (adapter != nullptr) {
    if (adapter->max_rank > info_.max_lora_rank) {
      return invalid_argument("adapter '{}' has rank {}; this server runs ranks up to {} (--max-lora-rank)",
                              adapter->name, adapter->max_rank, info_.max_lora_rank);
    }
    if (adapter->layers.size() != model_.hparams().num_layers) {
      return invalid_argument("adapter '{}' has {} layers; the model has {}", adapter->name, adapter->layers.size(),
                              model_.hparams().num_layers);
    }
  }
  adapters_[static_cast<size_t>(slot)] = std::move(adapter);
  return ok_status();
}

Status CpuDevice::read_kv_block(BlockId block, std::span<uint8_t> bytes) {
  if (block.value() < 0 || block.value() >= info_.num_kv_blocks) {
    return invalid_argument("block {} is outside the pool of {}", block.value(), info_.num_kv_blocks);
  }
  if (static_cast<int64_t>(bytes.size()) != kv_.block_bytes()) {
    return invalid_argument("block buffer is {} bytes, a block is {}", bytes.size(), kv_.block_bytes());
  }
  kv_.read_block(block, bytes);
  return ok_status();
}

Status CpuDevice::write_kv_block(BlockId block, std::span<const uint8_t> bytes) {
  if (block.value() < 0 || block.value() >= info_.num_kv_blocks) {
    return invalid_argument("block {} is outside the pool of {}", block.value(), info_.num_kv_blocks);
  }
  if (static_cast<int64_t>(bytes.size()) != kv_.block_bytes()) {
    return invalid_argument("block buffer is {} bytes, a block is {}", bytes.size(), kv_.block_bytes());
  }
  kv_.write_block(block, bytes);
  return ok_status();
}

Status CpuDevice::read_state_slot(StateSlotId slot, int64_t position, std::span<uint8_t> bytes) {
  MET_RETURN_IF_ERROR(check_state_io(slot, bytes.size()));
  if (state_->replayable(slot, position)) MET_RETURN_IF_ERROR(forward_->materialize_state(slot, position));
  MET_ASSIGN_OR_RETURN(std::span<const uint8_t> held, state_->at(slot, position));
  std::memcpy(bytes.data(), held.data(), bytes.size());
  return ok_status();
}

Status CpuDevice::write_state_slot(StateSlotId slot, int64_t position, std::span<const uint8_t> bytes) {
  MET_RETURN_IF_ERROR(check_state_io(slot, bytes.size()));
  if (position < 0) return invalid_argument("state slot {}: a state after {} tokens", slot.value(), position);
  std::memcpy(state_->overwrite(slot, position).data(), bytes.data(), bytes.size());
  return ok_status();
}

Status CpuDevice::check_state_io(StateSlotId slot, size_t num_bytes) const {
  if (!state_.has_value()) return unimplemented("state slot {}: the model keeps no recurrent state", slot.value());
  if (slot.value() < 0 || slot.value() >= info_.num_state_slots) {
    return invalid_argument("state slot {} is outside the pool of {}", slot.value(), info_.num_state_slots);
  }
  if (static_cast<int64_t>(num_bytes) != info_.state_slot_bytes) {
    return invalid_argument("state buffer is {} bytes, a slot is {}", num_bytes, info_.state_slot_bytes);
  }
  return ok_status();
}

}  // namespace met
